// The row-normalization analysis (see row_normalization.h).
#include "compiler/passes/row_normalization.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/hlo/opcode.h"
#include "compiler/passes/fusible_ops.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

std::vector<int64_t> NonUnitDims(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims)
    if (d != 1) out.push_back(d);
  return out;
}

// The positions of the dimensions larger than 1 of `shape`.
std::vector<int64_t> NonUnitPositions(const Shape& shape) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (shape.dim(d) != 1) out.push_back(d);
  return out;
}

// The sizes of the kept (non-reduced) dimensions larger than 1.
std::vector<int64_t> RowDims(const RowShape& row) {
  std::vector<int64_t> kept;
  for (size_t d = 0; d < row.operand_dims.size(); ++d)
    if (!std::binary_search(row.reduced_dims.begin(), row.reduced_dims.end(), static_cast<int64_t>(d)))
      kept.push_back(row.operand_dims[d]);
  return NonUnitDims(kept);
}

// An element-level value that varies along the row: not a constant, an
// iota or a broadcast of a scalar.
bool ReadsRowElements(const HloInstruction& inst, const RowShape& row) {
  if (LevelOf(inst.shape(), row) != RowLevel::kElement) return false;
  switch (inst.opcode()) {
    case HloOpcode::kConstant: case HloOpcode::kIota:
      return false;
    case HloOpcode::kBroadcast:
      return inst.operand(0)->shape().ElementCount() > 1;
    default:
      return true;
  }
}

bool SameView(const RowShape& a, const RowShape& b) {
  return a.operand_dims == b.operand_dims && a.reduced_dims == b.reduced_dims;
}

}  // namespace

std::optional<RowShape> RowReductionShape(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce || reduce.operand_count() != 2 || !reduce.to_apply() ||
      !reduce.shape().IsArray() || !reduce.operand(0)->shape().IsArray() ||
      !reduce.operand(1)->shape().IsArray() || reduce.operand(1)->shape().rank() != 0)
    return std::nullopt;
  std::optional<ReductionGroups> groups = GroupReduction(reduce);
  if (!groups || groups->m != 1 || groups->k <= 1 || groups->k > kMaxRowNormalizationElements)
    return std::nullopt;
  RowShape row;
  row.operand_dims = reduce.operand(0)->shape().dims();
  row.reduced_dims = reduce.dimensions();
  std::sort(row.reduced_dims.begin(), row.reduced_dims.end());
  row.rows = groups->a;
  row.row_elements = groups->k;
  return row;
}

RowLevel LevelOf(const Shape& shape, const RowShape& row) {
  if (!shape.IsArray()) return RowLevel::kNone;
  std::vector<int64_t> dims = NonUnitDims(shape.dims());
  if (dims == NonUnitDims(row.operand_dims)) return RowLevel::kElement;
  if (dims == RowDims(row)) return RowLevel::kRow;
  return RowLevel::kNone;
}

bool KeepsRows(const HloInstruction& inst, const RowShape& row) {
  RowLevel level = LevelOf(inst.shape(), row);
  switch (inst.opcode()) {
    case HloOpcode::kReduce: {
      std::optional<RowShape> view = RowReductionShape(inst);
      return view && SameView(*view, row);
    }
    case HloOpcode::kReshape:
      return level != RowLevel::kNone && LevelOf(inst.operand(0)->shape(), row) == level;
    case HloOpcode::kBroadcast: {
      if (level == RowLevel::kNone || LevelOf(inst.operand(0)->shape(), row) != RowLevel::kRow) return false;
      // The operand's dimensions larger than 1 go, in order, to the result's
      // first dimensions larger than 1 (its row dimensions).
      const Shape& in = inst.operand(0)->shape();
      std::vector<int64_t> dims = inst.dimensions();
      std::vector<int64_t> targets = NonUnitPositions(inst.shape());
      size_t next = 0;
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (in.dim(d) == 1) continue;
        if (next >= targets.size() || dims[d] != targets[next]) return false;
        ++next;
      }
      return true;
    }
    default:
      return level != RowLevel::kNone && hlo::IsElementwise(inst.opcode());
  }
}

std::optional<RowNormalization> AnalyzeRowNormalization(const hlo::HloComputation& comp) {
  const HloInstruction* root = comp.root();
  if (!root) return std::nullopt;
  std::vector<HloInstruction*> order = comp.PostOrder();
  RowNormalization rn;
  bool have_view = false;
  for (const HloInstruction* inst : order) {
    if (inst->opcode() != HloOpcode::kReduce) continue;
    std::optional<RowShape> view = RowReductionShape(*inst);
    if (!view) return std::nullopt;
    if (!have_view) rn.row = *view;
    else if (!SameView(*view, rn.row)) return std::nullopt;
    have_view = true;
  }
  if (!have_view) return std::nullopt;
  // Stage of each row-dependent instruction: the number of reduces on its
  // longest path from a reduce's result (a reduce's own stage counts the
  // reduces before it).
  std::unordered_map<const HloInstruction*, int64_t> stage;  // row-dependent only
  bool meets_rows = false;
  for (const HloInstruction* inst : order) {
    int64_t after = -1;  // highest stage of a row-dependent operand, -1: none
    for (const HloInstruction* op : inst->operands()) {
      auto it = stage.find(op);
      if (it != stage.end()) after = std::max(after, it->second);
    }
    bool is_reduce = inst->opcode() == HloOpcode::kReduce;
    if (!is_reduce && after < 0) continue;
    if (inst == root && inst->opcode() == HloOpcode::kTuple) continue;
    if (!KeepsRows(*inst, rn.row)) return std::nullopt;
    if (is_reduce) {
      if (stage.count(inst->operand(1))) return std::nullopt;  // an init value computed from a reduce
      int64_t s = after + 1;
      stage[inst] = s;
      if (static_cast<int64_t>(rn.stages.size()) <= s) rn.stages.resize(s + 1);
      rn.stages[s].push_back(inst);
    } else {
      stage[inst] = after;
      // An element-level op combining a per-row value with the rows' own
      // elements (x - max, x * rsqrt(var + eps)).
      if (hlo::IsElementwise(inst->opcode()) && LevelOf(inst->shape(), rn.row) == RowLevel::kElement)
        for (const HloInstruction* op : inst->operands())
          meets_rows |= !stage.count(op) && ReadsRowElements(*op, rn.row);
    }
    rn.row_dependent.push_back(inst);
  }
  if (!meets_rows) return std::nullopt;
  if (root->opcode() == HloOpcode::kTuple) {
    rn.outputs.assign(root->operands().begin(), root->operands().end());
  } else {
    rn.outputs.push_back(root);
  }
  if (rn.outputs.empty()) return std::nullopt;
  for (const HloInstruction* out : rn.outputs) {
    RowLevel level = LevelOf(out->shape(), rn.row);
    if (level == RowLevel::kNone) return std::nullopt;
    rn.output_levels.push_back(level);
  }
  return rn;
}

bool IsRowNormalizationFusion(const HloInstruction& fusion) {
  if (fusion.opcode() != HloOpcode::kFusion) return false;
  const hlo::HloComputation* body = fusion.called_computation("calls");
  return body && AnalyzeRowNormalization(*body).has_value();
}

}  // namespace kiln::passes
