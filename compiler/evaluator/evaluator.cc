// The evaluator's driver: walks computations in post-order, dispatches each
// instruction to its op group, and implements the structural ops (tuples,
// calls, control flow, async wrappers) itself.
#include "compiler/evaluator/evaluator.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <thread>
#include <unordered_map>

#include "compiler/evaluator/collective_groups.h"
#include "compiler/evaluator/cpu_custom_calls.h"
#include "compiler/evaluator/cudnn_conv_calls.h"
#include "compiler/evaluator/op_evaluators.h"
#include "compiler/evaluator/rendezvous.h"
#include "compiler/hlo/custom_call_targets.h"

namespace kiln::hlo {

Status UnsupportedOp(const HloInstruction& inst) {
  return Error(inst.DebugName() + ": the reference evaluator does not support opcode '" +
               std::string(OpcodeName(inst.opcode())) + "'");
}

namespace {

Status CheckArguments(const HloComputation& computation, const std::vector<Literal>& args) {
  if (static_cast<int64_t>(args.size()) != computation.parameter_count())
    return Error("computation " + computation.name() + " takes " +
                 std::to_string(computation.parameter_count()) + " arguments, got " +
                 std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& expected = computation.parameter(i)->shape();
    if (!expected.Compatible(args[i].shape()) && !FitsDeclaredShape(args[i].shape(), expected))
      return Error("argument " + std::to_string(i) + " of " + computation.name() + " has shape " +
                   args[i].shape().ToString(false) + ", expected " + expected.ToString(false));
  }
  return Status::Ok();
}

// One simulated device executing the module.
class DeviceEvaluator final : public EvalContext {
 public:
  DeviceEvaluator(const HloModule& module, const EvaluatorOptions& options, Rendezvous& rendezvous,
                  int64_t replica_id, int64_t partition_id)
      : module_(module),
        options_(options),
        rendezvous_(rendezvous),
        replica_id_(replica_id),
        partition_id_(partition_id),
        deadline_(std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(options.time_limit_seconds * 1000))) {}

  StatusOr<Literal> Call(const HloComputation& computation, std::vector<Literal> args) override {
    KILN_RETURN_IF_ERROR(CheckArguments(computation, args));
    return Run(computation, args, /*args_owned=*/true);
  }
  const HloModule& module() const override { return module_; }
  int64_t replica_id() const override { return replica_id_; }
  int64_t partition_id() const override { return partition_id_; }
  int64_t device_id() const override {
    return replica_id_ * module_.config().num_partitions + partition_id_;
  }
  Rendezvous& rendezvous() override { return rendezvous_; }
  int64_t ExecutionCount(const HloInstruction& inst) override { return executions_[&inst]++; }
  std::deque<Literal>& ReceivedOn(int64_t channel) override { return received_[channel]; }

 private:
  // How to run one computation, computed once: scalar computations (reducers,
  // comparators) run millions of times and must not redo this work.
  struct Plan {
    std::vector<const HloInstruction*> order;
    // Per instruction: the slot of each operand, and whether this is that
    // operand's last use (its value may then be moved instead of copied).
    std::vector<std::vector<int32_t>> operand_slots;
    std::vector<std::vector<bool>> last_use;
    int32_t root_slot = -1;
  };

  // The operands of one instruction. Parameters live in the caller's
  // argument vector; everything else in the computation's value slots.
  struct Inputs {
    Operands values;
    std::vector<Literal*> mutable_values;
    std::vector<bool> takeable;
    // The operand's value, moved out when nothing else will read it.
    Literal Take(size_t i) const { return takeable[i] ? std::move(*mutable_values[i]) : *values[i]; }
  };

  const Plan& GetPlan(const HloComputation& computation) {
    auto it = plans_.find(&computation);
    if (it != plans_.end()) return it->second;
    Plan plan;
    std::vector<HloInstruction*> order = computation.PostOrder();
    std::unordered_map<const HloInstruction*, int32_t> slot;
    for (HloInstruction* inst : order) {
      slot[inst] = static_cast<int32_t>(plan.order.size());
      plan.order.push_back(inst);
    }
    std::vector<int32_t> last_user(order.size(), -1);
    for (size_t i = 0; i < order.size(); ++i)
      for (HloInstruction* op : order[i]->operands()) last_user[slot.at(op)] = static_cast<int32_t>(i);
    plan.root_slot = slot.at(computation.root());
    for (size_t i = 0; i < order.size(); ++i) {
      std::vector<int32_t> slots;
      std::vector<bool> last;
      for (HloInstruction* op : order[i]->operands()) slots.push_back(slot.at(op));
      for (size_t j = 0; j < slots.size(); ++j) {
        bool unique = std::count(slots.begin(), slots.end(), slots[j]) == 1;
        last.push_back(unique && last_user[slots[j]] == static_cast<int32_t>(i) &&
                       slots[j] != plan.root_slot);
      }
      plan.operand_slots.push_back(std::move(slots));
      plan.last_use.push_back(std::move(last));
    }
    return plans_.emplace(&computation, std::move(plan)).first->second;
  }

  // Runs `computation`. With args_owned the arguments may be moved from
  // (the caller gave them away); otherwise they are only read.
  StatusOr<Literal> Run(const HloComputation& computation, std::vector<Literal>& args, bool args_owned) {
    if (!computation.root()) return Error("computation " + computation.name() + " has no root");
    const Plan& plan = GetPlan(computation);
    std::vector<Literal> values(plan.order.size());
    auto value_of = [&](int32_t slot) -> Literal* {
      const HloInstruction* inst = plan.order[slot];
      return inst->opcode() == HloOpcode::kParameter ? &args[inst->parameter_number()] : &values[slot];
    };
    for (size_t i = 0; i < plan.order.size(); ++i) {
      const HloInstruction& inst = *plan.order[i];
      KILN_RETURN_IF_ERROR(CheckDeadline(inst));
      if (inst.opcode() == HloOpcode::kParameter) continue;  // read in place from args
      Inputs inputs;
      for (size_t j = 0; j < plan.operand_slots[i].size(); ++j) {
        int32_t slot = plan.operand_slots[i][j];
        Literal* value = value_of(slot);
        bool is_param = plan.order[slot]->opcode() == HloOpcode::kParameter;
        inputs.values.push_back(value);
        inputs.mutable_values.push_back(value);
        inputs.takeable.push_back(plan.last_use[i][j] && (!is_param || args_owned));
      }
      StatusOr<Literal> result = EvalAtLogicalShape(inst, inputs);
      if (!result.ok()) return result.status();
      if (!result->shape().Compatible(inst.shape()) && !inst.shape().is_dynamic())
        return Error(inst.DebugName() + ": evaluated to shape " + result->shape().ToString(false) +
                     " but declares " + inst.shape().ToString(false));
      values[i] = std::move(*result);
      // Release values after their last use to bound memory on large modules.
      for (size_t j = 0; j < plan.operand_slots[i].size(); ++j) {
        int32_t slot = plan.operand_slots[i][j];
        if (plan.last_use[i][j] && plan.order[slot]->opcode() != HloOpcode::kParameter)
          values[slot] = Literal();
      }
    }
    Literal* root = value_of(plan.root_slot);
    return args_owned || plan.order[plan.root_slot]->opcode() != HloOpcode::kParameter
               ? std::move(*root)
               : *root;
  }

  Status CheckDeadline(const HloInstruction& inst) {
    if (options_.time_limit_seconds <= 0) return Status::Ok();
    if (std::chrono::steady_clock::now() < deadline_) return Status::Ok();
    return Error(inst.DebugName() + ": evaluation exceeded the time limit of " +
                 std::to_string(options_.time_limit_seconds) + " s");
  }

  // Evaluates `inst`, at the extents its operands imply when its shape is
  // dynamic (see dynamic_shape_ops.cc): a detached copy of the instruction
  // with those extents and no operands runs in its place.
  StatusOr<Literal> EvalAtLogicalShape(const HloInstruction& inst, const Inputs& inputs) {
    KILN_ASSIGN_OR_RETURN(std::optional<Shape> logical, LogicalShape(inst, inputs.values));
    if (!logical) return EvalInstruction(inst, inputs);
    std::unique_ptr<HloInstruction> shadow = inst.CloneWithOperands({}, inst.name());
    shadow->mutable_shape() = *logical;
    return EvalInstruction(*shadow, inputs);
  }

  StatusOr<Literal> EvalInstruction(const HloInstruction& inst, const Inputs& inputs) {
    const Operands& operands = inputs.values;
    switch (inst.opcode()) {
      case HloOpcode::kConstant:
        return inst.literal();
      case HloOpcode::kTuple: {
        std::vector<Literal> elements;
        for (size_t i = 0; i < operands.size(); ++i) elements.push_back(inputs.Take(i));
        return Literal::MakeTuple(std::move(elements));
      }
      case HloOpcode::kGetTupleElement: {
        int64_t index = inst.tuple_index();
        if (index < 0 || index >= static_cast<int64_t>(operands[0]->elements().size()))
          return Error(inst.DebugName() + ": tuple index out of range");
        if (inputs.takeable[0]) return std::move(inputs.mutable_values[0]->mutable_elements()[index]);
        return operands[0]->element(index);
      }
      case HloOpcode::kCall:
      case HloOpcode::kFusion:
        return CallWithOperands(inst, inst.called_computations().empty()
                                          ? nullptr
                                          : inst.called_computations()[0],
                                inputs);
      case HloOpcode::kWhile:
        return EvalWhile(inst, inputs);
      case HloOpcode::kConditional:
        return EvalConditional(inst, inputs);
      case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kAddDependency:
      case HloOpcode::kDomain:
      case HloOpcode::kAsyncUpdate:
        return inputs.Take(0);
      case HloOpcode::kAfterAll:
        return Literal(Shape::Token());
      case HloOpcode::kCustomCall:
        if (IsAnnotationTarget(inst.GetString("custom_call_target")) && operands.size() == 1)
          return inputs.Take(0);
        if (IsCustomCallTo(inst, "TopK")) return EvalTopKCustomCall(inst, operands, *this);
        if (IsCustomCallTo(inst, kGetRngSeedTarget)) return EvalGetRngSeed(inst, ExecutionCount(inst));
        if (IsCustomCallTo(inst, kOneDnnLayerNormTarget) && operands.size() == 3)
          return EvalOneDnnLayerNorm(inst, *operands[0], *operands[1], *operands[2]);
        if (CudnnConvKindOf(inst.GetString("custom_call_target"))) return EvalCudnnConvCall(inst, operands);
        if (IsCustomCallTo(inst, kCublasTriangularSolveTarget)) return EvalTriangularSolveCall(inst, operands);
        return EvalLapackCall(inst, operands);
      case HloOpcode::kAsyncStart:
        return EvalAsyncStart(inst, inputs);
      case HloOpcode::kAsyncDone:
      case HloOpcode::kCopyDone:
        return operands[0]->element(1);
      case HloOpcode::kCopyStart: {
        Literal result(inst.shape());
        result.mutable_elements()[0] = *operands[0];
        result.mutable_elements()[1] = *operands[0];
        return result;
      }
      default:
        return Dispatch(inst, operands);
    }
  }

  StatusOr<Literal> Dispatch(const HloInstruction& inst, const Operands& operands) {
    switch (inst.opcode()) {
      case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kTranspose:
      case HloOpcode::kSlice: case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kConcatenate: case HloOpcode::kPad: case HloOpcode::kReverse:
      case HloOpcode::kIota: case HloOpcode::kCopy: case HloOpcode::kBitcast:
        return EvalShapeOp(inst, operands, *this);
      case HloOpcode::kReduce: case HloOpcode::kReduceWindow:
      case HloOpcode::kSelectAndScatter: case HloOpcode::kSort:
        return EvalReductionOp(inst, operands, *this);
      case HloOpcode::kTopK:
        return EvalTopK(inst, operands);
      case HloOpcode::kRngBitGenerator:
        return EvalRngBitGenerator(inst, operands);
      case HloOpcode::kRaggedDot:
        return EvalRaggedDot(inst, operands);
      case HloOpcode::kRngGetAndUpdateState:
        return EvalRngGetAndUpdateState(inst, *this);
      case HloOpcode::kSetDimensionSize:
        return EvalSetDimensionSize(inst, operands);
      case HloOpcode::kDynamicReshape:
        return EvalDynamicReshape(inst, operands);
      case HloOpcode::kGetDimensionSize: {  // the value's own extent
        const std::vector<int64_t>* dims = inst.GetAttribute<std::vector<int64_t>>("dimensions");
        const Shape& s = operands[0]->shape();
        if (!dims || dims->size() != 1 || (*dims)[0] < 0 || (*dims)[0] >= s.rank())
          return Error(inst.DebugName() + ": get-dimension-size needs one dimension of its operand");
        return Literal::Scalar(ElementType::kS32, s.dim((*dims)[0]));
      }
      case HloOpcode::kDot: case HloOpcode::kConvolution: case HloOpcode::kFft:
        return EvalContractionOp(inst, operands, *this);
      case HloOpcode::kCholesky: case HloOpcode::kTriangularSolve:
        return EvalLinalgOp(inst, operands);
      case HloOpcode::kGather: case HloOpcode::kScatter:
        return EvalIndexingOp(inst, operands, *this);
      case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormGrad:
        return EvalBatchNormOp(inst, operands);
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllGatherDone:
      case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll:
      case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kRaggedAllToAll:
      case HloOpcode::kReplicaId: case HloOpcode::kPartitionId:
        return EvalCollectiveOp(inst, operands, *this);
      case HloOpcode::kSend: case HloOpcode::kRecv: case HloOpcode::kSendDone: case HloOpcode::kRecvDone:
        return EvalSendRecvOp(inst, operands, *this);
      default:
        if (IsElementwise(inst.opcode()) || inst.opcode() == HloOpcode::kMap ||
            inst.opcode() == HloOpcode::kBitcastConvert)
          return EvalElementwiseOp(inst, operands, *this);
        return UnsupportedOp(inst);
    }
  }

  StatusOr<Literal> CallWithOperands(const HloInstruction& inst, const HloComputation* callee,
                                     const Inputs& inputs, size_t first = 0, size_t count = SIZE_MAX) {
    if (!callee) return Error(inst.DebugName() + ": no called computation");
    std::vector<Literal> args;
    for (size_t i = first; i < inputs.values.size() && i - first < count; ++i) args.push_back(inputs.Take(i));
    StatusOr<Literal> result = Call(*callee, std::move(args));
    if (!result.ok()) return result.status().WithContext("in " + inst.DebugName());
    return result;
  }

  StatusOr<Literal> EvalWhile(const HloInstruction& inst, const Inputs& inputs) {
    const HloComputation* cond = inst.called_computation("condition");
    const HloComputation* body = inst.called_computation("body");
    if (!cond || !body) return Error(inst.DebugName() + ": while needs condition and body");
    if (inputs.values.size() != 1) return Error(inst.DebugName() + ": while takes one operand");
    if (cond->parameter_count() != 1 || !cond->parameter(0)->shape().Compatible(inputs.values[0]->shape()))
      return Error(inst.DebugName() + ": while condition does not take the loop state " +
                   inputs.values[0]->shape().ToString(false));
    std::vector<Literal> state;
    state.push_back(inputs.Take(0));
    for (int64_t iteration = 0;; ++iteration) {
      if (iteration >= options_.max_while_iterations)
        return Error(inst.DebugName() + ": while loop exceeded " +
                     std::to_string(options_.max_while_iterations) + " iterations");
      // The condition only reads the state; the body consumes it.
      KILN_ASSIGN_OR_RETURN(Literal keep_going, Run(*cond, state, /*args_owned=*/false));
      if (!keep_going.shape().IsScalar() || !IsPred(keep_going.element_type()))
        return Error(inst.DebugName() + ": while condition must return pred[]");
      if (!keep_going.GetPred(0)) return std::move(state[0]);
      StatusOr<Literal> next = Run(*body, state, /*args_owned=*/true);
      if (!next.ok()) return next.status().WithContext("in " + inst.DebugName());
      if (!next->shape().Compatible(inst.shape()))
        return Error(inst.DebugName() + ": while body returned " + next->shape().ToString(false));
      state[0] = std::move(*next);
    }
  }

  StatusOr<Literal> EvalConditional(const HloInstruction& inst, const Inputs& inputs) {
    std::vector<HloComputation*> branches = inst.branch_computations();
    if (branches.empty() || inputs.values.size() != branches.size() + 1)
      return Error(inst.DebugName() + ": conditional needs one operand per branch plus the selector");
    const Literal& selector = *inputs.values[0];
    if (!selector.shape().IsScalar())
      return Error(inst.DebugName() + ": conditional selector must be a scalar");
    int64_t branch;
    if (IsPred(selector.element_type())) {
      branch = selector.GetPred(0) ? 0 : 1;  // true -> branch 0
    } else {
      branch = selector.GetS64(0);
      // Out-of-range indices select the last branch.
      if (branch < 0 || branch >= static_cast<int64_t>(branches.size()))
        branch = static_cast<int64_t>(branches.size()) - 1;
    }
    return CallWithOperands(inst, branches[branch], inputs, branch + 1, 1);
  }

  // async-start's value is ((operands...), result, context...).
  StatusOr<Literal> EvalAsyncStart(const HloInstruction& inst, const Inputs& inputs) {
    if (!inst.shape().IsTuple() || inst.shape().tuple_size() < 2)
      return Error(inst.DebugName() + ": async-start must produce a tuple");
    std::vector<Literal> args;
    for (const Literal* op : inputs.values) args.push_back(*op);
    const HloComputation* callee = inst.called_computation("calls");
    if (!callee) return Error(inst.DebugName() + ": async-start needs calls=");
    KILN_ASSIGN_OR_RETURN(Literal result, Call(*callee, args));
    Literal value(inst.shape());
    value.mutable_elements()[0] = Literal::MakeTuple(std::move(args));
    value.mutable_elements()[1] = std::move(result);
    return value;
  }

  const HloModule& module_;
  const EvaluatorOptions& options_;
  Rendezvous& rendezvous_;
  int64_t replica_id_;
  int64_t partition_id_;
  std::unordered_map<const HloInstruction*, int64_t> executions_;
  std::map<int64_t, std::deque<Literal>> received_;  // by channel
  std::unordered_map<const HloComputation*, Plan> plans_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace

int64_t RequiredDeviceCount(const HloModule& module) {
  int64_t max_id = 0;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* inst : computation->instructions()) {
      if (const auto* groups = inst->GetAttribute<ReplicaGroups>("replica_groups"))
        for (const auto& group : groups->groups)
          for (int64_t id : group) max_id = std::max(max_id, id);
      if (const auto* pairs = inst->GetAttribute<IntListList>("source_target_pairs"))
        for (const auto& pair : pairs->lists)
          for (int64_t id : pair) max_id = std::max(max_id, id);
      if (inst->opcode() == HloOpcode::kSend || inst->opcode() == HloOpcode::kRecv)
        if (StatusOr<SourceTargetPairs> pairs = SendRecvPairs(*inst); pairs.ok())
          for (const auto& [source, target] : *pairs) max_id = std::max({max_id, source, target});
    }
  }
  return max_id + 1;
}

StatusOr<Literal> Evaluator::Evaluate(const HloModule& module, const std::vector<Literal>& args) const {
  int64_t devices = module.config().replica_count * module.config().num_partitions;
  std::vector<std::vector<Literal>> per_device(std::max<int64_t>(devices, 1), args);
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> results, EvaluateOnDevices(module, per_device));
  return std::move(results[0]);
}

StatusOr<std::vector<Literal>> Evaluator::EvaluateOnDevices(
    const HloModule& module, const std::vector<std::vector<Literal>>& args_per_device) const {
  const HloComputation* entry = module.entry();
  if (!entry) return Error("module " + module.name() + " has no entry computation");
  int64_t partitions = std::max<int64_t>(module.config().num_partitions, 1);
  int64_t devices = std::max<int64_t>(module.config().replica_count, 1) * partitions;
  if (static_cast<int64_t>(args_per_device.size()) != devices)
    return Error("module " + module.name() + " runs on " + std::to_string(devices) +
                 " devices, got arguments for " + std::to_string(args_per_device.size()));
  for (const auto& args : args_per_device) KILN_RETURN_IF_ERROR(CheckArguments(*entry, args));

  Rendezvous rendezvous(options_.collective_timeout_seconds);
  std::vector<StatusOr<Literal>> results(devices, Status::Error("not run"));
  auto run_device = [&](int64_t device) {
    DeviceEvaluator evaluator(module, options_, rendezvous, device / partitions, device % partitions);
    results[device] = evaluator.Call(*entry, args_per_device[device]);
    if (!results[device].ok()) rendezvous.Abort(results[device].status().message());
  };
  if (devices == 1) {
    run_device(0);
  } else {
    std::vector<std::thread> threads;
    for (int64_t d = 0; d < devices; ++d) threads.emplace_back(run_device, d);
    for (std::thread& t : threads) t.join();
  }
  std::vector<Literal> outputs;
  for (int64_t d = 0; d < devices; ++d) {
    if (!results[d].ok()) return results[d].status();
    outputs.push_back(std::move(*results[d]));
  }
  return outputs;
}

}  // namespace kiln::hlo
