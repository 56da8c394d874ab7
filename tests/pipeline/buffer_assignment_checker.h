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
//    whose output index names them (or copied there after the last
//    instruction); no other value uses constant allocations, and a
//    parameter allocation holds other values only when it is donated
//    (input_output_alias: then it is also the aliased output's allocation);
//  - every value's allocation has the value's color (memory space S(n)),
//    and there is one temp allocation per color;
//  - no two values whose intervals overlap share a byte of an allocation,
//    except a shared (in-place) pair: the same slice, the first value's
//    last read being the instruction that defines the second, which reads
//    it through exactly one operand leaf and may update it in place (a
//    dynamic-update-slice/scatter fusion's in-place operand, an operand an
//    elementwise fusion reads only at the output index, a while loop's init
//    leaf for the same state leaf), and the first value not an output.
// The view (AssignmentView) lets tests check hand-built, corrupted
// assignments as well as real ones.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/passes/fusible_ops.h"
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
  // Every temp arena (when empty: temp_allocation alone, if any).
  std::vector<int32_t> temp_allocations;
  std::vector<hlo::InputOutputAlias> aliases;
  std::vector<OutputCopy> output_copies;
};

inline AssignmentView ViewOf(const BufferAssignment& a, std::vector<hlo::InputOutputAlias> aliases = {}) {
  AssignmentView view{&a.schedule(), &a.allocations(),
                      [&a](const HloInstruction* inst, const ShapeIndex& index) { return a.SliceFor(inst, index); },
                      a.temp_allocation()};
  for (const TempArena& t : a.temp_arenas()) view.temp_allocations.push_back(t.allocation);
  view.aliases = std::move(aliases);
  view.output_copies = a.output_copies();
  return view;
}

struct CheckResult {
  std::vector<std::string> errors;  // empty: the assignment is valid
  int64_t values = 0;
  // Sum over temp allocations of the max over positions of live temp bytes,
  // each rounded up to 64 (a shared pair counted once).
  int64_t temp_live_peak = 0;
  int64_t shared_pairs = 0;
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

// A collective -done right after its start forwards the start's result
// (leaf {1, ...} of the start's tuple; all-reduce-start's whole value) and
// still reads it: the exchange fills it until the done.
inline bool IsDoneOfItsStart(const HloInstruction& inst) {
  if (inst.operand_count() != 1) return false;
  const HloOpcode start = inst.operand(0)->opcode();
  return (inst.opcode() == HloOpcode::kAllReduceDone && start == HloOpcode::kAllReduceStart) ||
         (inst.opcode() == HloOpcode::kAllGatherDone && start == HloOpcode::kAllGatherStart) ||
         (inst.opcode() == HloOpcode::kCollectivePermuteDone && start == HloOpcode::kCollectivePermuteStart) ||
         (inst.opcode() == HloOpcode::kAsyncDone && start == HloOpcode::kAsyncStart);
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
  bool in_place = false;  // takes over the slice of a value dying at its definition
};

// Output element i of fusion `f` reads element i only of operand `number`:
// f's root is elementwise and every use of that fused parameter, up to the
// root, is an elementwise op of the root's dimensions.
inline bool ReadsOnlyAtOutputIndex(const HloInstruction& f, int64_t number) {
  const hlo::HloComputation* body = f.called_computation("calls");
  if (!body || !body->root() || number < 0 || number >= body->parameter_count()) return false;
  const HloInstruction* root = body->root();
  const HloInstruction* param = body->parameter(number);
  if (!root->shape().IsArray() || !hlo::IsElementwise(root->opcode()) || !param || param == root) return false;
  const std::vector<int64_t>& dims = root->shape().dims();
  if (!param->shape().IsArray() || param->shape().dims() != dims) return false;
  std::vector<const HloInstruction*> todo{param};
  while (!todo.empty()) {
    const HloInstruction* i = todo.back();
    todo.pop_back();
    if (i != root && i->users().empty()) return false;
    for (const HloInstruction* u : i->users()) {
      if (!hlo::IsElementwise(u->opcode()) || !u->shape().IsArray() || u->shape().dims() != dims) return false;
      todo.push_back(u);
    }
  }
  return true;
}

// `user` may write its output leaf `out` over operand `number` leaf `in`.
inline bool MayUpdateInPlace(const HloInstruction& user, int64_t number, const ShapeIndex& in, const ShapeIndex& out) {
  if (user.opcode() == HloOpcode::kWhile) return number == 0 && in == out;
  if (user.opcode() != HloOpcode::kFusion || !in.empty()) return false;
  std::vector<int64_t> targets = passes::InPlaceOperandNumbers(user);
  if (!targets.empty()) {
    size_t leaf = out.empty() ? 0 : static_cast<size_t>(out[0]);
    bool leaf_ok = user.shape().IsArray() ? out.empty() : out.size() == 1 && leaf < targets.size();
    return leaf_ok && targets[leaf] == number;
  }
  if (!out.empty() || !user.shape().IsArray()) return false;
  return ReadsOnlyAtOutputIndex(user, number);
}

inline int64_t ColorOf(const Shape& leaf) {
  return leaf.IsArray() && leaf.layout() ? leaf.layout()->memory_space : 0;
}

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
  struct Read {
    int64_t operand;
    ShapeIndex index;
    int64_t value;
  };
  std::map<const HloInstruction*, std::vector<Read>> reads;
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
      const bool done = detail::IsDoneOfItsStart(*inst);
      if (!detail::Forwards(inst->opcode()) && !done) {
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
      if (done && inst->opcode() != HloOpcode::kAllReduceDone) operand_idx.insert(operand_idx.begin(), 1);
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
    // it forwards (value_of already resolves through it). A done reads its
    // start's leaves, its own result among them.
    if (detail::Forwards(inst->opcode())) continue;
    for (int64_t o = 0; o < inst->operand_count(); ++o)
      for (const ShapeIndex& idx : detail::Leaves(inst->operand(o)->shape())) {
        auto it = value_of.find({inst->operand(o), idx});
        if (it == value_of.end()) continue;
        values[it->second].end = std::max(values[it->second].end, p);
        reads[inst].push_back({o, idx, it->second});
      }
  }
  if (!result.ok()) return result;
  result.values = static_cast<int64_t>(values.size());

  // Roles. Where each result leaf ends up: its value's slice, or the
  // destination of its output copy.
  const HloInstruction* root = comp->root();
  auto aliased_param_of = [&](const thunks::Allocation& alloc) -> const hlo::InputOutputAlias* {
    if (!alloc.parameter) return nullptr;
    for (const hlo::InputOutputAlias& a : view.aliases)
      if (a.parameter_number == alloc.parameter->number && a.parameter_index == alloc.parameter->index) return &a;
    return nullptr;
  };
  std::map<ShapeIndex, thunks::BufferSlice> result_slice;
  for (const ShapeIndex& idx : detail::Leaves(root->shape())) {
    Value& v = values[value_of.at({root, idx})];
    v.end = n - 1;
    v.output = true;
    result_slice[idx] = v.slice;
  }
  for (const OutputCopy& c : view.output_copies) {
    auto it = result_slice.find(c.output_index);
    if (it == result_slice.end()) {
      fail("output copy to a root leaf " + ShapeIndexToString(c.output_index) + " that does not exist");
      continue;
    }
    if (!(it->second == c.from) || c.from.size != c.to.size || !in_bounds(c.to))
      fail("output copy " + ShapeIndexToString(c.output_index) + " " + c.from.ToString() + " -> " + c.to.ToString() +
           " does not move the root leaf's value (" + it->second.ToString() + ")");
    it->second = c.to;
  }
  if (!result.ok()) return result;
  for (const auto& [idx, slice] : result_slice) {
    const thunks::Allocation& alloc = allocs[slice.allocation];
    if (!alloc.output) {
      fail("root leaf " + ShapeIndexToString(idx) + " is not in an output allocation");
      continue;
    }
    auto named = result_slice.find(*alloc.output);
    if (named == result_slice.end() || named->second.allocation != slice.allocation)
      fail("output allocation of root leaf " + ShapeIndexToString(idx) + " names another leaf");
    for (const auto& [other, other_slice] : result_slice)
      if (other != idx && other_slice.allocation == slice.allocation && !(other_slice == slice) &&
          other_slice.offset < slice.end() && slice.offset < other_slice.end())
        fail("result leaves " + ShapeIndexToString(idx) + " and " + ShapeIndexToString(other) + " overlap");
  }
  for (const OutputCopy& c : view.output_copies) {
    // A copy's destination must hold nothing another result leaf keeps.
    for (const auto& [idx, slice] : result_slice)
      if (idx != c.output_index && slice.allocation == c.to.allocation && slice.offset < c.to.end() &&
          c.to.offset < slice.end())
        fail("output copy " + ShapeIndexToString(c.output_index) + " overwrites result leaf " + ShapeIndexToString(idx));
    if (allocs[c.to.allocation].is_constant() || allocs[c.to.allocation].is_temp())
      fail("output copy " + ShapeIndexToString(c.output_index) + " writes a constant or temp allocation");
  }
  for (const hlo::InputOutputAlias& a : view.aliases) {
    auto it = result_slice.find(a.output_index);
    if (it == result_slice.end()) {
      fail("input_output_alias names no root leaf " + ShapeIndexToString(a.output_index));
      continue;
    }
    const thunks::Allocation& alloc = allocs[it->second.allocation];
    if (alloc.parameter != thunks::ParameterRef{a.parameter_number, a.parameter_index} || it->second.offset != 0)
      fail("aliased output " + ShapeIndexToString(a.output_index) + " is not in parameter " +
           std::to_string(a.parameter_number) + " " + ShapeIndexToString(a.parameter_index) + "'s allocation");
  }
  for (const Value& v : values) {
    const thunks::Allocation& alloc = allocs[v.slice.allocation];
    std::string name = v.def->name() + ShapeIndexToString(v.index);
    bool is_param = v.def->opcode() == HloOpcode::kParameter;
    bool is_const = v.def->opcode() == HloOpcode::kConstant;
    if (is_param && (alloc.parameter != thunks::ParameterRef{v.def->parameter_number(), v.index} || v.slice.offset != 0))
      fail("parameter " + name + " is not at the start of its parameter allocation");
    if (!is_param && alloc.parameter && !(alloc.output && aliased_param_of(alloc)))
      fail(name + " is placed in a parameter allocation");
    if (is_const && !alloc.constant) fail("constant " + name + " is not in a constant allocation");
    if (!is_const && alloc.constant) fail(name + " is placed in a constant allocation");
    if (detail::ColorOf(detail::LeafShape(v.def->shape(), v.index)) != alloc.color)
      fail(name + " of color " + std::to_string(detail::ColorOf(detail::LeafShape(v.def->shape(), v.index))) +
           " is in an allocation of color " + std::to_string(alloc.color));
  }
  std::vector<int32_t> temps = view.temp_allocations;
  if (temps.empty() && view.temp_allocation >= 0) temps.push_back(view.temp_allocation);
  for (size_t i = 0; i < temps.size(); ++i)
    for (size_t j = i + 1; j < temps.size(); ++j)
      if (allocs[temps[i]].color == allocs[temps[j]].color)
        fail("two temp arenas of color " + std::to_string(allocs[temps[i]].color));

  // Shared pairs: `later` may take over `earlier`'s slice at the position
  // that defines it.
  auto shared_pair = [&](const Value& earlier, const Value& later) {
    if (!(earlier.slice == later.slice) || earlier.end != later.start || earlier.output) return false;
    const Value* self = &earlier;
    const Read* only = nullptr;
    for (const Read& r : reads[later.def]) {
      if (&values[r.value] != self) continue;
      if (only) return false;
      only = &r;
    }
    return only && detail::MayUpdateInPlace(*later.def, only->operand, only->index, later.index);
  };

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
      for (const Value* a : active) {
        if (a->slice.offset >= v->slice.offset + v->slice.size || v->slice.offset >= a->slice.offset + a->slice.size)
          continue;
        if (a->start < v->start && shared_pair(*a, *v)) {
          const_cast<Value*>(v)->in_place = true;
          ++result.shared_pairs;
          continue;
        }
        fail(a->def->name() + ShapeIndexToString(a->index) + " " + a->slice.ToString() + " live [" +
               std::to_string(a->start) + ", " + std::to_string(a->end) + "] and " + v->def->name() +
               ShapeIndexToString(v->index) + " " + v->slice.ToString() + " live [" + std::to_string(v->start) +
               ", " + std::to_string(v->end) + "] share bytes");
      }
      active.push_back(v);
    }
  }

  // Live temp bytes per position and arena (difference array), each
  // rounded to 64; a value taking over a slice starts one position later.
  for (int32_t arena : temps) {
    std::vector<int64_t> delta(n + 2, 0);
    for (const Value& v : values)
      if (v.slice.allocation == arena) {
        int64_t bytes = (v.slice.size + 63) / 64 * 64;
        delta[v.start + (v.in_place ? 1 : 0)] += bytes;
        delta[v.end + 1] -= bytes;
      }
    int64_t live = 0, peak = 0;
    for (int64_t p = 0; p < n; ++p) peak = std::max(peak, live += delta[p]);
    result.temp_live_peak += peak;
  }
  return result;
}

// A real assignment: the view checks plus its reported bounds.
inline CheckResult CheckAssignment(const BufferAssignment& a, std::vector<hlo::InputOutputAlias> aliases = {}) {
  CheckResult result = CheckAssignment(ViewOf(a, std::move(aliases)));
  if (!result.ok()) return result;
  if (result.temp_live_peak != a.temp_lower_bound())
    result.errors.push_back("reported lower bound " + std::to_string(a.temp_lower_bound()) + " != checker's " +
                            std::to_string(result.temp_live_peak));
  int64_t arena = 0;
  for (const TempArena& t : a.temp_arenas()) {
    arena += a.allocations()[t.allocation].size;
    if (t.size != a.allocations()[t.allocation].size) result.errors.push_back("arena size differs from its allocation");
  }
  if (arena != a.peak_temp_bytes() || arena < result.temp_live_peak)
    result.errors.push_back("arena " + std::to_string(arena) + " is inconsistent with peak " +
                            std::to_string(a.peak_temp_bytes()) + " / live peak " +
                            std::to_string(result.temp_live_peak));
  return result;
}

}  // namespace kiln::pipeline::checker
