// ReductionSplitter: rewrites a reduction too long for one GPU block, or
// too narrow to occupy the GPU, into two reductions (a tree of depth two),
// as XLA's TreeReductionRewriter does.
//
// A kernel reducing K elements per output runs one block per output row at
// best (reduction_emitter.h); a full reduction of 16M elements would then
// run on one SM, and a column reduction of [4096, 4096] on 128 blocks. The
// rewrite views the operand as [A, K, M] (A kept major dimensions, K the
// reduced ones, M kept minor ones; A or M may be 1) and reduces it as
//   [A, K1, K2, M] --reduce K2--> [A, K1, M] --reduce K1--> [A, M]
// so that the first kernel has A * K1 rows (or column tiles) of work, and
// the second reads only A * K1 * M partial results. Both kernels are
// deterministic (no atomics): the order of the combines is fixed.
//
// Only reduces whose reduced dimensions form one run of the non-unit
// dimensions are split, and only when K factors exactly (no padding).
// A sum of f16/bf16 keeps its partial results in f32, as the unsplit
// kernel accumulates in f32 (elemental_emitter.cc): the split then rounds
// once, at the end, as before.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Row reductions up to this length run in one block (4 vectors of 4 per
// thread in 1024 threads); longer ones are split.
constexpr int64_t kMaxRowLength = 16384;
// A column reduction is split when it has fewer column tiles (32 columns
// each) than this: 4 blocks for each of the H100's 132 SMs.
constexpr int64_t kMinColumnTiles = 528;
constexpr int64_t kColumnTileWidth = 32;
// The first kernel of a split column reduction keeps at least this many
// rows per block.
constexpr int64_t kMinColumnChunk = 64;

// K2 (the reduced length of the first reduce) for a row reduction: a
// divisor of k near sqrt(k), in [1024, 8192]; 0 when none.
int64_t RowChunk(int64_t k) {
  int64_t target = std::clamp<int64_t>(int64_t{1} << static_cast<int>(std::round(std::log2(std::sqrt(double(k))))),
                                       1024, 4096);
  for (int64_t delta = 0; delta <= 4096; ++delta) {
    for (int64_t c : {target + delta, target - delta})
      if (c >= 1024 && c <= 8192 && k % c == 0) return c;
  }
  return 0;
}

// K1 (the number of partial results per column) for a column reduction;
// 1 when splitting does not pay.
int64_t ColumnSplits(const ReductionGroups& v) {
  int64_t tiles = v.a * ((v.m + kColumnTileWidth - 1) / kColumnTileWidth);
  if (tiles >= kMinColumnTiles || v.k < 2 * kMinColumnChunk) return 1;
  int64_t k1 = 1;
  while (tiles * k1 < kMinColumnTiles && v.k / (k1 * 2) >= kMinColumnChunk) k1 *= 2;
  while (k1 > 1 && v.k % k1 != 0) k1 /= 2;
  return k1;
}

class Splitter {
 public:
  Splitter(hlo::HloModule& module, NameUniquer& names) : module_(module), names_(names) {}

  // Splits `reduce` when that pays; true when it did.
  StatusOr<bool> Split(HloInstruction* reduce) {
    if (reduce->operand_count() != 2 || !reduce->shape().IsArray() || !reduce->to_apply()) return false;
    std::optional<ReductionGroups> v = GroupReduction(*reduce);
    if (!v) return false;
    int64_t k1 = 1, k2 = v->k;
    if (v->m == 1) {
      if (v->k <= kMaxRowLength) return false;
      k2 = RowChunk(v->k);
      if (k2 == 0) return false;
      k1 = v->k / k2;
    } else {
      k1 = ColumnSplits(*v);
      if (k1 == 1) return false;
      k2 = v->k / k1;
    }
    Rewrite(reduce, *v, k1, k2);
    return true;
  }

 private:
  void Rewrite(HloInstruction* reduce, const ReductionGroups& v, int64_t k1, int64_t k2) {
    hlo::HloComputation& comp = *reduce->parent();
    HloInstruction* operand = reduce->operand(0);
    HloInstruction* init = reduce->operand(1);
    const ElementType type = reduce->shape().element_type();
    bool widen = (type == ElementType::kBF16 || type == ElementType::kF16) && IsScalarAdd(*reduce->to_apply());
    ElementType acc = widen ? ElementType::kF32 : type;
    hlo::HloComputation* combiner = widen ? F32Add() : reduce->to_apply();
    auto add = [&](HloOpcode op, const Shape& shape, std::vector<HloInstruction*> operands, const char* suffix) {
      HloInstruction* inst = AddInstruction(comp, op, shape, operands, names_.Get(reduce->name() + suffix));
      inst->set_location(reduce->location());
      return inst;
    };
    // [A, K1, K2, M] without A and M when they are 1.
    std::vector<int64_t> split_dims = {v.a, k1, k2, v.m};
    std::vector<int64_t> split;
    int64_t k1_dim = -1;
    for (size_t i = 0; i < split_dims.size(); ++i) {
      if ((i == 0 || i == 3) && split_dims[i] == 1) continue;
      if (i == 1) k1_dim = static_cast<int64_t>(split.size());
      split.push_back(split_dims[i]);
    }
    HloInstruction* x = add(HloOpcode::kReshape, Shape(operand->shape().element_type(), split), {operand}, ".split");
    if (widen) {
      x = add(HloOpcode::kConvert, Shape(acc, split), {x}, ".split_f32");
      init = add(HloOpcode::kConvert, Shape(acc, {}), {init}, ".init_f32");
    }
    std::vector<int64_t> partial_dims = split;
    partial_dims.erase(partial_dims.begin() + k1_dim + 1);
    HloInstruction* partial = add(HloOpcode::kReduce, Shape(acc, partial_dims), {x, init}, ".partial");
    partial->SetAttribute("dimensions", std::vector<int64_t>{k1_dim + 1});
    partial->SetAttribute("to_apply", hlo::ComputationRefs{{combiner}});
    std::vector<int64_t> final_dims = partial_dims;
    final_dims.erase(final_dims.begin() + k1_dim);
    HloInstruction* total = add(HloOpcode::kReduce, Shape(acc, final_dims), {partial, init}, ".combine");
    total->SetAttribute("dimensions", std::vector<int64_t>{k1_dim});
    total->SetAttribute("to_apply", hlo::ComputationRefs{{combiner}});
    HloInstruction* result = total;
    if (widen) result = add(HloOpcode::kConvert, Shape(type, final_dims), {result}, ".round");
    if (result->shape().dims() != reduce->shape().dims())
      result = add(HloOpcode::kReshape, WithoutLayout(reduce->shape()), {result}, ".result");
    if (const hlo::Attribute* md = reduce->FindAttribute("metadata")) {
      partial->SetAttribute("metadata", md->value);
      total->SetAttribute("metadata", md->value);
    }
    reduce->ReplaceAllUsesWith(result);
  }

  // (f32, f32) -> f32 add, created once.
  hlo::HloComputation* F32Add() {
    if (!f32_add_) f32_add_ = AddBinaryComputation(module_, names_, HloOpcode::kAdd, ElementType::kF32, "split_add_f32");
    return f32_add_;
  }

  hlo::HloModule& module_;
  NameUniquer& names_;
  hlo::HloComputation* f32_add_ = nullptr;
};

}  // namespace

StatusOr<bool> ReductionSplitter::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  Splitter splitter(module, names);
  std::vector<hlo::HloComputation*> comps = module.computations();
  for (hlo::HloComputation* comp : comps) {
    for (HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != HloOpcode::kReduce) continue;
      KILN_ASSIGN_OR_RETURN(bool split, splitter.Split(inst));
      if (!split) continue;
      KILN_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
