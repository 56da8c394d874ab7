// PtxParser: the module structure of PTX (version/target directives, module
// variables, kernels with their parameters, register and variable
// declarations, labels and scopes); each instruction is handed to the
// decoder (ptx_decoder.cc). Entry point: LoadModule (ptx_module.h).
//
// Device functions (.func, e.g. libdevice's f64 trig slow path) are inlined
// into each kernel that calls them, once per kernel: their body is parsed
// in the kernel's context with registers and labels of its own, and their
// parameters, return values and the call sites' .param variables become
// slots of the thread's local memory. 'call' copies the arguments into the
// callee's slots and jumps; the callee's 'ret' returns to the call and
// copies the results back (launch.cc keeps a return stack per lane).
#include <algorithm>
#include <cstring>

#include "cuda_emulator/exec/register_pressure.h"
#include "cuda_emulator/exec/scoreboard.h"
#include "cuda_emulator/ptx/ptx_decoder.h"
#include "cuda_emulator/ptx/ptx_lexer.h"

namespace kiln::emu::ptx {
namespace {

using Kind = Token::Kind;

uint64_t AlignUp(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

Type ParseTypeName(std::string_view d) {
  static const std::pair<std::string_view, Type> kTypes[] = {
      {".pred", Type::kPred},   {".b8", Type::kB8},       {".b16", Type::kB16},
      {".b32", Type::kB32},     {".b64", Type::kB64},     {".b128", Type::kB128},
      {".u8", Type::kU8},       {".u16", Type::kU16},     {".u32", Type::kU32},
      {".u64", Type::kU64},     {".s8", Type::kS8},       {".s16", Type::kS16},
      {".s32", Type::kS32},     {".s64", Type::kS64},     {".f16", Type::kF16},
      {".f16x2", Type::kF16x2}, {".bf16", Type::kBF16},   {".bf16x2", Type::kBF16x2},
      {".f32", Type::kF32},     {".f64", Type::kF64},
  };
  for (const auto& [name, t] : kTypes)
    if (d == name) return t;
  return Type::kNone;
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const GlobalPlacer& placer)
      : t_(tokens), placer_(placer) {}
  StatusOr<std::unique_ptr<Module>> Parse();

 private:
  const Token& Peek(size_t k = 0) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  const Token& Next() { return t_[pos_ < t_.size() - 1 ? pos_++ : pos_]; }
  bool Accept(std::string_view s) {
    if (!Peek().Is(s)) return false;
    ++pos_;
    return true;
  }
  Status Fail(const std::string& what) const {
    return Error("PTX line " + std::to_string(Peek().line) + ": " + what);
  }
  Status Expect(std::string_view s) {
    if (Accept(s)) return Status::Ok();
    return Fail("expected '" + std::string(s) + "', found '" + std::string(Peek().text) + "'");
  }
  StatusOr<int64_t> Integer();
  void SkipToEndOfLine();
  // Skips a balanced '{ ... }' starting at the current token.
  void SkipBraces();

  Status ModuleDirective();
  StatusOr<VariableDecl> Variable();
  Status PlaceModuleVariable(Space space, VariableDecl decl);
  Status Function(bool is_entry);
  Status Parameters(Kernel& k);
  Status Body(Kernel& k);
  Status RegisterDeclaration();
  Status KernelVariable(Kernel& k, Space space);
  StatusOr<RawOperand> Operand();
  Status Statement(Kernel& k);
  Status Call(Kernel& k, RawInstruction raw);
  Status Finish(Kernel& k);
  std::string TextOf(size_t begin, size_t end) const;
  StatusOr<VariableDecl> ParameterDecl();
  uint32_t PlaceLocal(Kernel& k, const std::string& name, const VariableDecl& decl);
  void FindFunctionDefinitions();
  struct FunctionLayout {
    uint32_t entry = 0;
    std::vector<std::pair<uint32_t, uint32_t>> params, results;  // local offset, size
  };
  StatusOr<const FunctionLayout*> Inline(Kernel& k, const std::string& name);

  const std::vector<Token>& t_;
  size_t pos_ = 0;
  const GlobalPlacer& placer_;
  std::unique_ptr<Module> module_ = std::make_unique<Module>();
  NameMap<uint64_t> global_addresses_;
  NameMap<VariableDecl> module_shared_;

  // Per kernel.
  SymbolTable symbols_;
  uint32_t next_register_ = 0;
  uint32_t declared_registers_ = 0;
  std::vector<uint8_t> register_units_;  // per register slot, as Kernel::register_units
  NameMap<uint32_t> labels_;
  struct Fixup {
    size_t instruction;
    std::string label;
    uint32_t line;
  };
  std::vector<Fixup> fixups_;
  // .func definitions: the token index of their '.func'.
  NameMap<size_t> function_defs_;
  struct CallSite {
    size_t instruction;
    std::string callee;
    std::vector<uint32_t> args, results;  // call-site .param local offsets
    uint32_t line;
  };
  std::vector<CallSite> calls_;
  NameMap<FunctionLayout> inlined_;  // per kernel
};

StatusOr<int64_t> Parser::Integer() {
  bool minus = Accept("-");
  const Token& tok = Peek();
  if (tok.kind != Kind::kNumber)
    return Fail("expected a number, found '" + std::string(tok.text) + "'");
  std::string s(tok.text);
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (*end == 'U' || *end == 'u') ++end;
  if (*end != '\0') return Fail("malformed integer '" + s + "'");
  ++pos_;
  return minus ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

void Parser::SkipToEndOfLine() {
  uint32_t line = Peek().line;
  while (Peek().kind != Kind::kEnd && Peek().line == line && !Peek().Is(";")) Next();
  Accept(";");
}

void Parser::FindFunctionDefinitions() {
  auto skip_parens = [&](size_t j) {
    if (!t_[j].Is("(")) return j;
    for (int depth = 0; j < t_.size(); ++j) {
      if (t_[j].Is("(")) ++depth;
      if (t_[j].Is(")") && --depth == 0) return j + 1;
    }
    return j;
  };
  for (size_t i = 0; i + 1 < t_.size(); ++i) {
    if (!t_[i].Is(".func")) continue;
    size_t j = skip_parens(i + 1);
    if (j >= t_.size() || t_[j].kind != Kind::kIdentifier) continue;
    std::string name(t_[j].text);
    j = skip_parens(j + 1);
    while (j < t_.size() && !t_[j].Is("{") && !t_[j].Is(";") && !t_[j].Is(".func") &&
           !t_[j].Is(".entry"))
      ++j;
    if (j < t_.size() && t_[j].Is("{")) function_defs_[name] = i;
  }
}

void Parser::SkipBraces() {
  for (int depth = 0; Peek().kind != Kind::kEnd;) {
    if (Peek().Is("{")) ++depth;
    if (Peek().Is("}") && --depth == 0) {
      Next();
      return;
    }
    Next();
  }
}

StatusOr<std::unique_ptr<Module>> Parser::Parse() {
  FindFunctionDefinitions();
  while (Peek().kind != Kind::kEnd) KILN_RETURN_IF_ERROR(ModuleDirective());
  return std::move(module_);
}

Status Parser::ModuleDirective() {
  const Token& tok = Peek();
  if (Accept(".version")) {
    std::string v(Next().text);
    size_t dot = v.find('.');
    module_->ptx_version =
        std::atoi(v.c_str()) * 10 + (dot == std::string::npos ? 0 : std::atoi(v.c_str() + dot + 1));
    return Status::Ok();
  }
  if (Accept(".target")) {
    module_->target = std::string(Next().text);
    while (Accept(",")) Next();
    return Status::Ok();
  }
  if (Accept(".address_size")) {
    KILN_ASSIGN_OR_RETURN(int64_t a, Integer());
    if (a != 64) return Fail("only .address_size 64 is supported, got " + std::to_string(a));
    return Status::Ok();
  }
  if (tok.Is(".file") || tok.Is(".pragma") || tok.Is(".loc")) {
    SkipToEndOfLine();
    return Status::Ok();
  }
  if (Accept(".section")) {  // DWARF sections: skip the braces
    while (Peek().kind != Kind::kEnd && !Peek().Is("{")) Next();
    SkipBraces();
    return Status::Ok();
  }
  while (Accept(".visible") || Accept(".extern") || Accept(".weak") || Accept(".common")) {
  }
  if (Accept(".entry")) return Function(true);
  if (Accept(".func")) return Function(false);
  for (auto [name, space] : {std::pair{".global", Space::kGlobal}, {".const", Space::kConst},
                             {".shared", Space::kShared}}) {
    if (Accept(name)) {
      KILN_ASSIGN_OR_RETURN(VariableDecl decl, Variable());
      return PlaceModuleVariable(space, std::move(decl));
    }
  }
  return Fail("unexpected '" + std::string(Peek().text) + "' at module scope");
}

// [.align N] [.v2|.v4] .type name[N]... [= value | = {values}];
StatusOr<VariableDecl> Parser::Variable() {
  VariableDecl decl;
  uint32_t align = 0;
  Type type = Type::kNone;
  int vector = 1;
  while (Peek().kind == Kind::kDirective) {
    std::string_view d = Next().text;
    if (d == ".align") {
      KILN_ASSIGN_OR_RETURN(int64_t a, Integer());
      align = static_cast<uint32_t>(a);
    } else if (d == ".v2" || d == ".v4") {
      vector = d == ".v2" ? 2 : 4;
    } else if (Type ty = ParseTypeName(d); ty != Type::kNone) {
      type = ty;
    } else {
      return Fail("unsupported variable qualifier '" + std::string(d) + "'");
    }
  }
  if (type == Type::kNone) return Fail("variable declaration without a type");
  if (Peek().kind != Kind::kIdentifier) return Fail("expected a variable name");
  decl.name = std::string(Next().text);
  uint64_t unit = static_cast<uint64_t>(std::max(8, TypeBits(type)) / 8);
  uint64_t count = vector;
  while (Accept("[")) {
    if (Accept("]")) {
      decl.unsized = true;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int64_t n, Integer());
    count *= static_cast<uint64_t>(n);
    KILN_RETURN_IF_ERROR(Expect("]"));
  }
  decl.align = align ? align : static_cast<uint32_t>(unit * vector);
  decl.size = decl.unsized ? 0 : unit * count;
  if (Accept("=")) {
    std::vector<uint64_t> values;
    int depth = 0;
    do {
      while (Accept("{")) ++depth;
      bool minus = Accept("-");
      const Token& v = Next();
      if (v.kind != Kind::kNumber)
        return Fail("unsupported initializer '" + std::string(v.text) + "' in " + decl.name);
      std::string s(v.text);
      uint64_t bits = 0;
      if (s.size() > 2 && s[0] == '0' && std::strchr("fFdD", s[1])) {
        bits = std::strtoull(s.c_str() + 2, nullptr, 16);
      } else if (s.find_first_of(".eE") != std::string::npos && s.rfind("0x", 0) != 0) {
        double d = std::strtod(s.c_str(), nullptr) * (minus ? -1 : 1);
        minus = false;
        if (type == Type::kF32) {
          float f = static_cast<float>(d);
          std::memcpy(&bits, &f, 4);
        } else {
          std::memcpy(&bits, &d, 8);
        }
      } else {
        bits = std::strtoull(s.c_str(), nullptr, 0);
      }
      values.push_back(minus ? ~bits + 1 : bits);
      while (depth > 0 && Accept("}")) --depth;
    } while (Accept(","));
    if (decl.unsized) {
      decl.unsized = false;
      decl.size = values.size() * unit;
    }
    decl.initializer.assign(decl.size, 0);
    for (size_t i = 0; i < values.size() && (i + 1) * unit <= decl.size; ++i)
      std::memcpy(decl.initializer.data() + i * unit, &values[i], unit);
  }
  KILN_RETURN_IF_ERROR(Expect(";"));
  return decl;
}

Status Parser::PlaceModuleVariable(Space space, VariableDecl decl) {
  if (space == Space::kShared) {
    module_shared_[decl.name] = std::move(decl);
    return Status::Ok();
  }
  auto g = std::make_unique<GlobalVariable>();
  g->name = decl.name;
  g->space = space;
  g->align = decl.align;
  g->initializer = std::move(decl.initializer);
  g->initializer.resize(std::max<uint64_t>(decl.size, 1), 0);
  KILN_ASSIGN_OR_RETURN(g->address, placer_(*g));
  global_addresses_[g->name] = g->address;
  module_->globals.push_back(std::move(g));
  return Status::Ok();
}

Status Parser::Function(bool is_entry) {
  if (!is_entry) {
    // Parsed where a kernel calls it (Inline); skipped here.
    while (Peek().kind != Kind::kEnd && !Peek().Is("{") && !Peek().Is(";")) Next();
    if (Accept(";")) return Status::Ok();
    SkipBraces();
    return Status::Ok();
  }
  auto k = std::make_unique<Kernel>();
  if (Peek().kind != Kind::kIdentifier) return Fail("expected a kernel name after .entry");
  k->name = std::string(Next().text);
  symbols_ = SymbolTable();
  symbols_.module_shared = &module_shared_;
  symbols_.globals = global_addresses_;
  symbols_.kernel = k.get();
  next_register_ = 0;
  declared_registers_ = 0;
  register_units_.clear();
  labels_.clear();
  fixups_.clear();
  if (Accept("(")) KILN_RETURN_IF_ERROR(Parameters(*k));
  // Performance directives.
  while (Peek().kind == Kind::kDirective && !Peek().Is("{")) {
    std::string_view d = Next().text;
    std::vector<int64_t> v;
    do {
      KILN_ASSIGN_OR_RETURN(int64_t n, Integer());
      v.push_back(n);
    } while (Accept(","));
    if (d == ".maxntid") {
      int64_t p = 1;
      for (int64_t x : v) p *= x;
      k->max_threads = static_cast<uint32_t>(p);
    } else if (d == ".reqntid") {
      for (size_t i = 0; i < v.size() && i < 3; ++i) k->required_block[i] = static_cast<uint32_t>(v[i]);
    } else if (d != ".minnctapersm" && d != ".maxnreg" && d != ".maxnctapersm" &&
               d != ".noreturn" && d != ".maxclusterrank" && d != ".reqnctapercluster") {
      return Fail("unsupported kernel directive '" + std::string(d) + "'");
    }
  }
  KILN_RETURN_IF_ERROR(Expect("{"));
  symbols_.scopes.emplace_back();
  KILN_RETURN_IF_ERROR(Body(*k));
  KILN_RETURN_IF_ERROR(Finish(*k));
  module_->kernels.push_back(std::move(k));
  return Status::Ok();
}

// After '.param': .type [.align N] name[[N]] (parameters end at ',' or ')',
// not ';').
StatusOr<VariableDecl> Parser::ParameterDecl() {
  VariableDecl d;
  Type type = Type::kNone;
  uint32_t align = 0;
  while (Peek().kind == Kind::kDirective) {
    std::string_view q = Next().text;
    if (q == ".align") {
      KILN_ASSIGN_OR_RETURN(int64_t a, Integer());
      align = static_cast<uint32_t>(a);
    } else if (Type ty = ParseTypeName(q); ty != Type::kNone) {
      type = ty;
    }  // .ptr .global etc. qualify pointers; nothing to record
  }
  if (type == Type::kNone) return Fail("parameter without a type");
  if (Peek().kind != Kind::kIdentifier) return Fail("expected a parameter name");
  d.name = std::string(Next().text);
  uint64_t unit = static_cast<uint64_t>(std::max(8, TypeBits(type)) / 8);
  uint64_t count = 1;
  while (Accept("[")) {
    KILN_ASSIGN_OR_RETURN(int64_t n, Integer());
    count *= static_cast<uint64_t>(n);
    KILN_RETURN_IF_ERROR(Expect("]"));
  }
  d.align = align ? align : static_cast<uint32_t>(unit);
  d.size = unit * count;
  return d;
}

// .param .type [.align N] name[[N]], ... )
Status Parser::Parameters(Kernel& k) {
  if (Accept(")")) return Status::Ok();
  do {
    KILN_RETURN_IF_ERROR(Expect(".param"));
    KILN_ASSIGN_OR_RETURN(VariableDecl decl, ParameterDecl());
    Parameter p;
    p.name = decl.name;
    p.align = decl.align;
    p.size = static_cast<uint32_t>(decl.size);
    p.offset = static_cast<uint32_t>(AlignUp(k.param_bytes, p.align));
    k.param_bytes = p.offset + p.size;
    symbols_.params[p.name] = p.offset;
    k.params.push_back(std::move(p));
  } while (Accept(","));
  return Expect(")");
}

Status Parser::RegisterDeclaration() {
  // .reg [.v2|.v4] .type name<N> | name, name, ...;
  int vector = 1;
  if (Accept(".v2")) vector = 2;
  if (Accept(".v4")) vector = 4;
  if (Peek().kind != Kind::kDirective) return Fail("expected a register type");
  Type type = ParseTypeName(Next().text);
  if (type == Type::kNone) return Fail("unknown register type");
  if (vector != 1) return Fail("vector registers are not supported");
  int width_units = type == Type::kPred ? 0 : (TypeBits(type) > 32 ? 2 : 1);
  do {
    if (Peek().kind != Kind::kIdentifier) return Fail("expected a register name");
    std::string base(Next().text);
    if (Accept("<")) {
      KILN_ASSIGN_OR_RETURN(int64_t n, Integer());
      KILN_RETURN_IF_ERROR(Expect(">"));
      for (int64_t i = 0; i < n; ++i) {
        symbols_.scopes.back()[base + std::to_string(i)] = next_register_++;
        register_units_.push_back(static_cast<uint8_t>(width_units));
      }
      declared_registers_ += static_cast<uint32_t>(n * width_units);
    } else {
      symbols_.scopes.back()[base] = next_register_++;
      register_units_.push_back(static_cast<uint8_t>(width_units));
      declared_registers_ += width_units;
    }
  } while (Accept(","));
  return Expect(";");
}

Status Parser::KernelVariable(Kernel& k, Space space) {
  KILN_ASSIGN_OR_RETURN(VariableDecl decl, Variable());
  if (space == Space::kShared) {
    if (decl.unsized) {
      symbols_.dynamic_shared = decl.name;
      k.uses_dynamic_shared = true;
      return Status::Ok();
    }
    uint64_t at = AlignUp(k.static_shared_bytes, decl.align);
    symbols_.shared[decl.name] = static_cast<uint32_t>(at);
    k.static_shared_bytes = static_cast<uint32_t>(at + decl.size);
    return Status::Ok();
  }
  if (space == Space::kLocal) {
    uint64_t at = AlignUp(k.local_bytes, decl.align);
    symbols_.local[decl.name] = static_cast<uint32_t>(at);
    k.local_bytes = static_cast<uint32_t>(at + decl.size);
    return Status::Ok();
  }
  // Function-scope .global/.const: module memory under a kernel-local name.
  auto g = std::make_unique<GlobalVariable>();
  g->name = k.name + "::" + decl.name;
  g->space = space;
  g->align = decl.align;
  g->initializer = std::move(decl.initializer);
  g->initializer.resize(std::max<uint64_t>(decl.size, 1), 0);
  KILN_ASSIGN_OR_RETURN(g->address, placer_(*g));
  symbols_.globals[decl.name] = g->address;
  module_->globals.push_back(std::move(g));
  return Status::Ok();
}

StatusOr<RawOperand> Parser::Operand() {
  RawOperand op;
  if (Accept("[")) {
    op.kind = RawOperand::Kind::kAddress;
    if (Peek().kind == Kind::kIdentifier) op.base = Next().text;
    bool first = op.base.empty();
    while (!Peek().Is("]")) {
      bool minus = false;
      if (!first) {
        if (Accept("+")) {
        } else if (Accept("-")) {
          minus = true;
        } else {
          return Fail("malformed address");
        }
      }
      first = false;
      KILN_ASSIGN_OR_RETURN(int64_t v, Integer());
      op.offset += minus ? -v : v;
    }
    KILN_RETURN_IF_ERROR(Expect("]"));
    return op;
  }
  if (Accept("{")) {
    op.kind = RawOperand::Kind::kVector;
    do {
      bool minus = Accept("-");
      if ((minus || Peek().kind != Kind::kIdentifier) && Peek().kind != Kind::kNumber)
        return Fail("expected a register or a number in a vector operand");
      op.elements.push_back(Next().text);
      op.element_minus.push_back(minus);
    } while (Accept(","));
    KILN_RETURN_IF_ERROR(Expect("}"));
    return op;
  }
  if (Accept("!")) op.negated = true;
  if (Accept("-")) op.minus = true;
  const Token& tok = Next();
  op.text = tok.text;
  if (tok.kind == Kind::kNumber) {
    op.kind = RawOperand::Kind::kNumber;
  } else if (tok.kind == Kind::kIdentifier) {
    op.kind = tok.text == "_" ? RawOperand::Kind::kSink : RawOperand::Kind::kName;
    if (Accept("|")) {
      if (Peek().kind != Kind::kIdentifier) return Fail("expected a predicate after '|'");
      op.pipe = Next().text;
    }
  } else {
    return Fail("unexpected '" + std::string(tok.text) + "' in an operand");
  }
  return op;
}

Status Parser::Statement(Kernel& k) {
  const Token& first = Peek();
  if (Accept(".reg")) return RegisterDeclaration();
  if (Accept(".shared")) return KernelVariable(k, Space::kShared);
  if (Accept(".local")) return KernelVariable(k, Space::kLocal);
  if (Accept(".global")) return KernelVariable(k, Space::kGlobal);
  if (Accept(".const")) return KernelVariable(k, Space::kConst);
  if (Accept(".param")) {  // a call site's argument or result: a local slot
    KILN_ASSIGN_OR_RETURN(VariableDecl decl, Variable());
    PlaceLocal(k, decl.name, decl);
    return Status::Ok();
  }
  if (first.Is(".pragma") || first.Is(".loc") || first.Is(".file")) {
    SkipToEndOfLine();
    return Status::Ok();
  }
  if (first.kind == Kind::kDirective) {
    return Fail("unsupported directive '" + std::string(first.text) + "' in kernel " + k.name);
  }
  if (first.kind == Kind::kIdentifier && Peek(1).Is(":")) {  // label
    labels_[std::string(first.text)] = static_cast<uint32_t>(k.code.size());
    Next();
    Next();
    return Status::Ok();
  }
  RawInstruction raw;
  raw.line = first.line;
  size_t begin = pos_;
  if (Accept("@")) {
    raw.guard_negated = Accept("!");
    if (Peek().kind != Kind::kIdentifier) return Fail("expected a predicate after '@'");
    raw.guard = Next().text;
  }
  if (Peek().kind != Kind::kIdentifier) {
    return Fail("expected an instruction, found '" + std::string(Peek().text) + "'");
  }
  raw.opcode = Next().text;
  while (Peek().kind == Kind::kDirective) raw.modifiers.push_back(Next().text);
  if (raw.opcode == "call") {
    raw.text = TextOf(begin, pos_);
    return Call(k, std::move(raw));
  }
  if (!Peek().Is(";")) {
    do {
      KILN_ASSIGN_OR_RETURN(RawOperand op, Operand());
      raw.operands.push_back(std::move(op));
    } while (Accept(","));
  }
  raw.text = TextOf(begin, pos_);
  KILN_RETURN_IF_ERROR(Expect(";"));
  Instruction inst;
  std::string label;
  KILN_RETURN_IF_ERROR(DecodeInstruction(raw, symbols_, &inst, &label));
  if (!label.empty()) fixups_.push_back({k.code.size(), label, raw.line});
  k.code.push_back(std::move(inst));
  return Status::Ok();
}

std::string Parser::TextOf(size_t begin, size_t end) const {
  std::string text;
  for (size_t i = begin; i < end; ++i) {
    const Token& tok = t_[i];
    bool tight = tok.kind == Kind::kDirective || tok.Is(",") || tok.Is("]") || tok.Is("}") ||
                 tok.Is(")") || tok.Is("|") ||
                 (i > begin && (t_[i - 1].Is("[") || t_[i - 1].Is("{") || t_[i - 1].Is("(") ||
                                t_[i - 1].Is("!") || t_[i - 1].Is("@") || t_[i - 1].Is("|") ||
                                t_[i - 1].Is("-")));
    if (i > begin && !tight) text += ' ';
    text += tok.text;
  }
  return text;
}

uint32_t Parser::PlaceLocal(Kernel& k, const std::string& name, const VariableDecl& decl) {
  uint64_t at = AlignUp(k.local_bytes, std::max<uint32_t>(decl.align, 1));
  symbols_.local[name] = static_cast<uint32_t>(at);
  k.local_bytes = static_cast<uint32_t>(at + decl.size);
  return static_cast<uint32_t>(at);
}

// call[.uni] [(ret, ...),] func [, (arg, ...)];  The copies are filled in by
// Finish once the callee is inlined.
Status Parser::Call(Kernel& k, RawInstruction raw) {
  size_t begin = pos_;
  CallSite site;
  site.line = raw.line;
  site.instruction = k.code.size();
  auto names = [&](std::vector<uint32_t>* offsets) -> Status {
    KILN_RETURN_IF_ERROR(Expect("("));
    if (Accept(")")) return Status::Ok();
    do {
      if (Peek().kind != Kind::kIdentifier) return Fail("expected a .param variable in a call");
      auto it = symbols_.local.find(Next().text);
      if (it == symbols_.local.end()) return Fail("call argument is not a .param variable of the call site");
      offsets->push_back(it->second);
    } while (Accept(","));
    return Expect(")");
  };
  if (Peek().Is("(")) {
    KILN_RETURN_IF_ERROR(names(&site.results));
    KILN_RETURN_IF_ERROR(Expect(","));
  }
  if (Peek().kind != Kind::kIdentifier) return Fail("expected the called function's name");
  site.callee = std::string(Next().text);
  if (Accept(",")) KILN_RETURN_IF_ERROR(names(&site.args));
  KILN_RETURN_IF_ERROR(Expect(";"));
  for (std::string_view m : raw.modifiers)
    if (m != ".uni") return Fail("unsupported call modifier '" + std::string(m) + "'");
  Instruction inst;
  inst.opcode = Opcode::kCall;
  inst.cls = InstructionClass::kControl;
  inst.line = raw.line;
  inst.text = raw.text + " " + TextOf(begin, pos_ - 1);
  if (!raw.guard.empty()) {
    int64_t r = symbols_.FindRegister(raw.guard);
    if (r < 0) return Fail("unknown predicate '" + std::string(raw.guard) + "'");
    inst.guard = static_cast<int32_t>(r);
    inst.guard_negated = raw.guard_negated;
  }
  calls_.push_back(std::move(site));
  k.code.push_back(std::move(inst));
  return Status::Ok();
}

// Parses the definition of `name` into `k`'s code (once per kernel).
StatusOr<const Parser::FunctionLayout*> Parser::Inline(Kernel& k, const std::string& name) {
  if (auto it = inlined_.find(name); it != inlined_.end()) return &it->second;
  auto def = function_defs_.find(name);
  if (def == function_defs_.end())
    return Error("call of '" + name + "', which the module declares but does not define");
  size_t saved_pos = pos_;
  NameMap<uint32_t> saved_labels = std::move(labels_);
  std::vector<Fixup> saved_fixups = std::move(fixups_);
  labels_.clear();
  fixups_.clear();
  pos_ = def->second;
  KILN_RETURN_IF_ERROR(Expect(".func"));
  FunctionLayout layout;
  layout.entry = static_cast<uint32_t>(k.code.size());
  auto slots = [&](std::vector<std::pair<uint32_t, uint32_t>>* out) -> Status {
    KILN_RETURN_IF_ERROR(Expect("("));
    if (Accept(")")) return Status::Ok();
    do {
      KILN_RETURN_IF_ERROR(Expect(".param"));
      KILN_ASSIGN_OR_RETURN(VariableDecl decl, ParameterDecl());
      uint32_t at = PlaceLocal(k, decl.name, decl);
      out->push_back({at, static_cast<uint32_t>(decl.size)});
    } while (Accept(","));
    return Expect(")");
  };
  if (Peek().Is("(")) KILN_RETURN_IF_ERROR(slots(&layout.results));
  Next();  // the name
  if (Peek().Is("(")) KILN_RETURN_IF_ERROR(slots(&layout.params));
  while (Peek().kind == Kind::kDirective) Next();  // .noreturn and the like
  KILN_RETURN_IF_ERROR(Expect("{"));
  symbols_.scopes.emplace_back();
  KILN_RETURN_IF_ERROR(Body(k));
  for (size_t i = layout.entry; i < k.code.size(); ++i)
    if (k.code[i].opcode == Opcode::kRet) k.code[i].returns_to_caller = true;
  if (k.code.size() == layout.entry || k.code.back().opcode != Opcode::kRet || k.code.back().guard >= 0) {
    Instruction ret;
    ret.opcode = Opcode::kRet;
    ret.returns_to_caller = true;
    ret.text = "ret (end of " + name + ")";
    ret.line = t_[pos_ - 1].line;
    k.code.push_back(std::move(ret));
  }
  for (const Fixup& f : fixups_) {
    auto it = labels_.find(f.label);
    if (it == labels_.end())
      return Error("PTX line " + std::to_string(f.line) + ": unknown label '" + f.label + "'");
    k.code[f.instruction].target = it->second;
  }
  pos_ = saved_pos;
  labels_ = std::move(saved_labels);
  fixups_ = std::move(saved_fixups);
  return &(inlined_[name] = std::move(layout));
}

Status Parser::Body(Kernel& k) {
  for (;;) {
    if (Peek().kind == Kind::kEnd) return Fail("kernel " + k.name + " has no closing '}'");
    if (Accept("{")) {
      symbols_.scopes.emplace_back();
      continue;
    }
    if (Accept("}")) {
      symbols_.scopes.pop_back();
      if (symbols_.scopes.empty()) return Status::Ok();
      continue;
    }
    KILN_RETURN_IF_ERROR(Statement(k));
  }
}

Status Parser::Finish(Kernel& k) {
  for (const Fixup& f : fixups_) {
    auto it = labels_.find(f.label);
    if (it == labels_.end()) {
      return Error("PTX line " + std::to_string(f.line) + ": unknown label '" + f.label + "'");
    }
    k.code[f.instruction].target = it->second;
  }
  // Falling off the end behaves as 'ret' would; make it explicit.
  if (k.code.empty() || (k.code.back().opcode != Opcode::kRet &&
                         k.code.back().opcode != Opcode::kExit) ||
      k.code.back().guard >= 0) {
    Instruction ret;
    ret.opcode = Opcode::kExit;
    ret.text = "exit (end of kernel)";
    ret.line = t_[pos_ > 0 ? pos_ - 1 : 0].line;
    k.code.push_back(std::move(ret));
  }
  // Inline the called functions after the kernel's code (their own calls
  // are appended to calls_ as their bodies are parsed).
  for (size_t c = 0; c < calls_.size(); ++c) {
    CallSite site = calls_[c];
    // The driver's own (see Instruction::Builtin).
    if (site.callee == "cudaGraphSetConditional" && !function_defs_.count(site.callee)) {
      if (site.args.size() != 2 || !site.results.empty())
        return Error("PTX line " + std::to_string(site.line) + ": cudaGraphSetConditional takes 2 arguments");
      Instruction& call = k.code[site.instruction];
      call.builtin = Instruction::Builtin::kGraphSetConditional;
      call.call_args = {{site.args[0], 0, 8}, {site.args[1], 0, 4}};
      continue;
    }
    KILN_ASSIGN_OR_RETURN(const FunctionLayout* f, Inline(k, site.callee));
    if (site.args.size() != f->params.size() || site.results.size() != f->results.size()) {
      return Error("PTX line " + std::to_string(site.line) + ": call of '" + site.callee + "' with " +
                   std::to_string(site.args.size()) + " arguments and " +
                   std::to_string(site.results.size()) + " results; it takes " +
                   std::to_string(f->params.size()) + " and returns " +
                   std::to_string(f->results.size()));
    }
    Instruction& call = k.code[site.instruction];
    call.target = f->entry;
    for (size_t i = 0; i < site.args.size(); ++i)
      call.call_args.push_back({site.args[i], f->params[i].first, f->params[i].second});
    for (size_t i = 0; i < site.results.size(); ++i)
      call.call_results.push_back({f->results[i].first, site.results[i], f->results[i].second});
  }
  calls_.clear();
  inlined_.clear();
  uint32_t dynamic_base = static_cast<uint32_t>(AlignUp(k.static_shared_bytes, 16));
  for (Instruction& inst : k.code) {
    for (auto* ops : {inst.dst, inst.src}) {
      for (int i = 0; i < (ops == inst.dst ? 2 : 4); ++i) {
        if (ops[i].dynamic_shared) ops[i].imm += dynamic_base;
        if (ops[i].special) ops[i].reg += next_register_;
      }
    }
  }
  k.num_registers = next_register_;
  k.declared_registers = declared_registers_;
  k.register_units = register_units_;
  k.register_units.resize(k.num_registers, 1);
  return Status::Ok();
}

}  // namespace

int64_t SymbolTable::FindRegister(std::string_view name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto r = it->find(name);
    if (r != it->end()) return r->second;
  }
  return -1;
}

std::optional<uint32_t> SymbolTable::SharedOffset(std::string_view name) {
  if (auto it = shared.find(name); it != shared.end()) return it->second;
  if (!dynamic_shared.empty() && name == dynamic_shared) return UINT32_MAX;
  if (!module_shared) return std::nullopt;
  auto m = module_shared->find(name);
  if (m == module_shared->end()) return std::nullopt;
  const VariableDecl& decl = m->second;
  if (decl.unsized) {
    dynamic_shared = decl.name;
    kernel->uses_dynamic_shared = true;
    return UINT32_MAX;
  }
  uint64_t at = AlignUp(kernel->static_shared_bytes, decl.align);
  shared[decl.name] = static_cast<uint32_t>(at);
  kernel->static_shared_bytes = static_cast<uint32_t>(at + decl.size);
  return static_cast<uint32_t>(at);
}

std::optional<SymbolTable::Symbol> SymbolTable::Resolve(std::string_view name) {
  if (auto p = params.find(name); p != params.end()) return Symbol{Space::kParam, p->second, false};
  if (auto l = local.find(name); l != local.end()) return Symbol{Space::kLocal, l->second, false};
  if (auto g = globals.find(name); g != globals.end()) return Symbol{Space::kGlobal, g->second, false};
  if (std::optional<uint32_t> s = SharedOffset(name)) {
    bool dynamic = *s == UINT32_MAX;
    return Symbol{Space::kShared, dynamic ? 0 : *s, dynamic};
  }
  return std::nullopt;
}

StatusOr<std::unique_ptr<Module>> LoadModule(std::string_view ptx_text,
                                             const GlobalPlacer& place_global) {
  KILN_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(ptx_text));
  Parser parser(tokens, place_global);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, parser.Parse());
  for (const std::unique_ptr<Kernel>& k : module->kernels)
    k->allocated_registers = EstimateAllocatedRegisters(*k, BuildIssueTable(*k));
  return module;
}

}  // namespace kiln::emu::ptx
