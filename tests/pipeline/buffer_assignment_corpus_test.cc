// Buffer assignment over every corpus module's entry computation, checked
// by an independent oracle: the checker below re-derives which value every
// output leaf holds (tuple/get-tuple-element/bitcast/opt-barrier forward
// their operand's value, everything else writes a new one) and when each
// value is last read, straight from the HLO and the schedule. It uses only
// the assignment's slices, never its liveness or heap results, and checks:
//  - every slice lies within its allocation; arena offsets are 64-aligned;
//  - forwarding instructions get exactly their operand's slice;
//  - parameters, constants and root leaves live in allocations of the
//    matching role;
//  - no two values live at a common schedule position share a byte;
//  - its own live-bytes maximum equals the reported lower bound and the
//    arena is at least that large.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "compiler/pipeline/buffer_assignment.h"
#include "tests/support/corpus_files.h"

namespace kiln::pipeline {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

struct Value {
  thunks::BufferSlice slice;
  int64_t def = 0;
  int64_t last = 0;
};

std::vector<ShapeIndex> Leaves(const Shape& shape) {
  if (!shape.IsTuple()) return {ShapeIndex{}};
  std::vector<ShapeIndex> out;
  for (int64_t i = 0; i < shape.tuple_size(); ++i)
    for (ShapeIndex sub : Leaves(shape.tuple_shape(i))) {
      sub.insert(sub.begin(), i);
      out.push_back(sub);
    }
  return out;
}

bool Forwards(HloOpcode op) {
  return op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement || op == HloOpcode::kBitcast ||
         op == HloOpcode::kOptimizationBarrier;
}

struct CheckResult {
  int64_t peak = 0;
  int64_t lower_bound = 0;
};

// Returns false (with gtest failures recorded) when the assignment is wrong.
bool CheckAssignment(const std::string& name, const BufferAssignment& a, CheckResult* result) {
  const auto& seq = a.schedule().sequence;
  const auto& allocs = a.allocations();
  const int64_t n = static_cast<int64_t>(seq.size());
  std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> value_of;
  std::vector<Value> values;
  bool ok = true;
  auto fail = [&](const std::string& what) {
    ADD_FAILURE() << name << ": " << what;
    ok = false;
  };
  for (int64_t p = 0; p < n && ok; ++p) {
    const HloInstruction* inst = seq[p];
    for (const ShapeIndex& idx : Leaves(inst->shape())) {
      auto slice = a.SliceFor(inst, idx);
      if (!slice.ok()) {
        fail("no slice for " + inst->name() + ShapeIndexToString(idx));
        break;
      }
      if (slice->allocation < 0 || slice->allocation >= static_cast<int32_t>(allocs.size()) || slice->offset < 0 ||
          slice->size < 0 || slice->offset + slice->size > allocs[slice->allocation].size) {
        fail("slice " + slice->ToString() + " of " + inst->name() + " out of bounds");
        break;
      }
      if (slice->offset % 64 != 0) fail("unaligned slice " + slice->ToString());
      if (!Forwards(inst->opcode())) {
        value_of[{inst, idx}] = static_cast<int64_t>(values.size());
        values.push_back({*slice, p, p});
        const thunks::Allocation& alloc = allocs[slice->allocation];
        if (inst->opcode() == HloOpcode::kParameter &&
            alloc.parameter != thunks::ParameterRef{inst->parameter_number(), idx})
          fail("parameter " + inst->name() + " not in its parameter allocation");
        if (inst->opcode() == HloOpcode::kConstant && !alloc.is_constant())
          fail("constant " + inst->name() + " not in a constant allocation");
        continue;
      }
      // The operand leaf this forwarding instruction's leaf refers to.
      const HloInstruction* operand = inst->operand(inst->opcode() == HloOpcode::kTuple ? idx[0] : 0);
      ShapeIndex operand_idx = idx;
      if (inst->opcode() == HloOpcode::kTuple) operand_idx.erase(operand_idx.begin());
      if (inst->opcode() == HloOpcode::kGetTupleElement) operand_idx.insert(operand_idx.begin(), inst->tuple_index());
      auto it = value_of.find({operand, operand_idx});
      if (it == value_of.end()) {
        fail("forwarded leaf missing for " + inst->name());
        break;
      }
      if (!(values[it->second].slice == *slice)) fail(inst->name() + " does not share its operand's slice");
      value_of[{inst, idx}] = it->second;
    }
    if (Forwards(inst->opcode())) continue;
    for (const HloInstruction* operand : inst->operands())
      for (const ShapeIndex& idx : Leaves(operand->shape())) {
        auto it = value_of.find({operand, idx});
        if (it != value_of.end()) values[it->second].last = std::max(values[it->second].last, p);
      }
  }
  if (!ok) return false;
  // Root leaves: outputs, live to the end, in allocations with a role.
  const HloInstruction* root = a.schedule().computation->root();
  std::vector<bool> is_output(values.size(), false);
  for (const ShapeIndex& idx : Leaves(root->shape())) {
    int64_t v = value_of.at({root, idx});
    values[v].last = n - 1;
    is_output[v] = true;
    if (!allocs[values[v].slice.allocation].is_output()) fail("root leaf " + ShapeIndexToString(idx) + " not an output");
  }
  // Pairwise: values overlapping in time must not overlap in bytes.
  std::vector<int64_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return values[x].def < values[y].def; });
  for (size_t i = 0; i < order.size() && ok; ++i) {
    const Value& x = values[order[i]];
    for (size_t j = i + 1; j < order.size(); ++j) {
      const Value& y = values[order[j]];
      if (y.def > x.last) break;  // sorted by def: no later value overlaps x in time
      if (x.slice.allocation != y.slice.allocation || x.slice.size == 0 || y.slice.size == 0) continue;
      if (x.slice.offset < y.slice.offset + y.slice.size && y.slice.offset < x.slice.offset + x.slice.size) {
        fail("live values overlap: " + x.slice.ToString() + " and " + y.slice.ToString() + " at position " +
             std::to_string(y.def));
        break;
      }
    }
  }
  // Independent lower bound: bytes of live temps (rounded up to 64) per position.
  std::vector<int64_t> live(n + 1, 0);
  for (const Value& v : values) {
    if (v.slice.allocation != a.temp_allocation()) continue;
    int64_t bytes = (v.slice.size + 63) / 64 * 64;
    for (int64_t p = v.def; p <= v.last; ++p) live[p] += bytes;
  }
  int64_t bound = *std::max_element(live.begin(), live.end());
  if (bound != a.temp_lower_bound())
    fail("lower bound " + std::to_string(a.temp_lower_bound()) + " != checker's " + std::to_string(bound));
  int64_t arena = a.temp_allocation() >= 0 ? allocs[a.temp_allocation()].size : 0;
  if (arena != a.peak_temp_bytes() || arena < bound) fail("arena smaller than the lower bound");
  result->peak = arena;
  result->lower_bound = bound;
  return ok;
}

TEST(BufferAssignmentCorpus, EveryEntryComputationChecks) {
  auto files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  struct Row {
    std::string file;
    int64_t instructions;
    CheckResult check;
  };
  std::vector<Row> rows;
  int parse_failures = 0;
  for (const std::string& file : files) {
    auto module = hlo::ParseHloModuleFile(file);
    if (!module.ok()) {
      ++parse_failures;  // the parser's tests own parse failures
      continue;
    }
    auto assignment = AssignBuffers(**module);
    if (!assignment.ok()) {
      ADD_FAILURE() << file << ": " << assignment.status().message();
      continue;
    }
    CheckResult check;
    if (CheckAssignment(file, *assignment, &check))
      rows.push_back({file, (*module)->entry()->instruction_count(), check});
  }
  EXPECT_GT(rows.size(), files.size() / 2);
  std::vector<double> ratios;
  for (const Row& r : rows)
    if (r.check.lower_bound > 0) ratios.push_back(static_cast<double>(r.check.peak) / r.check.lower_bound);
  std::sort(ratios.begin(), ratios.end());
  std::printf("assigned %zu of %zu corpus modules (%d did not parse); %zu with temporaries\n", rows.size(),
              files.size(), parse_failures, ratios.size());
  if (!ratios.empty())
    std::printf("peak/lower-bound ratio: median %.4f, max %.4f\n", ratios[ratios.size() / 2], ratios.back());
  std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.instructions > y.instructions; });
  std::printf("%-60s %8s %14s %14s %7s\n", "module (10 largest entries)", "instrs", "peak", "lower bound", "ratio");
  for (size_t i = 0; i < rows.size() && i < 10; ++i) {
    const Row& r = rows[i];
    std::string shown = r.file.size() > 60 ? "..." + r.file.substr(r.file.size() - 57) : r.file;
    double ratio = r.check.lower_bound > 0 ? static_cast<double>(r.check.peak) / r.check.lower_bound : 1.0;
    std::printf("%-60s %8lld %14lld %14lld %7.4f\n", shown.c_str(), static_cast<long long>(r.instructions),
                static_cast<long long>(r.check.peak), static_cast<long long>(r.check.lower_bound), ratio);
  }
}

}  // namespace
}  // namespace kiln::pipeline
