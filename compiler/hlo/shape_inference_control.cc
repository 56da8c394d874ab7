// Shape inference for calls and control flow (call, fusion, while,
// conditional, async wrappers), leaves (parameter, constant), tokens, host
// transfers, copy-start/done, random number ops and dynamic dimension sizes.
//
// A called computation's signature must match its call site exactly
// (ignoring layouts): operands against parameters, root against result.
#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo::shape_inference {
namespace {

// Operand i of `inst` matches parameter j of `sig`.
Status CheckArgument(const HloInstruction& inst, int64_t operand, const Signature& sig,
                     int64_t parameter) {
  const Shape& arg = inst.operand(operand)->shape();
  if (!arg.Compatible(sig.parameters[parameter]))
    return Fail(inst, "operand " + std::to_string(operand) + " has shape " + Str(arg) +
                          " but parameter " + std::to_string(parameter) + " of " + sig.name +
                          " has shape " + Str(sig.parameters[parameter]));
  return Status::Ok();
}

Status CheckParameterCount(const HloInstruction& inst, const Signature& sig, size_t expected) {
  if (sig.parameters.size() != expected)
    return Fail(inst, "called computation " + sig.name + " must take " + std::to_string(expected) +
                          " parameter(s), takes " + std::to_string(sig.parameters.size()));
  return Status::Ok();
}

// Operands match the parameters one to one; the result is the root.
StatusOr<Shape> InferCallLike(const HloInstruction& inst, std::string_view attr) {
  KILN_ASSIGN_OR_RETURN(Signature sig, CalleeSignature(inst, attr));
  KILN_RETURN_IF_ERROR(CheckParameterCount(inst, sig, inst.operand_count()));
  for (int64_t i = 0; i < inst.operand_count(); ++i)
    KILN_RETURN_IF_ERROR(CheckArgument(inst, i, sig, i));
  return sig.result;
}

Status ExpectToken(const HloInstruction& inst, int64_t operand) {
  if (!inst.operand(operand)->shape().IsToken())
    return Fail(inst, "operand " + std::to_string(operand) + " must be a token, got " +
                          Str(inst.operand(operand)->shape()));
  return Status::Ok();
}

// The u32[] context element of send/recv/copy-start tuples.
Shape U32Scalar() { return Shape::Scalar(ElementType::kU32); }

}  // namespace

StatusOr<Shape> InferCall(const HloInstruction& inst) { return InferCallLike(inst, "to_apply"); }

StatusOr<Shape> InferFusion(const HloInstruction& inst) { return InferCallLike(inst, "calls"); }

StatusOr<Shape> InferWhile(const HloInstruction& inst) {
  const Shape init = WithoutLayout(inst.operand(0)->shape());
  KILN_ASSIGN_OR_RETURN(Signature cond, CalleeSignature(inst, "condition"));
  KILN_ASSIGN_OR_RETURN(Signature body, CalleeSignature(inst, "body"));
  KILN_RETURN_IF_ERROR(CheckParameterCount(inst, cond, 1));
  KILN_RETURN_IF_ERROR(CheckParameterCount(inst, body, 1));
  KILN_RETURN_IF_ERROR(CheckArgument(inst, 0, cond, 0));
  KILN_RETURN_IF_ERROR(CheckArgument(inst, 0, body, 0));
  if (!cond.result.Compatible(Shape::Scalar(ElementType::kPred)))
    return Fail(inst, "while condition " + cond.name + " must return pred[], returns " +
                          Str(cond.result));
  if (!body.result.Compatible(init))
    return Fail(inst, "while body " + body.name + " returns " + Str(body.result) +
                          " but the loop state is " + Str(init));
  return init;
}

StatusOr<Shape> InferConditional(const HloInstruction& inst) {
  const Shape& index = inst.operand(0)->shape();
  const std::vector<HloComputation*> branches = inst.branch_computations();
  if (index.Compatible(Shape::Scalar(ElementType::kPred))) {
    if (branches.size() != 2)
      return Fail(inst, "a pred conditional needs true and false computations, has " +
                            std::to_string(branches.size()) + " branches");
  } else if (index.Compatible(Shape::Scalar(ElementType::kS32))) {
    if (branches.empty()) return Fail(inst, "an indexed conditional needs at least one branch");
  } else {
    return Fail(inst, "conditional selector must be pred[] or s32[], got " + Str(index));
  }
  if (inst.operand_count() != static_cast<int64_t>(branches.size()) + 1)
    return Fail(inst, "conditional with " + std::to_string(branches.size()) + " branches needs " +
                          std::to_string(branches.size() + 1) + " operands, has " +
                          std::to_string(inst.operand_count()));
  Shape result;
  for (size_t j = 0; j < branches.size(); ++j) {
    KILN_ASSIGN_OR_RETURN(Signature sig, SignatureOf(inst, branches[j]));
    KILN_RETURN_IF_ERROR(CheckParameterCount(inst, sig, 1));
    KILN_RETURN_IF_ERROR(CheckArgument(inst, static_cast<int64_t>(j) + 1, sig, 0));
    if (j == 0) {
      result = sig.result;
    } else if (!sig.result.Compatible(result)) {
      return Fail(inst, "branch " + std::to_string(j) + " (" + sig.name + ") returns " +
                            Str(sig.result) + " but branch 0 returns " + Str(result));
    }
  }
  return result;
}

StatusOr<Shape> InferAsync(const HloInstruction& inst) {
  // async-start's shape is ((operands...), wrapped result, context...);
  // async-update passes it through; async-done extracts element 1.
  if (inst.opcode() == HloOpcode::kAsyncStart) {
    KILN_ASSIGN_OR_RETURN(Signature sig, CalleeSignature(inst, "calls"));
    KILN_RETURN_IF_ERROR(CheckParameterCount(inst, sig, inst.operand_count()));
    std::vector<Shape> args;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      KILN_RETURN_IF_ERROR(CheckArgument(inst, i, sig, i));
      args.push_back(WithoutLayout(inst.operand(i)->shape()));
    }
    const Shape& declared = inst.shape();
    if (!declared.IsTuple() || declared.tuple_size() < 2)
      return Fail(inst, "async-start must produce a tuple of at least 2 elements, declared " +
                            Str(declared));
    std::vector<Shape> elements{Shape::Tuple(args), sig.result};
    for (int64_t i = 2; i < declared.tuple_size(); ++i)
      elements.push_back(WithoutLayout(declared.tuple_shape(i)));  // opaque context
    return Shape::Tuple(std::move(elements));
  }
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.IsTuple() || operand.tuple_size() < 2)
    return Fail(inst, "operand must be an async tuple, got " + Str(operand));
  if (inst.opcode() == HloOpcode::kAsyncUpdate) return WithoutLayout(operand);
  return WithoutLayout(operand.tuple_shape(1));
}

StatusOr<Shape> InferParameter(const HloInstruction& inst) {
  const HloComputation* comp = inst.parent();
  const int64_t n = inst.parameter_number();
  if (comp != nullptr &&
      (n < 0 || n >= comp->parameter_count() || comp->parameter(n) != &inst))
    return Fail(inst, "parameter number " + std::to_string(n) +
                          " does not match its computation's signature");
  return WithoutLayout(inst.shape());
}

StatusOr<Shape> InferConstant(const HloInstruction& inst) {
  if (!inst.has_literal()) return Fail(inst, "constant has no literal");
  return WithoutLayout(inst.literal().shape());
}

StatusOr<Shape> InferTokenOp(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kAfterAll) {
    for (int64_t i = 0; i < inst.operand_count(); ++i) KILN_RETURN_IF_ERROR(ExpectToken(inst, i));
    return Shape::Token();
  }
  KILN_RETURN_IF_ERROR(ExpectToken(inst, 1));  // add-dependency(value, token)
  return WithoutLayout(inst.operand(0)->shape());
}

StatusOr<Shape> InferHostTransfer(const HloInstruction& inst) {
  const Shape& declared = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kSend:  // (data, token) -> (data, u32[] context, token)
      KILN_RETURN_IF_ERROR(ExpectToken(inst, 1));
      return Shape::Tuple({WithoutLayout(inst.operand(0)->shape()), U32Scalar(), Shape::Token()});
    case HloOpcode::kRecv:  // token -> (data, u32[] context, token)
      KILN_RETURN_IF_ERROR(ExpectToken(inst, 0));
      if (!declared.IsTuple() || declared.tuple_size() != 3)
        return Fail(inst, "recv must produce (data, u32[], token), declared " + Str(declared));
      return Shape::Tuple({WithoutLayout(declared.tuple_shape(0)), U32Scalar(), Shape::Token()});
    case HloOpcode::kSendDone:
      return Shape::Token();
    case HloOpcode::kRecvDone: {
      const Shape& operand = inst.operand(0)->shape();
      if (!operand.IsTuple() || operand.tuple_size() < 1)
        return Fail(inst, "recv-done operand must be a recv tuple, got " + Str(operand));
      return Shape::Tuple({WithoutLayout(operand.tuple_shape(0)), Shape::Token()});
    }
    case HloOpcode::kInfeed:  // token -> (data, token)
      KILN_RETURN_IF_ERROR(ExpectToken(inst, 0));
      if (!declared.IsTuple() || declared.tuple_size() != 2)
        return Fail(inst, "infeed must produce (data, token), declared " + Str(declared));
      return Shape::Tuple({WithoutLayout(declared.tuple_shape(0)), Shape::Token()});
    default:  // outfeed(data, token) -> token
      KILN_RETURN_IF_ERROR(ExpectToken(inst, 1));
      return Shape::Token();
  }
}

StatusOr<Shape> InferCopyStartDone(const HloInstruction& inst) {
  const Shape operand = WithoutLayout(inst.operand(0)->shape());
  if (inst.opcode() == HloOpcode::kCopyStart)  // (destination, source, u32[] context)
    return Shape::Tuple({operand, operand, U32Scalar()});
  if (!operand.IsTuple() || operand.tuple_size() < 2)
    return Fail(inst, "copy-done operand must be a copy-start tuple, got " + Str(operand));
  return operand.tuple_shape(0);
}

StatusOr<Shape> InferRng(const HloInstruction& inst) {
  const Shape& declared = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kRng: {
      const Shape& a = inst.operand(0)->shape();
      const Shape& b = inst.operand(1)->shape();
      if (!a.IsScalar() || !b.IsScalar() || a.element_type() != b.element_type())
        return Fail(inst, "rng bounds must be scalars of one type, got " + Str(a) + " and " + Str(b));
      KILN_RETURN_IF_ERROR(ExpectArray(inst, declared, "the result of rng"));
      return Shape(a.element_type(), declared.dims());
    }
    case HloOpcode::kRngBitGenerator: {
      // state -> (new state, random bits); the bits' shape is declared.
      if (!declared.IsTuple()) return WithoutLayout(declared);
      if (declared.tuple_size() != 2)
        return Fail(inst, "rng-bit-generator must produce (state, bits), declared " + Str(declared));
      return Shape::Tuple(
          {WithoutLayout(inst.operand(0)->shape()), WithoutLayout(declared.tuple_shape(1))});
    }
    default:  // rng-get-and-update-state
      return Shape(ElementType::kU64, {2});
  }
}

StatusOr<Shape> InferDimensionSize(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  std::optional<int64_t> dim = IntAttr(inst, "dimensions");
  if (!dim || *dim < 0 || *dim >= operand.rank())
    return Fail(inst, "dimensions must name one dimension of " + Str(operand));
  if (inst.opcode() == HloOpcode::kGetDimensionSize) return Shape::Scalar(ElementType::kS32);
  if (!inst.operand(1)->shape().Compatible(Shape::Scalar(ElementType::kS32)))
    return Fail(inst, "set-dimension-size value must be s32[], got " + Str(inst.operand(1)->shape()));
  Shape result = WithoutLayout(operand);
  result.set_dynamic_dim(*dim, true);
  return result;
}

}  // namespace kiln::hlo::shape_inference
