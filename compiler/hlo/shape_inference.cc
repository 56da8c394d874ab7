// InferShape: operand-count checks and the opcode dispatch onto the
// per-family inference functions, plus the helpers those functions share
// (messages, attribute access, called-computation signatures, reducers,
// windows).
#include "compiler/hlo/shape_inference.h"

#include <algorithm>
#include <set>

#include "compiler/hlo/verifier.h"

namespace kiln::hlo {
namespace shape_inference {

Status Fail(const HloInstruction& inst, const std::string& message) {
  return Error(inst.DebugName() + ": " + message);
}

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

std::string Str(const std::vector<int64_t>& values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(values[i]);
  }
  return s + "}";
}

std::optional<int64_t> IntAttr(const HloInstruction& inst, std::string_view name) {
  if (const auto* v = inst.GetAttribute<int64_t>(name)) return *v;
  if (const auto* list = inst.GetAttribute<std::vector<int64_t>>(name))
    if (list->size() == 1) return (*list)[0];
  return std::nullopt;
}

std::vector<int64_t> IntsAttr(const HloInstruction& inst, std::string_view name) {
  if (const auto* list = inst.GetAttribute<std::vector<int64_t>>(name)) return *list;
  if (const auto* v = inst.GetAttribute<int64_t>(name)) return {*v};
  return {};
}

bool BoolAttr(const HloInstruction& inst, std::string_view name, bool default_value) {
  if (const auto* b = inst.GetAttribute<bool>(name)) return *b;
  std::string word = inst.GetString(name);
  if (word == "true") return true;
  if (word == "false") return false;
  return default_value;
}

Shape WithoutLayout(Shape shape) {
  shape.clear_layout();
  return shape;
}

Status ExpectArray(const HloInstruction& inst, const Shape& shape, const std::string& what) {
  if (!shape.IsArray()) return Fail(inst, what + " must be an array, got " + Str(shape));
  return Status::Ok();
}

Status CheckDims(const HloInstruction& inst, const std::vector<int64_t>& dims, int64_t rank,
                 const std::string& what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return Fail(inst, what + " " + Str(dims) + " has dimension " + std::to_string(d) +
                            " out of range [0, " + std::to_string(rank) + ")");
    if (!seen.insert(d).second)
      return Fail(inst, what + " " + Str(dims) + " repeats dimension " + std::to_string(d));
  }
  return Status::Ok();
}

Status CheckSortedDims(const HloInstruction& inst, const std::vector<int64_t>& dims,
                       const std::string& what) {
  if (!std::is_sorted(dims.begin(), dims.end()))
    return Fail(inst, what + " " + Str(dims) + " must be sorted");
  return Status::Ok();
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

StatusOr<const HloComputation*> Callee(const HloInstruction& inst, std::string_view attr) {
  const auto* refs = inst.GetAttribute<ComputationRefs>(attr);
  if (!refs) return Fail(inst, "missing called computation attribute " + std::string(attr));
  if (refs->computations.size() != 1 || refs->computations[0] == nullptr)
    return Fail(inst, "attribute " + std::string(attr) + " must name exactly one computation");
  return static_cast<const HloComputation*>(refs->computations[0]);
}

StatusOr<Signature> SignatureOf(const HloInstruction& inst, const HloComputation* computation) {
  if (computation == nullptr) return Fail(inst, "calls a null computation");
  Signature sig;
  sig.name = computation->name();
  for (int64_t i = 0; i < computation->parameter_count(); ++i) {
    const HloInstruction* p = computation->parameter(i);
    if (p == nullptr)
      return Fail(inst, "called computation " + sig.name + " is missing parameter " +
                            std::to_string(i));
    sig.parameters.push_back(WithoutLayout(p->shape()));
  }
  if (computation->root() == nullptr)
    return Fail(inst, "called computation " + sig.name + " has no root");
  sig.result = WithoutLayout(computation->root()->shape());
  return sig;
}

StatusOr<Signature> CalleeSignature(const HloInstruction& inst, std::string_view attr) {
  KILN_ASSIGN_OR_RETURN(const HloComputation* callee, Callee(inst, attr));
  return SignatureOf(inst, callee);
}

Status CheckReducer(const HloInstruction& inst, const Signature& reducer,
                    const std::vector<Shape>& init_shapes,
                    const std::vector<ElementType>& input_types) {
  const size_t n = input_types.size();
  const std::string who = "reducer " + reducer.name;
  if (reducer.parameters.size() != 2 * n)
    return Fail(inst, who + " must take " + std::to_string(2 * n) + " parameters, takes " +
                          std::to_string(reducer.parameters.size()));
  std::vector<Shape> accumulators;
  if (reducer.result.IsTuple()) {
    if (static_cast<size_t>(reducer.result.tuple_size()) != n)
      return Fail(inst, who + " must return a tuple of " + std::to_string(n) +
                            " scalars, returns " + Str(reducer.result));
    accumulators = reducer.result.tuple_shapes();
  } else {
    if (n != 1)
      return Fail(inst, who + " must return a tuple of " + std::to_string(n) +
                            " scalars, returns " + Str(reducer.result));
    accumulators = {reducer.result};
  }
  for (size_t i = 0; i < n; ++i) {
    const Shape& acc = accumulators[i];
    if (!acc.IsScalar())
      return Fail(inst, who + " must return scalars, returns " + Str(reducer.result));
    const Shape element = Shape::Scalar(input_types[i]);
    if (!acc.Compatible(reducer.parameters[i]))
      return Fail(inst, who + " parameter " + std::to_string(i) + " has shape " +
                            Str(reducer.parameters[i]) + ", expected the accumulator shape " +
                            Str(acc));
    if (!reducer.parameters[n + i].Compatible(element))
      return Fail(inst, who + " parameter " + std::to_string(n + i) + " has shape " +
                            Str(reducer.parameters[n + i]) + ", expected " + Str(element));
    if (!acc.Compatible(element))
      return Fail(inst, who + " accumulator " + std::to_string(i) + " has shape " + Str(acc) +
                            ", expected the input element type " + Str(element));
    if (!init_shapes[i].Compatible(acc))
      return Fail(inst, "init value " + std::to_string(i) + " has shape " + Str(init_shapes[i]) +
                            ", expected " + Str(acc) + " (the " + who + " accumulator)");
  }
  return Status::Ok();
}

Window WindowAttr(const HloInstruction& inst) {
  if (const auto* w = inst.GetAttribute<Window>("window")) return *w;
  return Window{};
}

namespace {
// Size of a dimension of `bound` elements after inserting dilation-1 holes.
int64_t DilatedBound(int64_t bound, int64_t dilation) {
  return bound == 0 ? 0 : (bound - 1) * dilation + 1;
}
// Number of window positions with the given stride.
int64_t StridedBound(int64_t bound, int64_t window, int64_t stride) {
  if (bound == 0 || window > bound) return 0;
  return (bound - window) / stride + 1;
}
}  // namespace

StatusOr<std::vector<int64_t>> WindowOutputDims(const HloInstruction& inst,
                                                const std::vector<int64_t>& base_dims,
                                                const Window& window) {
  if (window.dims.size() != base_dims.size())
    return Fail(inst, "window has " + std::to_string(window.dims.size()) +
                          " dimensions but the operand has rank " +
                          std::to_string(base_dims.size()));
  std::vector<int64_t> out;
  for (size_t i = 0; i < base_dims.size(); ++i) {
    const WindowDim& w = window.dims[i];
    const std::string at = "window dimension " + std::to_string(i);
    if (w.size <= 0) return Fail(inst, at + " has non-positive size " + std::to_string(w.size));
    if (w.stride <= 0)
      return Fail(inst, at + " has non-positive stride " + std::to_string(w.stride));
    if (w.lhs_dilation < 1 || w.rhs_dilation < 1)
      return Fail(inst, at + " has a dilation below 1");
    int64_t padded = w.pad_low + DilatedBound(base_dims[i], w.lhs_dilation) + w.pad_high;
    if (padded < 0)
      return Fail(inst, at + " pads the operand to a negative size " + std::to_string(padded));
    out.push_back(StridedBound(padded, DilatedBound(w.size, w.rhs_dilation), w.stride));
  }
  return out;
}

namespace {

// Operand counts for opcodes the arity table marks variadic.
Status CheckVariadicOperandCount(const HloInstruction& inst) {
  const int64_t n = inst.operand_count();
  auto at_least = [&](int64_t min) -> Status {
    if (n < min)
      return Fail(inst, std::string(OpcodeName(inst.opcode())) + " needs at least " +
                            std::to_string(min) + " operands, has " + std::to_string(n));
    return Status::Ok();
  };
  auto exactly = [&](int64_t count) -> Status {
    if (n != count)
      return Fail(inst, std::string(OpcodeName(inst.opcode())) + " needs " +
                            std::to_string(count) + " operands, has " + std::to_string(n));
    return Status::Ok();
  };
  switch (inst.opcode()) {
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll: case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kConcatenate: case HloOpcode::kMap:
    case HloOpcode::kSort: case HloOpcode::kDynamicSlice:
      return at_least(1);
    case HloOpcode::kConditional: case HloOpcode::kDynamicUpdateSlice:
      return at_least(2);
    case HloOpcode::kDot:
      // Sparse dots carry metadata operands; kiln does not execute them.
      return inst.HasAttribute("sparsity") ? at_least(2) : exactly(2);
    case HloOpcode::kRng:
      return exactly(2);
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
      if (n != 1 && n != 4)
        return Fail(inst, std::string(OpcodeName(inst.opcode())) +
                              " needs 1 operand (or 4 for the in-place form), has " +
                              std::to_string(n));
      return Status::Ok();
    case HloOpcode::kReduce: case HloOpcode::kReduceWindow:
      KILN_RETURN_IF_ERROR(at_least(2));
      if (n % 2 != 0)
        return Fail(inst, std::string(OpcodeName(inst.opcode())) +
                              " needs an even number of operands (inputs then init values), has " +
                              std::to_string(n));
      return Status::Ok();
    case HloOpcode::kScatter:
      KILN_RETURN_IF_ERROR(at_least(3));
      if (n % 2 != 1)
        return Fail(inst, "scatter needs N operands, indices and N updates (an odd count), has " +
                              std::to_string(n));
      return Status::Ok();
    default:
      return Status::Ok();  // after-all, call, custom-call, fusion, tuple, async-start, ...
  }
}

StatusOr<Shape> Dispatch(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  switch (op) {
    case HloOpcode::kConvert: return InferConvert(inst);
    case HloOpcode::kReducePrecision: return InferReducePrecision(inst);
    case HloOpcode::kBitcastConvert: return InferBitcastConvert(inst);
    case HloOpcode::kStochasticConvert: return InferStochasticConvert(inst);
    case HloOpcode::kClamp: return InferClamp(inst);
    case HloOpcode::kSelect: return InferSelect(inst);
    case HloOpcode::kMap: return InferMap(inst);
    case HloOpcode::kBroadcast: return InferBroadcast(inst);
    case HloOpcode::kReshape: return InferReshape(inst);
    case HloOpcode::kDynamicReshape: return InferDynamicReshape(inst);
    case HloOpcode::kBitcast: return InferBitcast(inst);
    case HloOpcode::kTranspose: return InferTranspose(inst);
    case HloOpcode::kSlice: return InferSlice(inst);
    case HloOpcode::kDynamicSlice: return InferDynamicSlice(inst);
    case HloOpcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(inst);
    case HloOpcode::kConcatenate: return InferConcatenate(inst);
    case HloOpcode::kPad: return InferPad(inst);
    case HloOpcode::kReverse: return InferReverse(inst);
    case HloOpcode::kIota: return InferIota(inst);
    case HloOpcode::kTuple: return InferTuple(inst);
    case HloOpcode::kGetTupleElement: return InferGetTupleElement(inst);
    case HloOpcode::kReduce: return InferReduce(inst);
    case HloOpcode::kReduceWindow: return InferReduceWindow(inst);
    case HloOpcode::kSelectAndScatter: return InferSelectAndScatter(inst);
    case HloOpcode::kSort: return InferSort(inst);
    case HloOpcode::kTopK: return InferTopK(inst);
    case HloOpcode::kDot: return InferDot(inst);
    case HloOpcode::kConvolution: return InferConvolution(inst);
    case HloOpcode::kFft: return InferFft(inst);
    case HloOpcode::kCholesky: return InferCholesky(inst);
    case HloOpcode::kTriangularSolve: return InferTriangularSolve(inst);
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return InferBatchNorm(inst);
    case HloOpcode::kGather: return InferGather(inst);
    case HloOpcode::kScatter: return InferScatter(inst);
    case HloOpcode::kCall: return InferCall(inst);
    case HloOpcode::kFusion: return InferFusion(inst);
    case HloOpcode::kWhile: return InferWhile(inst);
    case HloOpcode::kConditional: return InferConditional(inst);
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
      return InferAsync(inst);
    case HloOpcode::kParameter: return InferParameter(inst);
    case HloOpcode::kConstant: return InferConstant(inst);
    case HloOpcode::kAfterAll: case HloOpcode::kAddDependency:
      return InferTokenOp(inst);
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone: case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
      return InferHostTransfer(inst);
    case HloOpcode::kCopyStart: case HloOpcode::kCopyDone:
      return InferCopyStartDone(inst);
    case HloOpcode::kRng: case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
      return InferRng(inst);
    case HloOpcode::kGetDimensionSize: case HloOpcode::kSetDimensionSize:
      return InferDimensionSize(inst);
    case HloOpcode::kCopy: case HloOpcode::kDomain: case HloOpcode::kOptimizationBarrier:
      return WithoutLayout(inst.operand(0)->shape());
    case HloOpcode::kCustomCall:
      return WithoutLayout(inst.shape());  // opaque to kiln: accept as declared
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
    case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kReplicaId: case HloOpcode::kPartitionId:
      return InferCollective(inst);
    default:
      break;
  }
  if (IsElementwiseUnary(op)) return InferUnary(inst);
  if (IsElementwiseBinary(op)) return InferBinary(inst);
  return Error("shape inference not implemented for " + std::string(OpcodeName(op)));
}

}  // namespace
}  // namespace shape_inference

StatusOr<Shape> InferShape(const HloInstruction& instruction) {
  using shape_inference::Fail;
  const int arity = OpcodeArity(instruction.opcode());
  if (arity != kVariadic && instruction.operand_count() != arity)
    return Fail(instruction, std::string(OpcodeName(instruction.opcode())) + " needs " +
                                 std::to_string(arity) + " operand(s), has " +
                                 std::to_string(instruction.operand_count()));
  KILN_RETURN_IF_ERROR(shape_inference::CheckVariadicOperandCount(instruction));
  for (int64_t i = 0; i < instruction.operand_count(); ++i)
    if (instruction.operand(i) == nullptr)
      return Fail(instruction, "operand " + std::to_string(i) + " is null");
  return shape_inference::Dispatch(instruction);
}

}  // namespace kiln::hlo
