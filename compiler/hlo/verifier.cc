// VerifyModule: structural checks of a whole module, then shape inference
// of every instruction against its declared shape.
//
// Structure is checked first (roots, parameter numbering, operands and
// control edges inside their computation, acyclicity, called computations
// belonging to the module) so that shape inference, which reads operands'
// shapes and callees' signatures, only ever sees a well-formed graph.
#include "compiler/hlo/verifier.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo {
namespace {

using shape_inference::Fail;
using shape_inference::Str;

constexpr std::string_view kNotImplemented = "shape inference not implemented for ";

Status CheckParameters(const HloComputation& comp) {
  for (int64_t i = 0; i < comp.parameter_count(); ++i)
    if (comp.parameter(i) == nullptr)
      return Error("computation " + comp.name() + ": parameter number " + std::to_string(i) +
                   " is missing (parameters must be numbered 0.." +
                   std::to_string(comp.parameter_count() - 1) + ")");
  for (const HloInstruction* inst : comp.instructions()) {
    if (inst->opcode() != HloOpcode::kParameter) continue;
    const int64_t n = inst->parameter_number();
    if (n < 0 || n >= comp.parameter_count() || comp.parameter(n) != inst)
      return Fail(*inst, "parameter number " + std::to_string(n) +
                             " is negative or used by another parameter");
  }
  return Status::Ok();
}

// Operands and control edges stay inside the computation.
Status CheckEdges(const HloComputation& comp, const HloInstruction& inst) {
  if (inst.parent() != &comp)
    return Fail(inst, "is listed in computation " + comp.name() + " but belongs to another");
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const HloInstruction* op = inst.operand(i);
    if (op == nullptr) return Fail(inst, "operand " + std::to_string(i) + " is null");
    if (op->parent() != &comp)
      return Fail(inst, "operand " + std::to_string(i) + " %" + op->name() +
                            " belongs to another computation");
  }
  for (const auto* edges : {&inst.control_predecessors(), &inst.control_successors()})
    for (const HloInstruction* other : *edges)
      if (other == nullptr || other->parent() != &comp)
        return Fail(inst, "has a control edge to an instruction outside computation " + comp.name());
  return Status::Ok();
}

// Depth-first search over operand and control-predecessor edges; a edge
// back to an instruction still on the stack closes a cycle.
Status CheckAcyclic(const HloComputation& comp) {
  enum Color : uint8_t { kWhite, kGray, kBlack };
  std::unordered_map<const HloInstruction*, Color> color;
  auto deps = [](const HloInstruction* inst) {
    std::vector<const HloInstruction*> d(inst->operands().begin(), inst->operands().end());
    d.insert(d.end(), inst->control_predecessors().begin(), inst->control_predecessors().end());
    return d;
  };
  for (const HloInstruction* start : comp.instructions()) {
    if (color[start] != kWhite) continue;
    std::vector<std::pair<const HloInstruction*, std::vector<const HloInstruction*>>> stack;
    stack.push_back({start, deps(start)});
    color[start] = kGray;
    while (!stack.empty()) {
      auto& [inst, pending] = stack.back();
      if (pending.empty()) {
        color[inst] = kBlack;
        stack.pop_back();
        continue;
      }
      const HloInstruction* dep = pending.back();
      pending.pop_back();
      if (color[dep] == kGray)
        return Fail(*dep, "is part of a cycle (through %" + inst->name() +
                              ", via operands or control predecessors)");
      if (color[dep] == kWhite) {
        color[dep] = kGray;
        stack.push_back({dep, deps(dep)});
      }
    }
  }
  return Status::Ok();
}

Status CheckCallees(const HloModule& module, const HloInstruction& inst,
                    const std::unordered_set<const HloComputation*>& in_module) {
  for (const HloComputation* callee : inst.called_computations()) {
    if (callee == nullptr) return Fail(inst, "calls a null computation");
    if (!in_module.count(callee))
      return Fail(inst, "calls computation " + callee->name() + " that is not in module " +
                            module.name());
    if (callee == inst.parent())
      return Fail(inst, "calls its own computation " + callee->name());
  }
  return Status::Ok();
}

// A layout, when present, orders exactly the array's dimensions.
Status CheckLayout(const HloInstruction& inst, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) KILN_RETURN_IF_ERROR(CheckLayout(inst, s));
    return Status::Ok();
  }
  if (!shape.IsArray() || !shape.has_layout()) return Status::Ok();
  const std::vector<int64_t>& m2m = shape.layout()->minor_to_major;
  std::vector<bool> seen(shape.rank(), false);
  bool ok = static_cast<int64_t>(m2m.size()) == shape.rank();
  for (int64_t d : m2m) {
    if (!ok || d < 0 || d >= shape.rank() || seen[d]) {
      ok = false;
      break;
    }
    seen[d] = true;
  }
  if (!ok) return Fail(inst, "layout of " + shape.ToString() + " is not a permutation of its dimensions");
  return Status::Ok();
}

Status VerifyStructure(const HloModule& module) {
  if (module.entry() == nullptr) return Error("module " + module.name() + " has no entry computation");
  std::unordered_set<const HloComputation*> in_module;
  for (const HloComputation* comp : module.computations()) in_module.insert(comp);
  if (!in_module.count(module.entry()))
    return Error("module " + module.name() + ": entry computation is not in the module");
  for (const HloComputation* comp : module.computations()) {
    // XLA's parser uniquifies names across computations, so text may reuse
    // a name in different computations; within one it must be unique.
    std::unordered_map<std::string, const HloInstruction*> names;
    if (comp->parent() != &module)
      return Error("computation " + comp->name() + " does not belong to module " + module.name());
    if (comp->root() == nullptr) return Error("computation " + comp->name() + " has no root");
    if (comp->root()->parent() != comp)
      return Error("computation " + comp->name() + ": root %" + comp->root()->name() +
                   " is not in the computation");
    KILN_RETURN_IF_ERROR(CheckParameters(*comp));
    for (const HloInstruction* inst : comp->instructions()) {
      KILN_RETURN_IF_ERROR(CheckEdges(*comp, *inst));
      KILN_RETURN_IF_ERROR(CheckCallees(module, *inst, in_module));
      KILN_RETURN_IF_ERROR(CheckLayout(*inst, inst->shape()));
      auto [it, inserted] = names.emplace(inst->name(), inst);
      if (!inserted)
        return Fail(*inst, "has the same name as " + it->second->DebugName() +
                               " (instruction names must be unique in a computation)");
    }
    KILN_RETURN_IF_ERROR(CheckAcyclic(*comp));
  }
  return Status::Ok();
}

// Computations must not call themselves, directly or through others.
Status CheckCallGraphAcyclic(const HloModule& module) {
  std::unordered_map<const HloComputation*, int> state;  // 1 on stack, 2 done
  std::vector<std::pair<const HloComputation*, std::vector<HloComputation*>>> stack;
  auto callees = [](const HloComputation* c) {
    std::vector<HloComputation*> all;
    for (const HloInstruction* inst : c->instructions())
      for (HloComputation* callee : inst->called_computations()) all.push_back(callee);
    return all;
  };
  for (const HloComputation* start : module.computations()) {
    if (state[start] != 0) continue;
    stack.push_back({start, callees(start)});
    state[start] = 1;
    while (!stack.empty()) {
      auto& [comp, pending] = stack.back();
      if (pending.empty()) {
        state[comp] = 2;
        stack.pop_back();
        continue;
      }
      const HloComputation* next = pending.back();
      pending.pop_back();
      if (state[next] == 1)
        return Error("computation " + next->name() + " calls itself (through " + comp->name() + ")");
      if (state[next] == 0) {
        state[next] = 1;
        stack.push_back({next, callees(next)});
      }
    }
  }
  return Status::Ok();
}

Status VerifyInstructionShape(const HloInstruction& inst) {
  StatusOr<Shape> inferred = InferShape(inst);
  if (!inferred.ok()) {
    // Opcodes kiln does not execute keep their declared shape.
    if (inferred.status().message().rfind(kNotImplemented, 0) == 0) return Status::Ok();
    return inferred.status();
  }
  if (!inferred->Compatible(inst.shape()))
    return Fail(inst, "inferred shape " + Str(*inferred) + " does not match declared " +
                          Str(inst.shape()));
  return Status::Ok();
}

Status VerifyEntryLayout(const HloModule& module) {
  const auto& layout = module.config().entry_computation_layout;
  if (!layout) return Status::Ok();
  const HloComputation& entry = *module.entry();
  if (static_cast<int64_t>(layout->parameters.size()) != entry.parameter_count())
    return Error("entry_computation_layout has " + std::to_string(layout->parameters.size()) +
                 " parameters but entry computation " + entry.name() + " has " +
                 std::to_string(entry.parameter_count()));
  for (int64_t i = 0; i < entry.parameter_count(); ++i)
    if (!layout->parameters[i].Compatible(entry.parameter(i)->shape()))
      return Fail(*entry.parameter(i), "shape " + Str(entry.parameter(i)->shape()) +
                                           " does not match entry_computation_layout parameter " +
                                           Str(layout->parameters[i]));
  if (!layout->result.Compatible(entry.root()->shape()))
    return Fail(*entry.root(), "entry root shape " + Str(entry.root()->shape()) +
                                   " does not match entry_computation_layout result " +
                                   Str(layout->result));
  return Status::Ok();
}

Status VerifyAliases(const HloModule& module) {
  const HloComputation& entry = *module.entry();
  auto param_subshape = [&](int64_t number, const ShapeIndex& index) -> const Shape* {
    if (number < 0 || number >= entry.parameter_count()) return nullptr;
    return SubShape(entry.parameter(number)->shape(), index);
  };
  for (const InputOutputAlias& a : module.config().input_output_alias) {
    const Shape* out = SubShape(entry.root()->shape(), a.output_index);
    const Shape* in = param_subshape(a.parameter_number, a.parameter_index);
    if (out == nullptr || in == nullptr)
      return Error("input_output_alias " + ShapeIndexToString(a.output_index) + ": (" +
                   std::to_string(a.parameter_number) + ", " +
                   ShapeIndexToString(a.parameter_index) + ") names a missing output or parameter");
    if (!out->Compatible(*in))
      return Error("input_output_alias " + ShapeIndexToString(a.output_index) + " aliases " +
                   Str(*out) + " with parameter shape " + Str(*in));
  }
  for (const BufferDonor& d : module.config().buffer_donors)
    if (param_subshape(d.parameter_number, d.parameter_index) == nullptr)
      return Error("buffer_donor (" + std::to_string(d.parameter_number) + ", " +
                   ShapeIndexToString(d.parameter_index) + ") names a missing parameter");
  return Status::Ok();
}

}  // namespace

Status VerifyModule(const HloModule& module) {
  KILN_RETURN_IF_ERROR(VerifyStructure(module));
  KILN_RETURN_IF_ERROR(CheckCallGraphAcyclic(module));
  for (const HloComputation* comp : module.computations())
    for (const HloInstruction* inst : comp->instructions())
      KILN_RETURN_IF_ERROR(VerifyInstructionShape(*inst));
  KILN_RETURN_IF_ERROR(VerifyEntryLayout(module));
  return VerifyAliases(module);
}

}  // namespace kiln::hlo
