// PtxDecoder: see ptx_decoder.h. Modifiers are read in the context of their
// opcode (".and" is a boolean combine on setp and an operation on atom), and
// every modifier the emulator does not implement is an error: executing an
// instruction while ignoring part of its meaning would be a wrong answer.
// Modifiers that only tune caching or memory ordering (".L2::cache_hint",
// ".relaxed", ".gpu", ...) are accepted: the emulator's memory is coherent
// and its atomics sequentially consistent, which satisfies every ordering.
#include "cuda_emulator/ptx/ptx_decoder.h"

#include <cctype>
#include <cstring>

#include "cuda_emulator/exec/warp_state.h"

namespace kiln::emu::ptx {
namespace {

struct Named {
  std::string_view name;
  int value;
};

template <size_t N>
int Lookup(const Named (&table)[N], std::string_view name, int missing = -1) {
  for (const Named& n : table)
    if (n.name == name) return n.value;
  return missing;
}

const Named kOpcodes[] = {
    {"mov", int(Opcode::kMov)},       {"ld", int(Opcode::kLd)},
    {"ldu", int(Opcode::kLd)},        {"st", int(Opcode::kSt)},
    {"cvta", int(Opcode::kCvta)},     {"cvt", int(Opcode::kCvt)},
    {"prmt", int(Opcode::kPrmt)},     {"add", int(Opcode::kAdd)},
    {"sub", int(Opcode::kSub)},       {"mul", int(Opcode::kMul)},
    {"mad", int(Opcode::kMad)},       {"fma", int(Opcode::kFma)},
    {"div", int(Opcode::kDiv)},       {"rem", int(Opcode::kRem)},
    {"abs", int(Opcode::kAbs)},       {"neg", int(Opcode::kNeg)},
    {"min", int(Opcode::kMin)},       {"max", int(Opcode::kMax)},
    {"copysign", int(Opcode::kCopysign)}, {"addc", int(Opcode::kAddc)},
    {"subc", int(Opcode::kSubc)},     {"madc", int(Opcode::kMadc)},
    {"shl", int(Opcode::kShl)},       {"shr", int(Opcode::kShr)},
    {"and", int(Opcode::kAnd)},       {"or", int(Opcode::kOr)},
    {"xor", int(Opcode::kXor)},       {"not", int(Opcode::kNot)},
    {"cnot", int(Opcode::kCnot)},     {"lop3", int(Opcode::kLop3)},
    {"shf", int(Opcode::kShf)},       {"popc", int(Opcode::kPopc)},
    {"clz", int(Opcode::kClz)},       {"brev", int(Opcode::kBrev)},
    {"bfe", int(Opcode::kBfe)},       {"bfi", int(Opcode::kBfi)},
    {"bfind", int(Opcode::kBfind)},   {"bmsk", int(Opcode::kBmsk)},
    {"rcp", int(Opcode::kRcp)},
    {"sqrt", int(Opcode::kSqrt)},     {"rsqrt", int(Opcode::kRsqrt)},
    {"sin", int(Opcode::kSin)},       {"cos", int(Opcode::kCos)},
    {"lg2", int(Opcode::kLg2)},       {"ex2", int(Opcode::kEx2)},
    {"tanh", int(Opcode::kTanh)},     {"testp", int(Opcode::kTestp)},
    {"setp", int(Opcode::kSetp)},     {"set", int(Opcode::kSet)},
    {"selp", int(Opcode::kSelp)},     {"slct", int(Opcode::kSlct)},
    {"bra", int(Opcode::kBra)},       {"ret", int(Opcode::kRet)},
    {"exit", int(Opcode::kExit)},     {"trap", int(Opcode::kTrap)},
    {"bar", int(Opcode::kBar)},       {"barrier", int(Opcode::kBar)},
    {"membar", int(Opcode::kMembar)}, {"fence", int(Opcode::kMembar)},
    {"atom", int(Opcode::kAtom)},     {"red", int(Opcode::kRed)},
    {"shfl", int(Opcode::kShfl)},     {"vote", int(Opcode::kVote)},
    {"redux", int(Opcode::kRedux)},   {"activemask", int(Opcode::kActivemask)},
    {"match", int(Opcode::kMatch)},   {"nanosleep", int(Opcode::kNop)},
    {"prefetch", int(Opcode::kNop)},  {"prefetchu", int(Opcode::kNop)},
    {"pmevent", int(Opcode::kNop)},
};

const Named kTypes[] = {
    {".pred", int(Type::kPred)},   {".b8", int(Type::kB8)},       {".b16", int(Type::kB16)},
    {".b32", int(Type::kB32)},     {".b64", int(Type::kB64)},     {".b128", int(Type::kB128)},
    {".u8", int(Type::kU8)},       {".u16", int(Type::kU16)},     {".u32", int(Type::kU32)},
    {".u64", int(Type::kU64)},     {".s8", int(Type::kS8)},       {".s16", int(Type::kS16)},
    {".s32", int(Type::kS32)},     {".s64", int(Type::kS64)},     {".f16", int(Type::kF16)},
    {".f16x2", int(Type::kF16x2)}, {".bf16", int(Type::kBF16)},   {".bf16x2", int(Type::kBF16x2)},
    {".f32", int(Type::kF32)},     {".f64", int(Type::kF64)},
};

const Named kRoundings[] = {
    {".rn", int(Rounding::kRn)},   {".rz", int(Rounding::kRz)},   {".rm", int(Rounding::kRm)},
    {".rp", int(Rounding::kRp)},   {".rni", int(Rounding::kRni)}, {".rzi", int(Rounding::kRzi)},
    {".rmi", int(Rounding::kRmi)}, {".rpi", int(Rounding::kRpi)},
};

const Named kCompares[] = {
    {".eq", int(CmpOp::kEq)},   {".ne", int(CmpOp::kNe)},   {".lt", int(CmpOp::kLt)},
    {".le", int(CmpOp::kLe)},   {".gt", int(CmpOp::kGt)},   {".ge", int(CmpOp::kGe)},
    {".lo", int(CmpOp::kLo)},   {".ls", int(CmpOp::kLs)},   {".hi", int(CmpOp::kHi)},
    {".hs", int(CmpOp::kHs)},   {".equ", int(CmpOp::kEqu)}, {".neu", int(CmpOp::kNeu)},
    {".ltu", int(CmpOp::kLtu)}, {".leu", int(CmpOp::kLeu)}, {".gtu", int(CmpOp::kGtu)},
    {".geu", int(CmpOp::kGeu)}, {".num", int(CmpOp::kNum)}, {".nan", int(CmpOp::kNan)},
};

const Named kAtomOps[] = {
    {".add", int(AtomOp::kAdd)}, {".min", int(AtomOp::kMin)},   {".max", int(AtomOp::kMax)},
    {".inc", int(AtomOp::kInc)}, {".dec", int(AtomOp::kDec)},   {".and", int(AtomOp::kAnd)},
    {".or", int(AtomOp::kOr)},   {".xor", int(AtomOp::kXor)},   {".exch", int(AtomOp::kExch)},
    {".cas", int(AtomOp::kCas)},
};

const Named kSpaces[] = {
    {".global", int(Space::kGlobal)},       {".shared", int(Space::kShared)},
    {".shared::cta", int(Space::kShared)},  {".local", int(Space::kLocal)},
    {".param", int(Space::kParam)},         {".param::entry", int(Space::kParam)},
    {".param::func", int(Space::kParam)},   {".const", int(Space::kConst)},
};

const Named kSpecials[] = {
    {"%tid.x", int(Special::kTidX)},         {"%tid.y", int(Special::kTidY)},
    {"%tid.z", int(Special::kTidZ)},         {"%ntid.x", int(Special::kNtidX)},
    {"%ntid.y", int(Special::kNtidY)},       {"%ntid.z", int(Special::kNtidZ)},
    {"%ctaid.x", int(Special::kCtaidX)},     {"%ctaid.y", int(Special::kCtaidY)},
    {"%ctaid.z", int(Special::kCtaidZ)},     {"%nctaid.x", int(Special::kNctaidX)},
    {"%nctaid.y", int(Special::kNctaidY)},   {"%nctaid.z", int(Special::kNctaidZ)},
    {"%laneid", int(Special::kLaneid)},      {"%warpid", int(Special::kWarpid)},
    {"%nwarpid", int(Special::kNwarpid)},    {"%smid", int(Special::kSmid)},
    {"%nsmid", int(Special::kNsmid)},        {"%gridid", int(Special::kGridid)},
    {"%lanemask_eq", int(Special::kLanemaskEq)}, {"%lanemask_lt", int(Special::kLanemaskLt)},
    {"%lanemask_le", int(Special::kLanemaskLe)}, {"%lanemask_gt", int(Special::kLanemaskGt)},
    {"%lanemask_ge", int(Special::kLanemaskGe)}, {"%clock", int(Special::kClock)},
    {"%clock64", int(Special::kClock64)},    {"%globaltimer", int(Special::kGlobaltimer)},
    {"%dynamic_smem_size", int(Special::kDynamicSmemSize)},
    {"%total_smem_size", int(Special::kTotalSmemSize)},
};

// Modifiers that change nothing an emulator can observe: caching, eviction
// and prefetch hints, memory-ordering semantics and scopes (all accesses
// here are coherent and atomics sequentially consistent), and alignment
// promises that are checked anyway.
bool IsIgnoredModifier(std::string_view m) {
  static const std::string_view kIgnored[] = {
      ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt", ".weak", ".relaxed", ".acquire",
      ".release", ".acq_rel", ".sc", ".mmio", ".cta", ".gpu", ".sys", ".cluster", ".gl",
      ".sync", ".aligned", ".noftz", ".unified",
  };
  for (std::string_view i : kIgnored)
    if (m == i) return true;
  // .L1::evict_last, .L2::cache_hint, .L2::64B, ...
  return m.rfind(".L1::", 0) == 0 || m.rfind(".L2::", 0) == 0;
}

class Decoder {
 public:
  Decoder(const RawInstruction& raw, SymbolTable& symbols, Instruction* out)
      : raw_(raw), sym_(symbols), in_(*out) {}
  Status Run(std::string* label);

 private:
  Status Fail(const std::string& what) const {
    return Error("PTX line " + std::to_string(raw_.line) + ": " + what + " in '" + raw_.text + "'");
  }
  Status Modifiers();
  Status Operand(const RawOperand& raw, ptx::Operand* out, bool is_address_space_value = false);
  Status Immediate(const RawOperand& raw, ptx::Operand* out);
  Status Operands(std::string* label);
  void Classify();

  const RawInstruction& raw_;
  SymbolTable& sym_;
  Instruction& in_;
  std::vector<Type> types_;
  bool cvta_to_ = false;
  bool warp_barrier_ = false;
};

Status Decoder::Modifiers() {
  const Opcode op = in_.opcode;
  ptx::Modifiers& m = in_.mod;
  for (std::string_view s : raw_.modifiers) {
    if (int t = Lookup(kTypes, s); t >= 0) {
      types_.push_back(static_cast<Type>(t));
      continue;
    }
    if (int r = Lookup(kRoundings, s); r >= 0) {
      m.rounding = static_cast<Rounding>(r);
      continue;
    }
    if (int sp = Lookup(kSpaces, s); sp >= 0) {
      m.space = static_cast<Space>(sp);
      continue;
    }
    if (op == Opcode::kSetp || op == Opcode::kSet) {
      if (int c = Lookup(kCompares, s); c >= 0) {
        m.cmp = static_cast<CmpOp>(c);
        continue;
      }
      if (s == ".and" || s == ".or" || s == ".xor") {
        m.bool_op = s == ".and" ? BoolOp::kAnd : s == ".or" ? BoolOp::kOr : BoolOp::kXor;
        continue;
      }
    }
    if (op == Opcode::kAtom || op == Opcode::kRed || op == Opcode::kRedux) {
      if (int a = Lookup(kAtomOps, s); a >= 0) {
        m.atom = static_cast<AtomOp>(a);
        continue;
      }
    }
    if (op == Opcode::kShfl) {
      if (s == ".up") { m.shfl = ShflMode::kUp; continue; }
      if (s == ".down") { m.shfl = ShflMode::kDown; continue; }
      if (s == ".bfly") { m.shfl = ShflMode::kBfly; continue; }
      if (s == ".idx") { m.shfl = ShflMode::kIdx; continue; }
    }
    if (op == Opcode::kVote) {
      if (s == ".all") { m.vote = VoteMode::kAll; continue; }
      if (s == ".any") { m.vote = VoteMode::kAny; continue; }
      if (s == ".uni") { m.vote = VoteMode::kUni; continue; }
      if (s == ".ballot") { m.vote = VoteMode::kBallot; continue; }
    }
    if (op == Opcode::kTestp) {
      static const Named kTestp[] = {{".finite", int(TestpMode::kFinite)},
                                     {".infinite", int(TestpMode::kInfinite)},
                                     {".number", int(TestpMode::kNumber)},
                                     {".notanumber", int(TestpMode::kNotANumber)},
                                     {".normal", int(TestpMode::kNormal)},
                                     {".subnormal", int(TestpMode::kSubnormal)}};
      if (int t = Lookup(kTestp, s); t >= 0) {
        m.testp = static_cast<TestpMode>(t);
        continue;
      }
    }
    if (op == Opcode::kPrmt) {
      static const Named kPrmt[] = {{".f4e", 1}, {".b4e", 2}, {".rc8", 3},
                                    {".ecl", 4}, {".ecr", 5}, {".rc16", 6}};
      if (int p = Lookup(kPrmt, s); p >= 0) {
        m.prmt_mode = static_cast<uint8_t>(p);
        continue;
      }
    }
    if (op == Opcode::kBmsk && (s == ".wrap" || s == ".clamp")) {
      m.shift_wrap = s == ".wrap";
      continue;
    }
    if (op == Opcode::kShf && (s == ".l" || s == ".r" || s == ".wrap" || s == ".clamp")) {
      if (s == ".l") m.shift_left = true;
      if (s == ".wrap") m.shift_wrap = true;
      continue;
    }
    if (op == Opcode::kBar && s == ".warp") {
      warp_barrier_ = true;
      continue;
    }
    if (s == ".lo") { m.mul = MulMode::kLo; continue; }
    if (s == ".hi") { m.mul = MulMode::kHi; continue; }
    if (s == ".wide") { m.mul = MulMode::kWide; continue; }
    if (s == ".ftz") { m.ftz = true; continue; }
    if (s == ".sat" || s == ".satfinite") { m.sat = true; continue; }
    if (s == ".approx") { m.approx = true; continue; }
    if (s == ".full") { m.full = true; continue; }
    if (s == ".uni") { m.uni = true; continue; }
    if (s == ".nc") { m.nc = true; continue; }
    if (s == ".volatile") { m.is_volatile = true; continue; }
    if (s == ".cc") { m.carry_out = true; continue; }
    if (s == ".relu") { m.relu = true; continue; }
    if (s == ".NaN") { m.nan = true; continue; }
    if (s == ".xorsign") { m.xorsign = true; continue; }
    if (s == ".abs") { m.abs = true; continue; }
    if (s == ".v2" || s == ".v4" || s == ".v8") {
      m.vector = static_cast<uint8_t>(s[2] - '0');
      continue;
    }
    if (s == ".to" && op == Opcode::kCvta) {
      cvta_to_ = true;
      continue;
    }
    if (s == ".arrive" || s == ".red") return Fail("unsupported barrier form '" + std::string(s) + "'");
    if (IsIgnoredModifier(s)) continue;
    return Fail("unsupported modifier '" + std::string(s) + "'");
  }
  if (op == Opcode::kAddc || op == Opcode::kSubc || op == Opcode::kMadc) m.carry_in = true;
  if (op == Opcode::kBar && warp_barrier_) in_.opcode = Opcode::kBarWarpSync;
  if (op == Opcode::kCvta && !cvta_to_) {
    // cvta.space: space -> generic; cvta.to.space: generic -> space. Keep
    // the direction in 'full' (true: to generic).
    m.full = true;
  }
  if (!types_.empty()) in_.type = types_[0];
  if (types_.size() > 1) in_.type2 = types_[1];
  if (types_.size() > 2) return Fail("too many types");
  return Status::Ok();
}

// Immediates take the bits of the instruction's operand type: 0f/0d
// spellings are bit patterns, decimal floats are converted, integers are
// two's complement.
Status Decoder::Immediate(const RawOperand& raw, ptx::Operand* out) {
  std::string s(raw.text);
  out->kind = ptx::Operand::Kind::kImmediate;
  Type t = in_.opcode == Opcode::kCvt ? in_.type2 : in_.type;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) {
    uint32_t bits = static_cast<uint32_t>(std::strtoull(s.c_str() + 2, nullptr, 16));
    if (raw.minus) bits ^= 0x80000000u;
    if (t == Type::kF64) {
      double d = std::bit_cast<float>(bits);
      out->imm = std::bit_cast<uint64_t>(d);
    } else {
      out->imm = bits;
    }
    return Status::Ok();
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) {
    uint64_t bits = std::strtoull(s.c_str() + 2, nullptr, 16);
    if (raw.minus) bits ^= uint64_t{1} << 63;
    if (t == Type::kF32) {
      float f = static_cast<float>(std::bit_cast<double>(bits));
      out->imm = std::bit_cast<uint32_t>(f);
    } else {
      out->imm = bits;
    }
    return Status::Ok();
  }
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (!hex && s.find_first_of(".eE") != std::string::npos) {
    double d = std::strtod(s.c_str(), nullptr) * (raw.minus ? -1.0 : 1.0);
    out->imm = t == Type::kF64 ? std::bit_cast<uint64_t>(d)
                               : std::bit_cast<uint32_t>(static_cast<float>(d));
    return Status::Ok();
  }
  char* end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 0);
  if (*end == 'U' || *end == 'u') ++end;
  if (*end != '\0') return Fail("malformed number '" + s + "'");
  if (IsFloat(t) && t != Type::kF16 && t != Type::kBF16 && t != Type::kF16x2 &&
      t != Type::kBF16x2 && in_.opcode != Opcode::kMov && in_.opcode != Opcode::kSt) {
    // An integer literal in a float instruction is a value, not bits.
    double d = static_cast<double>(v) * (raw.minus ? -1.0 : 1.0);
    out->imm = t == Type::kF64 ? std::bit_cast<uint64_t>(d)
                               : std::bit_cast<uint32_t>(static_cast<float>(d));
    return Status::Ok();
  }
  out->imm = raw.minus ? ~v + 1 : v;
  return Status::Ok();
}

Status Decoder::Operand(const RawOperand& raw, ptx::Operand* out, bool) {
  using K = ptx::Operand::Kind;
  out->negated = raw.negated;
  switch (raw.kind) {
    case RawOperand::Kind::kSink:
      out->kind = K::kSink;
      return Status::Ok();
    case RawOperand::Kind::kNumber:
      return Immediate(raw, out);
    case RawOperand::Kind::kVector:
      if (raw.elements.size() > 4) return Fail("vector operands of more than 4 elements");
      out->kind = K::kVector;
      out->vector_size = static_cast<uint8_t>(raw.elements.size());
      for (size_t i = 0; i < raw.elements.size(); ++i) {
        if (raw.elements[i] == "_") {
          out->vector[i] = ~0u;
          continue;
        }
        if (std::isdigit(static_cast<unsigned char>(raw.elements[i][0]))) {
          RawOperand number;
          number.kind = RawOperand::Kind::kNumber;
          number.text = raw.elements[i];
          number.minus = i < raw.element_minus.size() && raw.element_minus[i];
          ptx::Operand value;
          KILN_RETURN_IF_ERROR(Immediate(number, &value));
          out->vector[i] = ~0u;
          out->vector_imm[i] = value.imm;
          out->vector_imm_mask |= static_cast<uint8_t>(1u << i);
          continue;
        }
        int64_t r = sym_.FindRegister(raw.elements[i]);
        if (r < 0) return Fail("unknown register '" + std::string(raw.elements[i]) + "'");
        out->vector[i] = static_cast<uint32_t>(r);
      }
      return Status::Ok();
    case RawOperand::Kind::kAddress: {
      out->kind = K::kAddress;
      out->imm = static_cast<uint64_t>(raw.offset);
      if (raw.base.empty()) {
        out->symbol_base = true;
        return Status::Ok();
      }
      if (int64_t r = sym_.FindRegister(raw.base); r >= 0) {
        out->reg = static_cast<uint32_t>(r);
        return Status::Ok();
      }
      out->symbol_base = true;
      std::optional<SymbolTable::Symbol> sym = sym_.Resolve(raw.base);
      if (!sym) return Fail("unknown symbol '" + std::string(raw.base) + "'");
      Space& space = in_.mod.space;
      if (sym->space == Space::kParam && space != Space::kParam)
        return Fail("a kernel parameter addressed outside .param");
      if (space == Space::kParam && sym->space != Space::kParam) {
        // A call's .param variable or a device function's parameter: slots
        // of the thread's local memory (see ptx_parser.cc).
        if (sym->space != Space::kLocal) return Fail("unknown parameter '" + std::string(raw.base) + "'");
        space = Space::kLocal;
      }
      out->imm += sym->offset;
      out->dynamic_shared = sym->dynamic_shared;
      if (space == Space::kGeneric && sym->space == Space::kLocal) out->imm += kLocalWindow;
      if (space == Space::kGeneric && sym->space == Space::kShared) out->imm += kSharedWindow;
      return Status::Ok();
    }
    case RawOperand::Kind::kName:
      break;
  }
  // Registers may be named without '%' (nvcc's scoped '.reg .f16 low;').
  if (int64_t r = sym_.FindRegister(raw.text); r >= 0) {
    out->kind = K::kRegister;
    out->reg = static_cast<uint32_t>(r);
    return Status::Ok();
  }
  if (raw.text.size() > 1 && raw.text[0] == '%') {
    if (int s = Lookup(kSpecials, raw.text); s >= 0) {
      out->kind = K::kRegister;
      out->reg = static_cast<uint32_t>(s);  // + num_registers once known
      out->special = true;
      return Status::Ok();
    }
    return Fail("unknown register '" + std::string(raw.text) + "'");
  }
  // A symbol used as a value: its address in its own space.
  std::optional<SymbolTable::Symbol> sym = sym_.Resolve(raw.text);
  if (!sym) return Fail("unknown symbol '" + std::string(raw.text) + "'");
  out->kind = K::kImmediate;
  out->imm = sym->offset;
  out->dynamic_shared = sym->dynamic_shared;
  return Status::Ok();
}

Status Decoder::Operands(std::string* label) {
  const auto& ops = raw_.operands;
  const Opcode op = in_.opcode;
  auto need = [&](size_t lo, size_t hi) -> Status {
    if (ops.size() < lo || ops.size() > hi)
      return Fail("wrong number of operands (" + std::to_string(ops.size()) + ")");
    return Status::Ok();
  };
  switch (op) {
    case Opcode::kBra:
      KILN_RETURN_IF_ERROR(need(1, 1));
      if (ops[0].kind != RawOperand::Kind::kName) return Fail("branch target is not a label");
      *label = std::string(ops[0].text);
      return Status::Ok();
    case Opcode::kRet: case Opcode::kExit: case Opcode::kTrap: case Opcode::kMembar:
      return need(0, 0);
    case Opcode::kNop:
      return Status::Ok();
    case Opcode::kBar: case Opcode::kBarWarpSync:
      KILN_RETURN_IF_ERROR(need(1, 2));
      in_.num_src = static_cast<uint8_t>(ops.size());
      for (size_t i = 0; i < ops.size(); ++i) KILN_RETURN_IF_ERROR(Operand(ops[i], &in_.src[i]));
      return Status::Ok();
    case Opcode::kSt: case Opcode::kRed:
      KILN_RETURN_IF_ERROR(need(2, 2));
      if (ops[0].kind != RawOperand::Kind::kAddress) return Fail("expected an address");
      in_.num_src = 2;
      KILN_RETURN_IF_ERROR(Operand(ops[0], &in_.src[0]));
      return Operand(ops[1], &in_.src[1]);
    default:
      break;
  }
  if (ops.empty()) return Fail("missing operands");
  // Destination first ("%p|%q" is two).
  in_.num_dst = ops[0].pipe.empty() ? 1 : 2;
  KILN_RETURN_IF_ERROR(Operand(ops[0], &in_.dst[0]));
  if (!ops[0].pipe.empty()) {
    RawOperand q;
    q.text = ops[0].pipe;
    KILN_RETURN_IF_ERROR(Operand(q, &in_.dst[1]));
  }
  if (ops.size() - 1 > 4) return Fail("too many operands");
  in_.num_src = static_cast<uint8_t>(ops.size() - 1);
  for (size_t i = 1; i < ops.size(); ++i) KILN_RETURN_IF_ERROR(Operand(ops[i], &in_.src[i - 1]));
  using K = ptx::Operand::Kind;
  K d = in_.dst[0].kind;
  if ((d != K::kRegister && d != K::kVector && d != K::kSink) || in_.dst[0].special) {
    return Fail("destination is not a register");
  }
  return Status::Ok();
}

void Decoder::Classify() {
  using C = InstructionClass;
  switch (in_.opcode) {
    case Opcode::kLd: case Opcode::kSt: case Opcode::kAtom: case Opcode::kRed:
      in_.cls = C::kMemory;
      return;
    case Opcode::kBra: case Opcode::kRet: case Opcode::kExit: case Opcode::kTrap:
    case Opcode::kBar: case Opcode::kBarWarpSync: case Opcode::kMembar: case Opcode::kShfl:
    case Opcode::kVote: case Opcode::kRedux: case Opcode::kActivemask: case Opcode::kMatch:
    case Opcode::kNop:
      in_.cls = C::kControl;
      return;
    case Opcode::kRcp: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kSin:
    case Opcode::kCos: case Opcode::kLg2: case Opcode::kEx2: case Opcode::kTanh:
      if (in_.type != Type::kF64) {
        in_.cls = C::kSpecial;
        return;
      }
      break;
    default:
      break;
  }
  Type t = in_.type;
  if (in_.opcode == Opcode::kCvt && in_.type2 == Type::kF64) t = Type::kF64;
  if (in_.opcode == Opcode::kCvt && !IsFloat(t) && IsFloat(in_.type2)) t = in_.type2;
  switch (t) {
    case Type::kF64: in_.cls = C::kFp64; break;
    case Type::kF32: in_.cls = C::kFp32; break;
    case Type::kF16: case Type::kF16x2: case Type::kBF16: case Type::kBF16x2:
      in_.cls = C::kFp16;
      break;
    default: in_.cls = C::kInteger; break;
  }
}

Status Decoder::Run(std::string* label) {
  in_.line = raw_.line;
  in_.text = raw_.text;
  int op = Lookup(kOpcodes, raw_.opcode);
  if (op < 0) return Fail("unknown instruction '" + std::string(raw_.opcode) + "'");
  in_.opcode = static_cast<Opcode>(op);
  if (!raw_.guard.empty()) {
    int64_t r = sym_.FindRegister(raw_.guard);
    if (r < 0) return Fail("unknown predicate '" + std::string(raw_.guard) + "'");
    in_.guard = static_cast<int32_t>(r);
    in_.guard_negated = raw_.guard_negated;
  }
  KILN_RETURN_IF_ERROR(Modifiers());
  KILN_RETURN_IF_ERROR(Operands(label));
  Classify();
  switch (in_.opcode) {
    case Opcode::kBra: case Opcode::kRet: case Opcode::kExit: case Opcode::kTrap:
    case Opcode::kBar: case Opcode::kBarWarpSync: case Opcode::kMembar: case Opcode::kNop:
      return Status::Ok();  // the scheduler executes these
    default:
      break;
  }
  StatusOr<Handler> h = SelectHandler(in_);
  if (!h.ok()) return Fail(h.status().message());
  in_.handler = *h;
  return Status::Ok();
}

}  // namespace

Status DecodeInstruction(const RawInstruction& raw, SymbolTable& symbols, Instruction* out,
                         std::string* label) {
  return Decoder(raw, symbols, out).Run(label);
}

}  // namespace kiln::emu::ptx
