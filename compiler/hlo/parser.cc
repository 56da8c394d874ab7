// HLO module parser: the module header, the FileNames/.../StackFrames
// sections, computations and instructions (see parser.h).
//
//   module      ::= 'HloModule' name (',' attr)* section* computation+ section*
//   computation ::= 'ENTRY'? name ('(' params ')' '->' shape)? '{' instr+ '}'
//   instr       ::= 'ROOT'? name '=' shape? opcode '(' operands ')' (',' attr)*
//
// Operand names are resolved when a computation's closing brace is reached
// (so instructions may refer to later ones) and computation references once
// the whole module is read. Everything is validated before it reaches the
// IR: names resolve, names are unique, parameter numbers are 0..N-1, fixed
// operand counts hold, and the operand and call graphs are acyclic.
#include "compiler/hlo/parser.h"

#include <cstdio>
#include <optional>
#include <unordered_map>

#include "compiler/hlo/name_table.h"
#include "compiler/hlo/parse_context.h"
#include "compiler/hlo/verifier.h"

namespace kiln::hlo {
namespace {

using internal::ComputationName;
using internal::NameTable;
using internal::ParseContext;

struct PendingOperand {
  std::string_view name;
  SourcePos pos;
  std::optional<Shape> declared_shape;
};

// An instruction read from the text whose operands are not yet resolved.
struct PendingInstruction {
  std::unique_ptr<HloInstruction> inst;
  SourcePos name_pos;
  size_t first_operand = 0;  // operands are Body::operands[first, first + count)
  size_t operand_count = 0;
  std::vector<ComputationName> control_predecessors;
  bool shape_omitted = false;
};

// An attribute naming computations, resolved after the last computation.
struct PendingCall {
  HloInstruction* inst;
  std::string attribute;
  std::vector<ComputationName> names;
};

// The instructions of the computation being read.
struct Body {
  std::string_view computation;
  std::vector<PendingInstruction> insts;
  std::vector<PendingOperand> operands;  // of all instructions, contiguous per instruction
  NameTable names;
  std::optional<size_t> root;
  int anonymous = 0;  // counter for names of nested instructions
};

bool IsSectionKeyword(std::string_view w) {
  return w == "FileNames" || w == "FunctionNames" || w == "FileLocations" || w == "StackFrames";
}

std::optional<HloOpcode> LookupOpcode(std::string_view name) {
  static const std::unordered_map<std::string_view, HloOpcode> kOpcodes = [] {
    std::unordered_map<std::string_view, HloOpcode> m;
    for (int i = 0; i < OpcodeCount(); ++i) {
      HloOpcode op = static_cast<HloOpcode>(i);
      m.emplace(OpcodeName(op), op);
    }
    return m;
  }();
  auto it = kOpcodes.find(name);
  if (it == kOpcodes.end()) return std::nullopt;
  return it->second;
}

// Shape inference takes the element type of contractions from the declared
// shape; for a shape left out of the text, XLA's parser uses the more
// precise operand type (floating point over integer, then wider).
Shape ProvisionalShape(const HloInstruction& inst) {
  bool contraction = inst.opcode() == HloOpcode::kDot || inst.opcode() == HloOpcode::kRaggedDot ||
                     inst.opcode() == HloOpcode::kConvolution;
  if (!contraction || inst.operand_count() < 2) return Shape();
  ElementType a = inst.operand(0)->shape().element_type();
  ElementType b = inst.operand(1)->shape().element_type();
  auto rank = [](ElementType t) {
    return (IsFloat(t) || IsComplex(t) ? 1000 : 0) + BitWidth(t);
  };
  return Shape(rank(b) > rank(a) ? b : a, {});
}

class ModuleParser {
 public:
  ModuleParser(std::string_view text, std::string_view file_name)
      : ctx_(text, file_name), file_name_(file_name) {}

  StatusOr<std::unique_ptr<HloModule>> Run();

 private:
  Status ParseHeader();
  Status ParseHeaderAttribute(std::string_view name);
  StatusOr<ShapeIndex> ParseShapeIndex();
  Status ParseSections();
  Status ParseComputation();
  Status ParseInstruction(Body& body);
  // shape? opcode '(' operands ')' (',' attr)*; returns the instruction's
  // name. An empty `name` (a nested instruction) gets a generated one.
  StatusOr<std::string_view> ParseInstructionRhs(Body& body, std::string_view name,
                                                 const SourcePos& name_pos,
                                                 std::optional<Shape> shape,
                                                 bool allow_attributes);
  Status ParseOperands(Body& body, PendingInstruction& pending);
  // The current identifier is followed by '(' (a nested instruction).
  bool NextIsLParen();
  Status ParseAttributes(PendingInstruction& pending);
  Status FinishComputation(std::unique_ptr<HloComputation> comp, Body& body,
                           const SourcePos& name_pos, const std::optional<Shape>& result_shape,
                           const SourcePos& result_pos, bool is_entry);
  Status CheckAcyclic(const std::vector<PendingInstruction>& insts);
  Status ResolveCalls();

  ParseContext ctx_;
  std::string_view file_name_;
  // Operand lists being read, one per nesting level of nested instructions;
  // reused so that reading operands does not allocate.
  std::vector<std::vector<PendingOperand>> operand_scratch_;
  size_t operand_depth_ = 0;
  std::unique_ptr<HloModule> module_;
  std::unordered_map<std::string_view, HloComputation*> computations_;
  std::vector<PendingCall> calls_;
  HloComputation* entry_ = nullptr;
  HloComputation* last_ = nullptr;
  std::string sections_;
};

StatusOr<std::unique_ptr<HloModule>> ModuleParser::Run() {
  KILN_RETURN_IF_ERROR(ParseHeader());
  KILN_RETURN_IF_ERROR(ParseSections());
  while (ctx_.kind() != TokKind::kEof) {
    if (ctx_.kind() == TokKind::kIdent && IsSectionKeyword(ctx_.tok().text)) {
      KILN_RETURN_IF_ERROR(ParseSections());
      continue;
    }
    KILN_RETURN_IF_ERROR(ParseComputation());
  }
  if (last_ == nullptr) return ctx_.TokenError("expected a computation");
  module_->set_entry(entry_ ? entry_ : last_);
  KILN_RETURN_IF_ERROR(ResolveCalls());
  module_->set_trailing_sections(std::move(sections_));
  return std::move(module_);
}

// ---------------------------------------------------------------------------
// Header

Status ModuleParser::ParseHeader() {
  if (!ctx_.AtWord("HloModule")) return ctx_.TokenError("expected 'HloModule'");
  ctx_.lex().Lex();
  KILN_ASSIGN_OR_RETURN(std::string_view name, ctx_.ParseName("a module name"));
  module_ = std::make_unique<HloModule>(std::string(name));
  while (ctx_.EatIf(TokKind::kComma)) {
    KILN_ASSIGN_OR_RETURN(std::string_view attr, ctx_.ParseName("a module attribute name"));
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kEqual, "'=' after the attribute name"));
    KILN_RETURN_IF_ERROR(ParseHeaderAttribute(attr));
  }
  return Status::Ok();
}

StatusOr<ShapeIndex> ModuleParser::ParseShapeIndex() {
  ShapeIndex index;
  KILN_RETURN_IF_ERROR(ctx_.ParseIntList(TokKind::kLBrace, TokKind::kRBrace, TokKind::kComma, &index));
  return index;
}

Status ModuleParser::ParseHeaderAttribute(std::string_view name) {
  ModuleConfig& config = module_->config();
  SourcePos pos = ctx_.pos();
  if (name == "is_scheduled") {
    KILN_ASSIGN_OR_RETURN(config.is_scheduled, ctx_.ParseBool());
  } else if (name == "replica_count" || name == "num_partitions") {
    KILN_ASSIGN_OR_RETURN(int64_t n, ctx_.ParseInt64());
    if (n < 1) return ctx_.ErrorAt(pos, std::string(name) + " must be at least 1");
    (name == "replica_count" ? config.replica_count : config.num_partitions) = n;
  } else if (name == "entry_computation_layout") {
    ProgramShape program;
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLBrace, "'{'"));
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLParen, "'(' before the parameter shapes"));
    if (!ctx_.EatIf(TokKind::kRParen)) {
      while (true) {
        KILN_ASSIGN_OR_RETURN(Shape s, internal::ParseShape(ctx_));
        program.parameters.push_back(std::move(s));
        if (!ctx_.EatIf(TokKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')' after the parameter shapes"));
    }
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kArrow, "'->' before the result shape"));
    KILN_ASSIGN_OR_RETURN(program.result, internal::ParseShape(ctx_));
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRBrace, "'}'"));
    config.entry_computation_layout = std::move(program);
  } else if (name == "input_output_alias") {
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLBrace, "'{'"));
    while (ctx_.kind() != TokKind::kRBrace) {
      InputOutputAlias alias;
      KILN_ASSIGN_OR_RETURN(alias.output_index, ParseShapeIndex());
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kColon, "':' after the output index"));
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLParen, "'('"));
      KILN_ASSIGN_OR_RETURN(alias.parameter_number, ctx_.ParseInt64());
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kComma, "','"));
      KILN_ASSIGN_OR_RETURN(alias.parameter_index, ParseShapeIndex());
      if (ctx_.EatIf(TokKind::kComma)) {
        if (ctx_.AtWord("must-alias")) alias.must_alias = true;
        else if (!ctx_.AtWord("may-alias")) return ctx_.TokenError("expected may-alias or must-alias");
        ctx_.lex().Lex();
      }
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')'"));
      config.input_output_alias.push_back(std::move(alias));
      if (!ctx_.EatIf(TokKind::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRBrace, "'}'"));
  } else if (name == "buffer_donor") {
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLBrace, "'{'"));
    while (ctx_.kind() != TokKind::kRBrace) {
      BufferDonor donor;
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLParen, "'('"));
      KILN_ASSIGN_OR_RETURN(donor.parameter_number, ctx_.ParseInt64());
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kComma, "','"));
      KILN_ASSIGN_OR_RETURN(donor.parameter_index, ParseShapeIndex());
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')'"));
      config.buffer_donors.push_back(std::move(donor));
      if (!ctx_.EatIf(TokKind::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRBrace, "'}'"));
  } else {
    KILN_ASSIGN_OR_RETURN(std::string_view raw, internal::ParseRawValue(ctx_));
    config.other_attributes.emplace_back(std::string(name), std::string(raw));
  }
  return Status::Ok();
}

// FileNames / FunctionNames / FileLocations / StackFrames: lists of
// `<int> "<string>"` or `<int> {...}` kept verbatim.
Status ModuleParser::ParseSections() {
  if (!(ctx_.kind() == TokKind::kIdent && IsSectionKeyword(ctx_.tok().text))) return Status::Ok();
  const char* start = ctx_.pos().ptr;
  while (ctx_.kind() == TokKind::kIdent && IsSectionKeyword(ctx_.tok().text)) {
    ctx_.lex().Lex();
    while (ctx_.EatIf(TokKind::kInt)) {
      if (ctx_.kind() == TokKind::kString) {
        ctx_.lex().Lex();
      } else if (ctx_.kind() == TokKind::kLBrace) {
        KILN_RETURN_IF_ERROR(internal::ParseRawValue(ctx_).status());
      } else {
        return ctx_.TokenError("expected a string or '{' in a stack-frame section");
      }
    }
  }
  const char* end = ctx_.pos().ptr;
  while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t'))
    --end;
  if (!sections_.empty()) sections_ += '\n';
  sections_.append(start, end - start);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Computations

Status ModuleParser::ParseComputation() {
  SourcePos start = ctx_.pos();
  bool is_entry = false;
  if (ctx_.AtWord("ENTRY") && ctx_.lex().PeekKind() == TokKind::kIdent) {
    is_entry = true;
    ctx_.lex().Lex();
  }
  SourcePos name_pos = ctx_.pos();
  KILN_ASSIGN_OR_RETURN(std::string_view name, ctx_.ParseName("a computation name"));
  if (computations_.count(name))
    return ctx_.ErrorAt(name_pos, "computation '" + std::string(name) + "' is defined twice");
  if (is_entry && entry_)
    return ctx_.ErrorAt(start, "more than one ENTRY computation");

  std::optional<Shape> result_shape;
  SourcePos result_pos;
  if (ctx_.EatIf(TokKind::kLParen)) {
    if (!ctx_.EatIf(TokKind::kRParen)) {
      while (true) {
        KILN_RETURN_IF_ERROR(ctx_.ParseName("a parameter name").status());
        KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kColon, "':' after the parameter name"));
        KILN_RETURN_IF_ERROR(internal::ParseShape(ctx_).status());
        if (!ctx_.EatIf(TokKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')' after the parameters"));
    }
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kArrow, "'->' before the result shape"));
    result_pos = ctx_.pos();
    KILN_ASSIGN_OR_RETURN(result_shape, internal::ParseShape(ctx_));
  }
  KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLBrace, "'{' to start the computation body"));

  Body body;
  body.computation = name;
  while (!ctx_.EatIf(TokKind::kRBrace)) KILN_RETURN_IF_ERROR(ParseInstruction(body));
  if (body.insts.empty())
    return ctx_.ErrorAt(name_pos, "computation '" + std::string(name) + "' has no instructions");

  auto comp = std::make_unique<HloComputation>(std::string(name));
  KILN_RETURN_IF_ERROR(
      FinishComputation(std::move(comp), body, name_pos, result_shape, result_pos, is_entry));
  // Computation attributes (execution_thread=...) carry nothing kiln uses.
  while (ctx_.kind() == TokKind::kComma) {
    ctx_.lex().Lex();
    KILN_RETURN_IF_ERROR(ctx_.ParseName("a computation attribute name").status());
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kEqual, "'='"));
    KILN_RETURN_IF_ERROR(internal::ParseRawValue(ctx_).status());
  }
  return Status::Ok();
}

Status ModuleParser::ParseInstruction(Body& body) {
  SourcePos root_pos = ctx_.pos();
  bool is_root = false;
  if (ctx_.AtWord("ROOT") && ctx_.lex().PeekKind() == TokKind::kIdent) {
    is_root = true;
    ctx_.lex().Lex();
  }
  SourcePos name_pos = ctx_.pos();
  KILN_ASSIGN_OR_RETURN(std::string_view name, ctx_.ParseName("an instruction name or '}'"));
  if (is_root && body.root) return ctx_.ErrorAt(root_pos, "more than one ROOT instruction");
  KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kEqual, "'=' after the instruction name"));
  KILN_RETURN_IF_ERROR(
      ParseInstructionRhs(body, name, name_pos, std::nullopt, /*allow_attributes=*/true).status());
  if (is_root) body.root = body.insts.size() - 1;
  return Status::Ok();
}

StatusOr<std::string_view> ModuleParser::ParseInstructionRhs(Body& body, std::string_view name,
                                                             const SourcePos& name_pos,
                                                             std::optional<Shape> shape,
                                                             bool allow_attributes) {
  internal::DepthGuard guard(ctx_);
  KILN_RETURN_IF_ERROR(guard.status());
  if (!shape && internal::AtShape(ctx_)) {
    KILN_ASSIGN_OR_RETURN(shape, internal::ParseShape(ctx_));
  }
  SourcePos opcode_pos = ctx_.pos();
  if (ctx_.kind() != TokKind::kIdent) return ctx_.TokenError("expected an opcode");
  std::optional<HloOpcode> opcode = LookupOpcode(ctx_.tok().text);
  if (!opcode && ctx_.lex().FollowedBy('['))
    return ctx_.ErrorAt(opcode_pos, "unknown element type '" +
                                        std::string(ctx_.tok().text.substr(0, 60)) + "'");
  if (!opcode)
    return ctx_.ErrorAt(opcode_pos, "unknown opcode '" +
                                        std::string(ctx_.tok().text.substr(0, 60)) + "'");
  ctx_.lex().Lex();
  bool needs_shape = *opcode == HloOpcode::kParameter || *opcode == HloOpcode::kConstant;
  if (!shape && needs_shape)
    return ctx_.ErrorAt(opcode_pos, std::string(OpcodeName(*opcode)) + " needs an explicit shape");
  PendingInstruction pending;
  pending.name_pos = name_pos;
  pending.shape_omitted = !shape;
  std::string full_name(name);
  if (name.empty()) {
    // Nested instruction: "<opcode>.anon", made unique within the body.
    std::string base = std::string(OpcodeName(*opcode)) + ".anon";
    full_name = base;
    while (body.names.count(full_name)) full_name = base + "." + std::to_string(++body.anonymous);
  }
  pending.inst = std::make_unique<HloInstruction>(*opcode, std::move(full_name),
                                                  shape ? std::move(*shape) : Shape());
  HloInstruction& inst = *pending.inst;
  inst.set_location(SourceLocation{std::string(file_name_), name_pos.line, name_pos.col});

  KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLParen, "'(' after the opcode"));
  if (*opcode == HloOpcode::kParameter) {
    SourcePos p = ctx_.pos();
    KILN_ASSIGN_OR_RETURN(int64_t number, ctx_.ParseInt64());
    if (number < 0) return ctx_.ErrorAt(p, "parameter number must be non-negative");
    inst.set_parameter_number(number);
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')' after the parameter number"));
  } else if (*opcode == HloOpcode::kConstant) {
    bool elided = false;
    KILN_ASSIGN_OR_RETURN(Literal literal, internal::ParseLiteral(ctx_, inst.shape(), &elided));
    inst.set_literal(std::move(literal));
    inst.set_literal_elided(elided);
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')' after the constant"));
  } else {
    KILN_RETURN_IF_ERROR(ParseOperands(body, pending));
    int arity = OpcodeArity(*opcode);
    if (arity != kVariadic && pending.operand_count != static_cast<size_t>(arity))
      return ctx_.ErrorAt(opcode_pos, std::string(OpcodeName(*opcode)) + " expects " +
                                          std::to_string(arity) + " operand(s), got " +
                                          std::to_string(pending.operand_count));
  }
  // Nested instructions take no attributes: their commas separate operands.
  if (allow_attributes) KILN_RETURN_IF_ERROR(ParseAttributes(pending));
  // The name view points into the instruction, which never moves.
  std::string_view stored(pending.inst->name());
  if (!body.names.Insert(stored, body.insts.size()))
    return ctx_.ErrorAt(name_pos, "instruction '" + pending.inst->name() +
                                      "' is defined twice in computation '" +
                                      std::string(body.computation) + "'");
  body.insts.push_back(std::move(pending));
  return stored;
}

// operand ::= shape? name | shape? opcode '(' ... ')'   (a nested instruction)
Status ModuleParser::ParseOperands(Body& body, PendingInstruction& pending) {
  if (ctx_.EatIf(TokKind::kRParen)) return Status::Ok();
  const size_t level = operand_depth_++;
  struct Restore {
    size_t& depth;
    ~Restore() { --depth; }
  } restore{operand_depth_};
  if (operand_scratch_.size() <= level) operand_scratch_.resize(level + 1);
  operand_scratch_[level].clear();
  while (true) {
    PendingOperand op;
    SourcePos start = ctx_.pos();
    if (internal::AtShape(ctx_)) {
      KILN_ASSIGN_OR_RETURN(op.declared_shape, internal::ParseShape(ctx_));
    }
    op.pos = ctx_.pos();
    if (ctx_.kind() == TokKind::kIdent && NextIsLParen() && LookupOpcode(ctx_.tok().text)) {
      // A nested instruction; it appends its own operands to the body first,
      // so this list stays in the scratch buffer until it is complete.
      KILN_ASSIGN_OR_RETURN(op.name, ParseInstructionRhs(body, {}, start,
                                                          std::move(op.declared_shape),
                                                          /*allow_attributes=*/false));
      op.declared_shape.reset();
    } else {
      KILN_ASSIGN_OR_RETURN(op.name, ctx_.ParseName("an operand name"));
    }
    operand_scratch_[level].push_back(std::move(op));
    if (!ctx_.EatIf(TokKind::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRParen, "')' after the operands"));
  std::vector<PendingOperand>& list = operand_scratch_[level];
  pending.first_operand = body.operands.size();
  pending.operand_count = list.size();
  for (PendingOperand& op : list) body.operands.push_back(std::move(op));
  return Status::Ok();
}

bool ModuleParser::NextIsLParen() {
  if (ctx_.lex().FollowedBy('(')) return true;
  if (!ctx_.lex().FollowedBy(' ') && !ctx_.lex().FollowedBy('\n') &&
      !ctx_.lex().FollowedBy('\t') && !ctx_.lex().FollowedBy('/'))
    return false;
  return ctx_.lex().PeekKind() == TokKind::kLParen;
}

Status ModuleParser::ParseAttributes(PendingInstruction& pending) {
  HloInstruction& inst = *pending.inst;
  while (ctx_.EatIf(TokKind::kComma)) {
    SourcePos pos = ctx_.pos();
    KILN_ASSIGN_OR_RETURN(std::string_view name, ctx_.ParseName("an attribute name"));
    KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kEqual, "'=' after the attribute name"));
    if (name == "control-predecessors") {
      if (!pending.control_predecessors.empty())
        return ctx_.ErrorAt(pos, "attribute 'control-predecessors' is repeated");
      KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kLBrace, "'{' before the predecessors"));
      if (!ctx_.EatIf(TokKind::kRBrace)) {
        while (true) {
          SourcePos p = ctx_.pos();
          KILN_ASSIGN_OR_RETURN(std::string_view pred, ctx_.ParseName("an instruction name"));
          pending.control_predecessors.push_back({pred, p});
          if (!ctx_.EatIf(TokKind::kComma)) break;
        }
        KILN_RETURN_IF_ERROR(ctx_.Expect(TokKind::kRBrace, "'}' after the predecessors"));
      }
      continue;
    }
    if (inst.HasAttribute(name))
      return ctx_.ErrorAt(pos, "attribute '" + std::string(name) + "' is repeated");
    std::vector<ComputationName> refs;
    KILN_ASSIGN_OR_RETURN(AttrValue value, internal::ParseAttributeValue(ctx_, name, &refs));
    bool is_call = std::holds_alternative<ComputationRefs>(value);
    inst.SetAttribute(std::string(name), std::move(value));
    if (is_call) calls_.push_back({&inst, std::string(name), std::move(refs)});
  }
  return Status::Ok();
}

Status ModuleParser::FinishComputation(std::unique_ptr<HloComputation> comp, Body& body,
                                       const SourcePos& name_pos,
                                       const std::optional<Shape>& result_shape,
                                       const SourcePos& result_pos, bool is_entry) {
  std::vector<PendingInstruction>& insts = body.insts;
  const auto& names = body.names;
  const std::optional<size_t>& root = body.root;
  // Parameter numbers must be exactly 0..N-1.
  size_t n_params = 0;
  for (const PendingInstruction& p : insts)
    if (p.inst->opcode() == HloOpcode::kParameter) ++n_params;
  std::vector<bool> taken(n_params, false);
  for (const PendingInstruction& p : insts) {
    if (p.inst->opcode() != HloOpcode::kParameter) continue;
    int64_t n = p.inst->parameter_number();
    if (n >= static_cast<int64_t>(n_params))
      return ctx_.ErrorAt(p.name_pos, "parameter number " + std::to_string(n) +
                                          " is out of range: the computation has " +
                                          std::to_string(n_params) + " parameter(s)");
    if (taken[n])
      return ctx_.ErrorAt(p.name_pos, "parameter number " + std::to_string(n) + " is used twice");
    taken[n] = true;
  }
  // Resolve operands and control predecessors.
  std::vector<HloInstruction*> ptrs;
  ptrs.reserve(insts.size());
  for (PendingInstruction& p : insts) ptrs.push_back(p.inst.get());
  bool forward = false;
  auto lookup = [&](std::string_view name, const SourcePos& pos, size_t user,
                    const char* what) -> StatusOr<size_t> {
    size_t index = names.Find(name);
    if (index == NameTable::kNone)
      return ctx_.ErrorAt(pos, std::string("undefined ") + what + " '" + std::string(name) + "'");
    if (index >= user) forward = true;
    return index;
  };
  for (size_t i = 0; i < insts.size(); ++i) {
    PendingInstruction& p = insts[i];
    for (size_t k = p.first_operand; k < p.first_operand + p.operand_count; ++k) {
      const PendingOperand& op = body.operands[k];
      KILN_ASSIGN_OR_RETURN(size_t index, lookup(op.name, op.pos, i, "operand"));
      HloInstruction* operand = ptrs[index];
      if (op.declared_shape && !insts[index].shape_omitted &&
          !op.declared_shape->Compatible(operand->shape()))
        return ctx_.ErrorAt(op.pos, "operand '" + std::string(op.name) + "' is written as " +
                                        op.declared_shape->ToString() + " but has shape " +
                                        operand->shape().ToString());
      p.inst->AppendOperand(operand);
    }
    for (const ComputationName& pred : p.control_predecessors) {
      KILN_ASSIGN_OR_RETURN(size_t from, lookup(pred.name, pred.pos, i, "control predecessor"));
      ptrs[from]->AddControlDependencyTo(p.inst.get());
    }
  }
  if (forward) KILN_RETURN_IF_ERROR(CheckAcyclic(insts));
  for (PendingInstruction& p : insts) comp->AddInstruction(std::move(p.inst));
  comp->set_root(ptrs[root ? *root : ptrs.size() - 1]);

  // Shapes left out in the text come from shape inference, operands first.
  bool any_omitted = false;
  for (const PendingInstruction& p : insts) any_omitted |= p.shape_omitted;
  if (any_omitted) {
    std::unordered_map<const HloInstruction*, size_t> index;
    for (size_t i = 0; i < ptrs.size(); ++i) index[ptrs[i]] = i;
    for (HloInstruction* inst : comp->PostOrder()) {
      const PendingInstruction& p = insts[index.at(inst)];
      if (!p.shape_omitted) continue;
      inst->mutable_shape() = ProvisionalShape(*inst);
      StatusOr<Shape> inferred = InferShape(*inst);
      if (!inferred.ok())
        return ctx_.ErrorAt(p.name_pos, "cannot infer the omitted shape of '" + inst->name() +
                                            "': " + inferred.status().message());
      if (!internal::ShapeWithinBounds(*inferred))
        return ctx_.ErrorAt(p.name_pos, "the inferred shape " + inferred->ToString() + " of '" +
                                            inst->name() + "' is not a valid shape");
      inst->mutable_shape() = std::move(inferred).value();
    }
  }
  if (result_shape && !result_shape->Compatible(comp->root()->shape()))
    return ctx_.ErrorAt(result_pos, "computation '" + comp->name() + "' is declared to return " +
                                        result_shape->ToString() + " but its root '" +
                                        comp->root()->name() + "' has shape " +
                                        comp->root()->shape().ToString());
  HloComputation* added = module_->AddComputation(std::move(comp));
  computations_.emplace(std::string_view(added->name()), added);
  if (is_entry) entry_ = added;
  last_ = added;
  return Status::Ok();
}

// Operand and control edges may point forward in the text; reject cycles
// (iterative DFS, so long chains cannot overflow the stack).
Status ModuleParser::CheckAcyclic(const std::vector<PendingInstruction>& insts) {
  std::unordered_map<const HloInstruction*, size_t> index;
  for (size_t i = 0; i < insts.size(); ++i) index[insts[i].inst.get()] = i;
  std::vector<uint8_t> state(insts.size(), 0);  // 0 new, 1 on stack, 2 done
  for (size_t start = 0; start < insts.size(); ++start) {
    if (state[start]) continue;
    std::vector<std::pair<size_t, size_t>> stack{{start, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const HloInstruction* inst = insts[node].inst.get();
      size_t n_ops = inst->operands().size();
      size_t total = n_ops + inst->control_predecessors().size();
      if (next == total) {
        state[node] = 2;
        stack.pop_back();
        continue;
      }
      const HloInstruction* dep = next < n_ops ? inst->operands()[next]
                                               : inst->control_predecessors()[next - n_ops];
      ++next;
      size_t d = index.at(dep);
      if (state[d] == 1)
        return ctx_.ErrorAt(insts[d].name_pos,
                            "instruction '" + dep->name() + "' depends on itself (cycle)");
      if (state[d] == 0) {
        state[d] = 1;
        stack.push_back({d, 0});
      }
    }
  }
  return Status::Ok();
}

// Resolves computation references and rejects recursive calls.
Status ModuleParser::ResolveCalls() {
  std::unordered_map<const HloComputation*, std::vector<std::pair<HloComputation*, SourcePos>>>
      callees;
  for (PendingCall& call : calls_) {
    ComputationRefs refs;
    for (const ComputationName& n : call.names) {
      auto it = computations_.find(n.name);
      if (it == computations_.end())
        return ctx_.ErrorAt(n.pos, "unknown computation '" + std::string(n.name) + "'");
      refs.computations.push_back(it->second);
      callees[call.inst->parent()].push_back({it->second, n.pos});
    }
    call.inst->SetAttribute(call.attribute, std::move(refs));
  }
  std::unordered_map<const HloComputation*, uint8_t> state;  // 1 on stack, 2 done
  for (HloComputation* start : module_->computations()) {
    if (state[start]) continue;
    std::vector<std::pair<const HloComputation*, size_t>> stack{{start, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [comp, next] = stack.back();
      const auto& out = callees[comp];
      if (next == out.size()) {
        state[comp] = 2;
        stack.pop_back();
        continue;
      }
      auto [callee, pos] = out[next++];
      uint8_t& s = state[callee];
      if (s == 1)
        return ctx_.ErrorAt(pos, "computation '" + callee->name() + "' is called recursively");
      if (s == 0) {
        s = 1;
        stack.push_back({callee, 0});
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name) {
  ModuleParser parser(text, file_name);
  return parser.Run();
}

StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error(path + ": error: cannot open file");
  std::string text;
  bool failed = std::fseek(f, 0, SEEK_END) != 0;
  long size = failed ? -1 : std::ftell(f);
  if (size >= 0 && std::fseek(f, 0, SEEK_SET) == 0) {
    text.resize(static_cast<size_t>(size));
    failed = std::fread(text.data(), 1, text.size(), f) != text.size();
  } else {
    failed = true;
  }
  std::fclose(f);
  if (failed) return Error(path + ": error: cannot read file");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text, path));
  module->set_source_file(path);
  return module;
}

StatusOr<Shape> ParseShape(std::string_view text) {
  ParseContext ctx(text, "<shape>");
  KILN_ASSIGN_OR_RETURN(Shape shape, internal::ParseShape(ctx));
  if (ctx.kind() != TokKind::kEof) return ctx.TokenError("expected end of shape");
  return shape;
}

StatusOr<Literal> ParseLiteral(std::string_view text, const Shape& shape) {
  ParseContext ctx(text, "<literal>");
  bool elided = false;
  KILN_ASSIGN_OR_RETURN(Literal literal, internal::ParseLiteral(ctx, shape, &elided));
  if (ctx.kind() != TokKind::kEof) return ctx.TokenError("expected end of literal");
  return literal;
}

}  // namespace kiln::hlo
