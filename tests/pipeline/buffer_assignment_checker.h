// An independent checker for buffer assignments.
//
// It shares no code with BufferAssignment's liveness or heap simulation:
// from the HLO and the schedule alone it re-derives which value every
// output leaf holds (tuple / get-tuple-element / bitcast / opt-barrier
// forward their operand's value, every other instruction writes new ones)
// and the closed interval [definition, last read] of every value, where a
// read through a forwarding instruction counts at the position of the
// (non-forwarding) instruction that reads the forwarded leaf, and root
// values live to the end. It then checks, through the assignment's slices
// only:
//  - the schedule runs every instruction once, after its operands and
//    control predecessors;
//  - every leaf has a slice inside its allocation, sized like the leaf;
//  - forwarding instructions get exactly their operand leaf's slice;
//  - parameter leaves sit at offset 0 of their own parameter allocation,
//    constants in constant allocations, root leaves in output allocations
//    whose output index names them; no other value uses those allocations;
//  - no two values whose intervals overlap share a byte of an allocation.
// The view (AssignmentView) lets tests check hand-built, corrupted
// assignments as well as real ones.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/pipeline/buffer_assignment.h"

namespace kiln::pipeline::checker {

using hlo::HloInstruction;
using hlo::HloOpcode;

// What the checker needs from an assignment.
struct AssignmentView {
  const SequentialSchedule* schedule = nullptr;
  const std::vector<thunks::Allocation>* allocations = nullptr;
  std::function<StatusOr<thunks::BufferSlice>(const HloInstruction*, const ShapeIndex&)> slice_for;
  int32_t temp_allocation = -1;
};

inline AssignmentView ViewOf(const BufferAssignment& a) {
  return {&a.schedule(), &a.allocations(),
          [&a](const HloInstruction* inst, const ShapeIndex& index) { return a.SliceFor(inst, index); },
          a.temp_allocation()};
}

struct CheckResult {
  std::vector<std::string> errors;  // empty: the assignment is valid
  int64_t values = 0;
  int64_t temp_live_peak = 0;  // max over positions of live temp bytes, each rounded up to 64
  bool ok() const { return errors.empty(); }
};

namespace detail {

inline void Leaves(const Shape& shape, ShapeIndex& prefix, std::vector<ShapeIndex>& out) {
  if (!shape.IsTuple()) {
    out.push_back(prefix);
    return;
  }
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    prefix.push_back(i);
    Leaves(shape.tuple_shape(i), prefix, out);
    prefix.pop_back();
  }
}

inline std::vector<ShapeIndex> Leaves(const Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  Leaves(shape, prefix, out);
  return out;
}

inline bool Forwards(HloOpcode op) {
  return op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement || op == HloOpcode::kBitcast ||
         op == HloOpcode::kOptimizationBarrier;
}

inline const Shape& LeafShape(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) s = &s->tuple_shape(i);
  return *s;
}

struct Value {
  const HloInstruction* def = nullptr;
  ShapeIndex index;
  thunks::BufferSlice slice;
  int64_t start = 0, end = 0;
  bool output = false;
};

}  // namespace detail

inline CheckResult CheckAssignment(const AssignmentView& view) {
  using detail::Value;
  CheckResult result;
  auto fail = [&](std::string what) {
    if (result.errors.size() < 20) result.errors.push_back(std::move(what));
  };
  const auto& seq = view.schedule->sequence;
  const auto& allocs = *view.allocations;
  const hlo::HloComputation* comp = view.schedule->computation;
  const int64_t n = static_cast<int64_t>(seq.size());

  // The schedule itself.
  std::map<const HloInstruction*, int64_t> pos;
  for (int64_t p = 0; p < n; ++p)
    if (!pos.emplace(seq[p], p).second) fail(seq[p]->name() + " is scheduled twice");
  if (static_cast<int64_t>(comp->instruction_count()) != n) fail("schedule length differs from the computation");
  for (int64_t p = 0; p < n; ++p) {
    auto before = [&](const HloInstruction* dep) {
      auto it = pos.find(dep);
      return dep->parent() != comp || (it != pos.end() && it->second < p);
    };
    for (const HloInstruction* op : seq[p]->operands())
      if (!before(op)) fail(seq[p]->name() + " runs before its operand " + op->name());
    for (const HloInstruction* pr : seq[p]->control_predecessors())
      if (!before(pr)) fail(seq[p]->name() + " runs before its control predecessor " + pr->name());
  }
  if (!result.ok()) return result;

  // Values and their slices, in schedule order.
  std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> value_of;
  std::vector<Value> values;
  auto in_bounds = [&](const thunks::BufferSlice& s) {
    return s.allocation >= 0 && s.allocation < static_cast<int32_t>(allocs.size()) && s.offset >= 0 && s.size >= 0 &&
           s.offset <= allocs[s.allocation].size - s.size;
  };
  for (int64_t p = 0; p < n; ++p) {
    const HloInstruction* inst = seq[p];
    for (const ShapeIndex& idx : detail::Leaves(inst->shape())) {
      std::string leaf = inst->name() + ShapeIndexToString(idx);
      auto slice = view.slice_for(inst, idx);
      if (!slice.ok()) {
        fail("no slice for " + leaf + ": " + slice.status().message());
        continue;
      }
      if (!in_bounds(*slice)) {
        fail("slice " + slice->ToString() + " of " + leaf + " is out of bounds");
        continue;
      }
      if (!detail::Forwards(inst->opcode())) {
        const Shape& shape = detail::LeafShape(inst->shape(), idx);
        int64_t bytes = shape.IsArray() ? shape.ByteSize() : 0;
        if (slice->size != bytes)
          fail(leaf + " has a " + std::to_string(slice->size) + "-byte slice for " + std::to_string(bytes) + " bytes");
        value_of[{inst, idx}] = static_cast<int64_t>(values.size());
        values.push_back({inst, idx, *slice, p, p, false});
        continue;
      }
      const HloInstruction* operand = inst->operand(inst->opcode() == HloOpcode::kTuple ? idx[0] : 0);
      ShapeIndex operand_idx = idx;
      if (inst->opcode() == HloOpcode::kTuple) operand_idx.erase(operand_idx.begin());
      if (inst->opcode() == HloOpcode::kGetTupleElement) operand_idx.insert(operand_idx.begin(), inst->tuple_index());
      auto it = value_of.find({operand, operand_idx});
      if (it == value_of.end()) {
        fail(leaf + " forwards a leaf with no value");
        continue;
      }
      if (!(values[it->second].slice == *slice))
        fail(leaf + " has slice " + slice->ToString() + " but forwards " + values[it->second].slice.ToString());
      value_of[{inst, idx}] = it->second;
    }
    // Reads: a forwarding instruction reads nothing; its readers read what
    // it forwards (value_of already resolves through it).
    if (detail::Forwards(inst->opcode())) continue;
    for (const HloInstruction* operand : inst->operands())
      for (const ShapeIndex& idx : detail::Leaves(operand->shape())) {
        auto it = value_of.find({operand, idx});
        if (it != value_of.end()) values[it->second].end = std::max(values[it->second].end, p);
      }
  }
  if (!result.ok()) return result;
  result.values = static_cast<int64_t>(values.size());

  // Roles.
  const HloInstruction* root = comp->root();
  for (const ShapeIndex& idx : detail::Leaves(root->shape())) {
    Value& v = values[value_of.at({root, idx})];
    v.end = n - 1;
    v.output = true;
    const thunks::Allocation& alloc = allocs[v.slice.allocation];
    if (!alloc.output) {
      fail("root leaf " + ShapeIndexToString(idx) + " is not in an output allocation");
      continue;
    }
    auto named = value_of.find({root, *alloc.output});
    if (named == value_of.end() || values[named->second].slice.allocation != v.slice.allocation)
      fail("output allocation of root leaf " + ShapeIndexToString(idx) + " names another leaf");
  }
  for (const Value& v : values) {
    const thunks::Allocation& alloc = allocs[v.slice.allocation];
    std::string name = v.def->name() + ShapeIndexToString(v.index);
    bool is_param = v.def->opcode() == HloOpcode::kParameter;
    bool is_const = v.def->opcode() == HloOpcode::kConstant;
    if (is_param && (alloc.parameter != thunks::ParameterRef{v.def->parameter_number(), v.index} || v.slice.offset != 0))
      fail("parameter " + name + " is not at the start of its parameter allocation");
    if (!is_param && alloc.parameter) fail(name + " is placed in a parameter allocation");
    if (is_const && !alloc.constant) fail("constant " + name + " is not in a constant allocation");
    if (!is_const && alloc.constant) fail(name + " is placed in a constant allocation");
    if (!v.output && alloc.output) fail(name + " is not an output but is placed in an output allocation");
    if (!is_param && !is_const && !v.output && !alloc.is_temp())
      fail("temporary " + name + " is not in a temp allocation");
  }

  // Interference: per allocation, sweep values by start; any active value
  // (end >= start) overlapping in bytes is an error.
  std::map<int32_t, std::vector<const Value*>> by_alloc;
  for (const Value& v : values)
    if (v.slice.size > 0) by_alloc[v.slice.allocation].push_back(&v);
  for (auto& [alloc, vs] : by_alloc) {
    std::stable_sort(vs.begin(), vs.end(), [](const Value* a, const Value* b) { return a->start < b->start; });
    std::vector<const Value*> active;
    for (const Value* v : vs) {
      std::erase_if(active, [&](const Value* a) { return a->end < v->start; });
      for (const Value* a : active)
        if (a->slice.offset < v->slice.offset + v->slice.size && v->slice.offset < a->slice.offset + a->slice.size)
          fail(a->def->name() + ShapeIndexToString(a->index) + " " + a->slice.ToString() + " live [" +
               std::to_string(a->start) + ", " + std::to_string(a->end) + "] and " + v->def->name() +
               ShapeIndexToString(v->index) + " " + v->slice.ToString() + " live [" + std::to_string(v->start) +
               ", " + std::to_string(v->end) + "] share bytes");
      active.push_back(v);
    }
  }

  // Live temp bytes per position (difference array), each rounded to 64.
  std::vector<int64_t> delta(n + 1, 0);
  for (const Value& v : values)
    if (v.slice.allocation == view.temp_allocation) {
      int64_t bytes = (v.slice.size + 63) / 64 * 64;
      delta[v.start] += bytes;
      delta[v.end + 1] -= bytes;
    }
  int64_t live = 0;
  for (int64_t p = 0; p < n; ++p) result.temp_live_peak = std::max(result.temp_live_peak, live += delta[p]);
  return result;
}

// A real assignment: the view checks plus its reported bounds.
inline CheckResult CheckAssignment(const BufferAssignment& a) {
  CheckResult result = CheckAssignment(ViewOf(a));
  if (!result.ok()) return result;
  if (result.temp_live_peak != a.temp_lower_bound())
    result.errors.push_back("reported lower bound " + std::to_string(a.temp_lower_bound()) + " != checker's " +
                            std::to_string(result.temp_live_peak));
  int64_t arena = a.temp_allocation() >= 0 ? a.allocations()[a.temp_allocation()].size : 0;
  if (arena != a.peak_temp_bytes() || arena < result.temp_live_peak)
    result.errors.push_back("arena " + std::to_string(arena) + " is inconsistent with peak " +
                            std::to_string(a.peak_temp_bytes()) + " / live peak " +
                            std::to_string(result.temp_live_peak));
  return result;
}

}  // namespace kiln::pipeline::checker
