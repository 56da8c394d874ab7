// DotMerger: see dot_merger.h.
#include "compiler/passes/dot_merger.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "compiler/passes/dot_precision.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t MemorySpace(const Shape& s) { return s.IsArray() && s.has_layout() ? s.layout()->memory_space : 0; }

bool IsGemmType(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kBF16 || t == ElementType::kF16 || t == ElementType::kF64;
}

// A canonical GEMM (DotCanonicalization's form) of float operands.
bool IsCanonicalGemm(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 || dot.operand(0) == dot.operand(1)) return false;
  if (!dot.control_predecessors().empty() || !dot.control_successors().empty()) return false;
  const Shape& ls = dot.operand(0)->shape();
  const Shape& rs = dot.operand(1)->shape();
  if (!ls.IsArray() || !rs.IsArray() || ls.rank() != 3 || rs.rank() != 3 || dot.shape().rank() != 3) return false;
  if (!IsGemmType(ls.element_type()) || !IsGemmType(rs.element_type()) || !IsGemmType(dot.shape().element_type()))
    return false;
  hlo::DotDimensionNumbers dn = dot.dot_dimension_numbers();
  return dn.lhs_batch == std::vector<int64_t>{0} && dn.rhs_batch == std::vector<int64_t>{0} &&
         dn.lhs_contracting.size() == 1 && dn.rhs_contracting.size() == 1 && dn.lhs_contracting[0] != 0 &&
         dn.rhs_contracting[0] != 0;
}

int64_t ContractingDim(const HloInstruction& dot, int operand) {
  hlo::DotDimensionNumbers dn = dot.dot_dimension_numbers();
  return operand == 0 ? dn.lhs_contracting[0] : dn.rhs_contracting[0];
}

// The free (m or n) dimension of a canonical GEMM operand: dims are
// {0 batch, contracting, free} in some order of the last two.
int64_t FreeDim(const HloInstruction& dot, int operand) { return 3 - ContractingDim(dot, operand); }

// What must agree for GEMMs sharing operand `shared` to merge.
using MergeKey = std::tuple<int, int64_t, int64_t, ElementType, ElementType, bool, int64_t, int64_t>;

MergeKey KeyOf(const HloInstruction& dot, int shared) {
  const HloInstruction& other = *dot.operand(1 - shared);
  return {shared,
          ContractingDim(dot, shared),
          ContractingDim(dot, 1 - shared),
          other.shape().element_type(),
          dot.shape().element_type(),
          DotAllowsTf32(dot),
          MemorySpace(other.shape()),
          MemorySpace(dot.shape())};
}

// Whether `ancestor` is `inst` or reaches it through operands or control
// edges.
bool Reaches(const HloInstruction* ancestor, const HloInstruction* inst) {
  std::vector<const HloInstruction*> stack{inst};
  std::unordered_set<const HloInstruction*> seen{inst};
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (i == ancestor) return true;
    auto visit = [&](const HloInstruction* p) {
      if (seen.insert(p).second) stack.push_back(p);
    };
    for (const HloInstruction* p : i->operands()) visit(p);
    for (const HloInstruction* p : i->control_predecessors()) visit(p);
  }
  return false;
}

GemmDatapath DatapathOf(const HloInstruction& dot, bool tf32) {
  ElementType t = dot.operand(0)->shape().element_type();
  if (t == ElementType::kBF16 || t == ElementType::kF16) return GemmDatapath::kHalfTensor;
  if (t == ElementType::kF32 && tf32 && DotAllowsTf32(dot)) return GemmDatapath::kTf32Tensor;
  return GemmDatapath::kFp32;
}

GemmProblem ProblemOf(const HloInstruction& dot, bool tf32) {
  const Shape& out = dot.shape();
  GemmProblem p;
  p.batches = out.dim(0);
  p.m = out.dim(1);
  p.n = out.dim(2);
  p.k = dot.operand(0)->shape().dim(ContractingDim(dot, 0));
  p.operand_bytes = StorageBytes(dot.operand(0)->shape().element_type());
  p.output_bytes = StorageBytes(out.element_type());
  p.datapath = DatapathOf(dot, tf32);
  return p;
}

// Whether a consumer of `dot`'s value (looking through reshapes) needs it
// in memory of its own: a library call or a result, where the merged
// GEMM's slice becomes a copy instead of fusing into a kernel.
bool NeedsOwnBuffer(const HloInstruction& dot) {
  std::vector<const HloInstruction*> stack{&dot};
  while (!stack.empty()) {
    const HloInstruction* v = stack.back();
    stack.pop_back();
    if (v->user_count() == 0) return true;  // a computation's root
    for (const HloInstruction* u : v->users()) {
      if (u->opcode() == HloOpcode::kReshape || u->opcode() == HloOpcode::kBitcast) stack.push_back(u);
      else if (!IsKernelOp(*u)) return true;
    }
    if (v->parent() && v->parent()->root() == v) return true;
  }
  return false;
}

class Merger {
 public:
  Merger(hlo::HloComputation& comp, const DotMergerOptions& options, NameUniquer& names)
      : comp_(comp), options_(options), names_(names) {}

  // Merges one group of GEMMs sharing an operand; false when none is left.
  StatusOr<bool> MergeOne() {
    for (HloInstruction* shared : comp_.PostOrder()) {
      for (int side : {0, 1}) {
        std::map<MergeKey, std::vector<HloInstruction*>> groups;
        for (HloInstruction* user : shared->users())
          if (IsCanonicalGemm(*user) && user->operand(side) == shared && !rejected_.count({user, side}))
            groups[KeyOf(*user, side)].push_back(user);
        for (auto& [key, dots] : groups) {
          if (dots.size() < 2) continue;
          std::vector<HloInstruction*> group = Profitable(Independent(dots), side);
          if (group.size() < 2) {
            for (HloInstruction* d : dots) rejected_.insert({d, side});
            continue;
          }
          KILN_RETURN_IF_ERROR(Merge(group, side));
          return true;
        }
      }
    }
    return false;
  }

 private:
  // The largest prefix-greedy set of `dots` none of which reaches another.
  std::vector<HloInstruction*> Independent(std::vector<HloInstruction*> dots) {
    std::vector<HloInstruction*> group;
    for (HloInstruction* d : dots) {
      bool independent = std::none_of(group.begin(), group.end(), [&](HloInstruction* g) {
        return Reaches(g, d) || Reaches(d, g);
      });
      if (independent) group.push_back(d);
    }
    return group;
  }

  // `group`, shrunk (largest other operand first) until merging saves
  // time by the estimate; empty when no pair does.
  std::vector<HloInstruction*> Profitable(std::vector<HloInstruction*> group, int side) {
    std::stable_sort(group.begin(), group.end(), [&](HloInstruction* a, HloInstruction* b) {
      return a->operand(1 - side)->shape().ByteSize() < b->operand(1 - side)->shape().ByteSize();
    });
    while (group.size() >= 2) {
      if (Saving(group, side) >= options_.min_saving_fraction) return group;
      group.pop_back();
    }
    return {};
  }

  // The fraction of the separate GEMMs' estimated time that merging saves
  // (negative when it costs more).
  double Saving(const std::vector<HloInstruction*>& group, int side) {
    const GpuGemmDevice& device = options_.device;
    double separate = 0, merged = 0;
    GemmProblem all = ProblemOf(*group[0], options_.tf32);
    (side == 0 ? all.n : all.m) = 0;
    int64_t concatenated_bytes = 0;
    for (HloInstruction* d : group) {
      GemmProblem p = ProblemOf(*d, options_.tf32);
      separate += GemmSeconds(p, device);
      (side == 0 ? all.n : all.m) += side == 0 ? p.n : p.m;
      concatenated_bytes += d->operand(1 - side)->shape().ByteSize();
      if (NeedsOwnBuffer(*d)) merged += CopyKernelSeconds(2 * d->shape().ByteSize(), device);
    }
    if (all.batches * all.m * all.n * all.output_bytes > options_.max_merged_bytes ||
        concatenated_bytes > options_.max_merged_bytes)
      return -1;
    merged += GemmSeconds(all, device) + CopyKernelSeconds(2 * concatenated_bytes, device);
    return (separate - merged) / separate;
  }

  Status Merge(const std::vector<HloInstruction*>& group, int side) {
    HloInstruction* first = group[0];
    HloInstruction* shared = first->operand(side);
    const int64_t concat_dim = FreeDim(*first, 1 - side);
    const int64_t result_dim = side == 0 ? 2 : 1;
    std::vector<HloInstruction*> others;
    std::vector<int64_t> dims = first->operand(1 - side)->shape().dims();
    dims[concat_dim] = 0;
    for (HloInstruction* d : group) {
      others.push_back(d->operand(1 - side));
      dims[concat_dim] += d->operand(1 - side)->shape().dim(concat_dim);
    }
    const Shape& other_shape = others[0]->shape();
    HloInstruction* concat =
        Add(HloOpcode::kConcatenate, WithMemorySpaceOf(Shape(other_shape.element_type(), dims), other_shape),
            others, first->name() + ".merged_operand", *first);
    concat->SetAttribute("dimensions", std::vector<int64_t>{concat_dim});
    std::vector<int64_t> out_dims = first->shape().dims();
    out_dims[result_dim] = 0;
    for (HloInstruction* d : group) out_dims[result_dim] += d->shape().dim(result_dim);
    std::vector<HloInstruction*> operands = side == 0 ? std::vector<HloInstruction*>{shared, concat}
                                                      : std::vector<HloInstruction*>{concat, shared};
    HloInstruction* dot =
        Add(HloOpcode::kDot, WithMemorySpaceOf(Shape(first->shape().element_type(), out_dims), first->shape()),
            operands, first->name() + ".merged", *first);
    for (const char* attr : {"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims",
                             "metadata"})
      if (const hlo::Attribute* a = first->FindAttribute(attr)) dot->SetAttribute(attr, a->value);
    CopyDotPrecision(*first, *dot);
    int64_t offset = 0;
    for (HloInstruction* d : group) {
      std::vector<hlo::SliceDim> slice;
      for (int64_t i = 0; i < 3; ++i) slice.push_back({0, out_dims[i], 1});
      const int64_t size = d->shape().dim(result_dim);
      slice[result_dim] = {offset, offset + size, 1};
      offset += size;
      HloInstruction* s = Add(HloOpcode::kSlice, d->shape(), {dot}, d->name() + ".slice", *d);
      s->SetAttribute("slice", std::move(slice));
      d->ReplaceAllUsesWith(s);
      KILN_RETURN_IF_ERROR(comp_.RemoveInstruction(d));
    }
    return Status::Ok();
  }

  HloInstruction* Add(HloOpcode opcode, const Shape& shape, const std::vector<HloInstruction*>& operands,
                      const std::string& name, const HloInstruction& like) {
    HloInstruction* inst = AddInstruction(comp_, opcode, shape, operands, names_.Get(name));
    inst->set_location(like.location());
    return inst;
  }

  hlo::HloComputation& comp_;
  const DotMergerOptions& options_;
  NameUniquer& names_;
  // (GEMM, shared side) pairs already found not worth merging.
  std::set<std::pair<const HloInstruction*, int>> rejected_;
};

}  // namespace

StatusOr<bool> DotMerger::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    Merger merger(*comp, options_, names);
    while (true) {
      KILN_ASSIGN_OR_RETURN(bool merged, merger.MergeOne());
      if (!merged) break;
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
