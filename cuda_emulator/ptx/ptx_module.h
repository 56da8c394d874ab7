// The PTX module as the emulator executes it: kernels whose instructions
// were parsed, checked and decoded once at cuModuleLoad time.
//
// Decoding resolves everything that does not depend on a thread: register
// names become indices into the warp's register file, special registers
// (%tid.x, %laneid, ...) become reserved register indices filled when a warp
// starts, symbols become offsets into the param, shared, local or module
// global space, labels become instruction indices. An instruction the
// emulator does not implement is a load error naming it and its PTX line,
// so a kernel never runs with an instruction it would get wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::emu {
struct WarpState;
}

namespace kiln::emu::ptx {

enum class Type : uint8_t {
  kNone,
  kPred,
  kB8, kB16, kB32, kB64, kB128,
  kU8, kU16, kU32, kU64,
  kS8, kS16, kS32, kS64,
  kF16, kF16x2, kBF16, kBF16x2, kF32, kF64,
};
int TypeBits(Type t);  // 1 for pred
bool IsFloat(Type t);  // f16, bf16 (and x2), f32, f64
bool IsSigned(Type t);
std::string_view TypeName(Type t);  // "f32"

enum class Space : uint8_t { kGeneric, kGlobal, kShared, kLocal, kParam, kConst };
std::string_view SpaceName(Space s);

enum class Opcode : uint8_t {
  kMov, kLd, kSt, kCvta, kCvt, kPrmt,
  kAdd, kSub, kMul, kMad, kFma, kDiv, kRem, kAbs, kNeg, kMin, kMax, kCopysign,
  kAddc, kSubc, kMadc,
  kShl, kShr, kAnd, kOr, kXor, kNot, kCnot, kLop3, kShf,
  kPopc, kClz, kBrev, kBfe, kBfi, kBfind, kBmsk,
  kRcp, kSqrt, kRsqrt, kSin, kCos, kLg2, kEx2, kTanh,
  kTestp, kSetp, kSet, kSelp, kSlct,
  kBra, kRet, kExit, kTrap,
  kBar, kBarWarpSync, kMembar,
  kAtom, kRed, kShfl, kVote, kRedux, kActivemask, kMatch,
  kNop,
  kCall,  // call of a .func, inlined into the kernel (see Instruction::call_args)
};

enum class Rounding : uint8_t {
  kNone,
  kRn, kRz, kRm, kRp,       // float rounding
  kRni, kRzi, kRmi, kRpi,   // round to integer
};

enum class CmpOp : uint8_t {
  kNone, kEq, kNe, kLt, kLe, kGt, kGe, kLo, kLs, kHi, kHs,
  kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan,
};
enum class BoolOp : uint8_t { kNone, kAnd, kOr, kXor };
enum class AtomOp : uint8_t { kNone, kAdd, kMin, kMax, kInc, kDec, kAnd, kOr, kXor, kExch, kCas };
enum class ShflMode : uint8_t { kNone, kUp, kDown, kBfly, kIdx };
enum class VoteMode : uint8_t { kNone, kAll, kAny, kUni, kBallot };
enum class TestpMode : uint8_t { kNone, kFinite, kInfinite, kNumber, kNotANumber, kNormal, kSubnormal };
enum class MulMode : uint8_t { kNone, kLo, kHi, kWide };

// The counter class of an instruction (KilnEmuInstructionClass).
enum class InstructionClass : uint8_t { kFp32, kFp64, kFp16, kInteger, kSpecial, kMemory, kControl };

// Reserved register indices after the kernel's own registers: the special
// registers a warp fills when it starts (per lane) and keeps current.
enum class Special : uint8_t {
  kTidX, kTidY, kTidZ, kNtidX, kNtidY, kNtidZ,
  kCtaidX, kCtaidY, kCtaidZ, kNctaidX, kNctaidY, kNctaidZ,
  kLaneid, kWarpid, kNwarpid, kSmid, kNsmid, kGridid,
  kLanemaskEq, kLanemaskLt, kLanemaskLe, kLanemaskGt, kLanemaskGe,
  kClock, kClock64, kGlobaltimer, kDynamicSmemSize, kTotalSmemSize,
  kCount,
};

struct Operand {
  enum class Kind : uint8_t { kNone, kRegister, kImmediate, kAddress, kVector, kLabel, kSink };
  Kind kind = Kind::kNone;
  bool negated = false;  // !%p (predicate operands)
  // kRegister: the register; kAddress: the base register (when
  // address_space_base is kGeneric and symbol_space is kGeneric).
  uint32_t reg = 0;
  // kImmediate: the value's bits in the instruction's type (floats are
  // converted to the operand's format at decode); kAddress: the byte
  // offset added to the base.
  uint64_t imm = 0;
  // kAddress whose base is a symbol: its space and its offset (param,
  // shared, local) or absolute address (global, const) folded into imm.
  bool symbol_base = false;
  // The symbol is the extern dynamic shared array: imm is relative to it
  // until the loader adds the kernel's (aligned) static shared size.
  bool dynamic_shared = false;
  // kRegister naming a special register: reg is the Special until the
  // loader adds the kernel's register count.
  bool special = false;
  // kVector: up to 4 registers ({%r1, %r2}); a '_' sink element and an
  // immediate element (a stored constant: {%r1, 0f00000000}) are ~0u, the
  // immediate's bits in vector_imm with its bit set in vector_imm_mask.
  uint8_t vector_size = 0;
  uint8_t vector_imm_mask = 0;
  uint32_t vector[4] = {0, 0, 0, 0};
  uint64_t vector_imm[4] = {0, 0, 0, 0};
};

struct Modifiers {
  Rounding rounding = Rounding::kNone;
  bool ftz = false, sat = false, approx = false, full = false, uni = false;
  bool nc = false, is_volatile = false, carry_in = false, carry_out = false;
  bool shift_wrap = false, shift_left = false;  // shf.{l,r}.{wrap,clamp}, bmsk.{wrap,clamp}
  bool relu = false, nan = false, xorsign = false, abs = false;
  uint8_t vector = 1;  // .v2, .v4
  Space space = Space::kGeneric;
  CmpOp cmp = CmpOp::kNone;
  BoolOp bool_op = BoolOp::kNone;
  AtomOp atom = AtomOp::kNone;
  ShflMode shfl = ShflMode::kNone;
  VoteMode vote = VoteMode::kNone;
  TestpMode testp = TestpMode::kNone;
  MulMode mul = MulMode::kNone;
  uint8_t prmt_mode = 0;  // 0 = default; else .f4e .b4e .rc8 .ecl .ecr .rc16 (1..6)
};

struct Instruction;
// The decoded operation: runs the instruction for the lanes in `mask`
// (guard already applied). Returns false when it stopped with an error that
// the warp recorded (memcheck, trap, ...).
using Handler = bool (*)(WarpState& warp, const Instruction& inst, uint32_t mask);

struct Instruction {
  Handler handler = nullptr;
  Opcode opcode = Opcode::kNop;
  Type type = Type::kNone;   // the instruction's (first) type
  Type type2 = Type::kNone;  // cvt's source, setp/set's compared type, ...
  Modifiers mod;
  InstructionClass cls = InstructionClass::kControl;
  int32_t guard = -1;  // predicate register, or -1
  bool guard_negated = false;
  uint8_t num_dst = 0, num_src = 0;
  Operand dst[2];  // setp p|q; vector destinations use one kVector operand
  Operand src[4];
  uint32_t target = 0;  // kBra: instruction index
  uint32_t line = 0;    // PTX source line (1-based)
  std::string text;     // the instruction as written, for error messages
  // kRet inside an inlined .func: return to the caller, not exit.
  bool returns_to_caller = false;
  // kCall: byte copies within the thread's local memory, where call-site
  // .param variables and the callee's parameters and return values live:
  // arguments before the jump to `target`, results on return.
  struct LocalCopy {
    uint32_t from = 0, to = 0, size = 0;
  };
  std::vector<LocalCopy> call_args, call_results;
  // A kCall of a function the driver provides to every module, as it does
  // vprintf (ptxas resolves it in whole-program compiles): the device
  // runtime's cudaGraphSetConditional. call_args[i].from are its
  // arguments' call-site slots.
  enum class Builtin : uint8_t { kNone, kGraphSetConditional } builtin = Builtin::kNone;
};

struct Parameter {
  std::string name;
  uint32_t offset = 0;  // in the param buffer
  uint32_t size = 0;
  uint32_t align = 1;
};

struct Kernel {
  std::string name;
  std::vector<Parameter> params;
  uint32_t param_bytes = 0;
  std::vector<Instruction> code;
  uint32_t num_registers = 0;       // decoded register slots (before specials)
  uint32_t declared_registers = 0;  // 32-bit registers the PTX declares
  // Per decoded register slot: its 32-bit units (0 for predicates, 2 for
  // 64-bit registers).
  std::vector<uint8_t> register_units;
  // The registers a register allocator needs per thread: the peak of
  // simultaneously live register units (exec/register_pressure.h); what
  // occupancy and CU_FUNC_ATTRIBUTE_NUM_REGS use. PTX declares a fresh
  // virtual register per value, so declared_registers overstates it.
  uint32_t allocated_registers = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t local_bytes = 0;  // per thread
  bool uses_dynamic_shared = false;
  // .maxntid / .reqntid when present (0 = none).
  uint32_t max_threads = 0;
  uint32_t required_block[3] = {0, 0, 0};
  // Register index of special register s.
  uint32_t SpecialRegister(Special s) const {
    return num_registers + static_cast<uint32_t>(s);
  }
  uint32_t register_file_size() const {
    return num_registers + static_cast<uint32_t>(Special::kCount);
  }
};

// Module-scope variables (.global / .const) live in memory the module owns;
// memcheck knows them as allocations (the driver registers them).
struct GlobalVariable {
  std::string name;
  Space space = Space::kGlobal;
  uint32_t align = 1;
  std::vector<uint8_t> initializer;  // the variable's bytes
  uint64_t address = 0;              // set once placed
};

struct Module {
  std::string target;  // "sm_90"
  int ptx_version = 0;  // 80 for ".version 8.0"
  int address_size = 64;
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::unique_ptr<GlobalVariable>> globals;

  const Kernel* FindKernel(std::string_view name) const;
};

// Parses and decodes PTX text. `place_global` receives each module variable
// and returns the device address for it (the driver allocates and registers
// it); every symbol reference is resolved against the result. Errors are
// one line: "PTX line 42: unknown instruction 'foo.bar.f32'".
// A call of cudaGraphSetConditional that the module declares .extern is
// the driver's (Instruction::Builtin).
using GlobalPlacer = std::function<StatusOr<uint64_t>(const GlobalVariable&)>;
StatusOr<std::unique_ptr<Module>> LoadModule(std::string_view ptx_text,
                                             const GlobalPlacer& place_global);

}  // namespace kiln::emu::ptx
