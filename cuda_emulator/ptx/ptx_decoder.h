// PtxDecoder: one parsed PTX instruction (opcode, modifiers, operand
// spellings) to a decoded Instruction with resolved registers, symbols and
// immediates and the handler that executes it. Internal to the PTX loader.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu::ptx {

struct RawOperand {
  enum class Kind : uint8_t { kName, kNumber, kAddress, kVector, kSink };
  Kind kind = Kind::kName;
  bool negated = false;       // !%p
  bool minus = false;         // -1 (kNumber)
  std::string_view text;      // register/symbol/label name or number spelling
  std::string_view pipe;      // %p|%q: the second name
  // kAddress: [base + offset]; base may be empty (an absolute address).
  std::string_view base;
  int64_t offset = 0;
  std::vector<std::string_view> elements;  // kVector
  std::vector<bool> element_minus;         // kVector: -N immediates ({-1, 0})
};

struct RawInstruction {
  std::string_view guard;  // "%p1", empty when unguarded
  bool guard_negated = false;
  std::string_view opcode;
  std::vector<std::string_view> modifiers;  // ".global", ".f32", ...
  std::vector<RawOperand> operands;
  uint32_t line = 0;
  std::string text;  // for messages
};

// A variable declaration (.shared/.local/.global/.const), before placement.
struct VariableDecl {
  std::string name;
  uint32_t align = 1;
  uint64_t size = 0;
  bool unsized = false;  // 'x[]': extern dynamic shared memory
  std::vector<uint8_t> initializer;
};

template <typename V>
using NameMap = std::map<std::string, V, std::less<>>;

// What a name in an operand refers to inside one kernel.
struct SymbolTable {
  std::vector<NameMap<uint32_t>> scopes;  // registers, outermost first
  NameMap<uint32_t> params;              // name -> param offset
  NameMap<uint32_t> shared;              // name -> offset in the block's static shared
  NameMap<uint32_t> local;               // name -> offset in the thread's local memory
  NameMap<uint64_t> globals;             // name -> device address (.global, .const)
  std::string dynamic_shared;            // the extern .shared array's name, if any
  // Module-scope .shared variables: placed in a kernel's static shared
  // memory when the kernel first names one.
  const NameMap<VariableDecl>* module_shared = nullptr;
  Kernel* kernel = nullptr;

  // Register index of `name` (innermost scope first), or -1.
  int64_t FindRegister(std::string_view name) const;
  // The shared-space offset of `name` (placing a module-scope variable on
  // first use); nullopt when it is no shared variable. The dynamic array
  // resolves to UINT32_MAX: it starts after the static part, whose size is
  // known once the whole kernel is decoded.
  std::optional<uint32_t> SharedOffset(std::string_view name);

  // What a symbol names: its space and its offset there (the absolute
  // address for .global/.const); the dynamic shared array has offset 0 and
  // dynamic_shared set.
  struct Symbol {
    Space space = Space::kGlobal;
    uint64_t offset = 0;
    bool dynamic_shared = false;
  };
  std::optional<Symbol> Resolve(std::string_view name);
};

// Decodes `raw`; a branch target is left as a label name in *label for the
// caller to resolve. Errors: "PTX line N: unknown instruction 'x' in '<text>'".
Status DecodeInstruction(const RawInstruction& raw, SymbolTable& symbols, Instruction* out,
                         std::string* label);

}  // namespace kiln::emu::ptx
