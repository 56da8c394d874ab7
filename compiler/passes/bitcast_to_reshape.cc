// BitcastToReshape: logical ops for bitcasts, so that layouts can be dropped.
//
// A bitcast reinterprets its operand's bytes: element i of the physical
// (major-to-minor) order of the operand becomes element i of the physical
// order of the result. In logical terms that is
//   transpose(operand into its physical order) -> reshape -> transpose(from
//   the result's physical order back to its logical order),
// which is what this pass writes (each step only when needed; between
// row-major shapes it is one reshape).
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

// Dimensions from major to minor.
std::vector<int64_t> MajorToMinor(const Shape& shape) {
  std::vector<int64_t> m2m = shape.MinorToMajor();
  return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
}

bool HasPlainLayout(const Shape& shape) {
  return shape.IsArray() && (!shape.has_layout() || shape.layout()->tiles.empty()) &&
         static_cast<int64_t>(shape.MinorToMajor().size()) == shape.rank();
}

class BitcastRewriter {
 public:
  BitcastRewriter(hlo::HloInstruction* bitcast, NameUniquer& names) : bitcast_(bitcast), names_(names) {}

  hlo::HloInstruction* Rewrite() {
    const Shape& in = bitcast_->operand(0)->shape();
    const Shape& out = bitcast_->shape();
    hlo::HloInstruction* v = bitcast_->operand(0);
    // Operand into its physical order.
    std::vector<int64_t> in_order = MajorToMinor(in);
    if (!IsIdentityPermutation(in_order)) v = Transpose(v, in_order, ".physical");
    // Same bytes, the result's physical dimensions.
    std::vector<int64_t> out_order = MajorToMinor(out);
    std::vector<int64_t> physical_dims;
    for (int64_t d : out_order) physical_dims.push_back(out.dim(d));
    v = Add(hlo::HloOpcode::kReshape, Shape(out.element_type(), physical_dims), {v}, ".reshape");
    // Back to the result's logical order: logical dim out_order[i] is
    // physical dim i.
    if (!IsIdentityPermutation(out_order)) {
      std::vector<int64_t> inverse(out_order.size());
      for (size_t i = 0; i < out_order.size(); ++i) inverse[out_order[i]] = static_cast<int64_t>(i);
      v = Transpose(v, inverse, ".logical");
    }
    return v;
  }

 private:
  hlo::HloInstruction* Add(hlo::HloOpcode opcode, const Shape& shape, std::vector<hlo::HloInstruction*> operands,
                           const std::string& suffix) {
    hlo::HloInstruction* inst =
        AddInstruction(*bitcast_->parent(), opcode, shape, operands, names_.Get(bitcast_->name() + suffix));
    inst->set_location(bitcast_->location());
    return inst;
  }

  hlo::HloInstruction* Transpose(hlo::HloInstruction* v, const std::vector<int64_t>& perm, const std::string& suffix) {
    std::vector<int64_t> dims;
    for (int64_t d : perm) dims.push_back(v->shape().dim(d));
    hlo::HloInstruction* t = Add(hlo::HloOpcode::kTranspose, Shape(v->shape().element_type(), dims), {v}, suffix);
    t->SetAttribute("dimensions", perm);
    return t;
  }

  hlo::HloInstruction* bitcast_;
  NameUniquer& names_;
};

}  // namespace

bool HasRowMajorLayout(const Shape& shape) {
  return HasPlainLayout(shape) && IsIdentityPermutation(MajorToMinor(shape));
}

bool IsRowMajorReshape(const Shape& from, const Shape& to) {
  return from.IsArray() && to.IsArray() && from.element_type() == to.element_type() &&
         from.ElementCount() == to.ElementCount() && HasRowMajorLayout(from) && HasRowMajorLayout(to);
}

StatusOr<bool> BitcastToReshape::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    for (hlo::HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != hlo::HloOpcode::kBitcast) continue;
      const Shape& in = inst->operand(0)->shape();
      const Shape& out = inst->shape();
      // Element-type changes and tiled layouts stay bitcasts (and are
      // rejected by thunk emission).
      if (!HasPlainLayout(in) || !HasPlainLayout(out) || in.element_type() != out.element_type() ||
          in.ElementCount() != out.ElementCount())
        continue;
      hlo::HloInstruction* replacement = BitcastRewriter(inst, names).Rewrite();
      inst->ReplaceAllUsesWith(replacement);
      KILN_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
      changed = true;
    }
  }
  return changed;
}

StatusOr<bool> LayoutNormalization::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* comp : module.computations()) {
    for (hlo::HloInstruction* inst : comp->instructions()) {
      if (!inst->shape().has_layout() && !inst->shape().IsTuple()) continue;
      Shape before = inst->shape();
      inst->mutable_shape().clear_layout();
      // Keep the memory space S(n): buffer assignment gives each one its
      // own arena. The layout left is the dense row-major one.
      std::vector<std::pair<const Shape*, Shape*>> work{{&before, &inst->mutable_shape()}};
      while (!work.empty()) {
        auto [from, to] = work.back();
        work.pop_back();
        if (from->IsTuple()) {
          for (int64_t i = 0; i < from->tuple_size(); ++i)
            work.push_back({&from->tuple_shape(i), &to->mutable_tuple_shapes()[i]});
        } else if (from->layout() && from->layout()->memory_space != 0) {
          Layout kept;
          kept.minor_to_major = to->MinorToMajor();
          kept.memory_space = from->layout()->memory_space;
          to->set_layout(std::move(kept));
        }
      }
      changed |= !(before == inst->shape());
    }
  }
  return changed;
}

}  // namespace kiln::passes
