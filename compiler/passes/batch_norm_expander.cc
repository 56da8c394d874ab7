// BatchNormExpander: see batch_norm_expander.h.
#include "compiler/passes/batch_norm_expander.h"

#include <map>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsBatchNorm(HloOpcode op) {
  return op == HloOpcode::kBatchNormTraining || op == HloOpcode::kBatchNormInference ||
         op == HloOpcode::kBatchNormGrad;
}

// Builds the expansion of one batch-norm instruction in its computation.
class Expansion {
 public:
  Expansion(HloInstruction* bn, hlo::HloModule& module, NameUniquer& names,
            std::map<ElementType, HloComputation*>& adders)
      : bn_(bn), comp_(*bn->parent()), module_(module), names_(names), adders_(adders),
        shape_(bn->operand(0)->shape()), type_(shape_.element_type()) {}

  StatusOr<HloInstruction*> Run() {
    const int64_t* feature = bn_->GetAttribute<int64_t>("feature_index");
    const double* epsilon = bn_->GetAttribute<double>("epsilon");
    if (!feature || *feature < 0 || *feature >= shape_.rank() || !IsFloat(type_))
      return Error(bn_->DebugName() + ": batch-norm needs a float operand and a feature_index in range");
    feature_ = *feature;
    epsilon_ = epsilon ? *epsilon : 0.0;
    for (int64_t d = 0; d < shape_.rank(); ++d)
      if (d != feature_) reduced_.push_back(d), count_ *= shape_.dim(d);
    switch (bn_->opcode()) {
      case HloOpcode::kBatchNormTraining: return Training();
      case HloOpcode::kBatchNormInference: return Inference();
      default: return Grad();
    }
  }

 private:
  Shape Full() const { return Shape(type_, shape_.dims()); }
  Shape PerFeature() const { return Shape(type_, {shape_.dim(feature_)}); }

  HloInstruction* Op(HloOpcode op, const Shape& shape, std::vector<HloInstruction*> operands) {
    return AddInstruction(comp_, op, shape, operands, names_.Get(bn_->name() + "." + std::string(hlo::OpcodeName(op))));
  }
  HloInstruction* Scalar(double value) {
    return AddScalarConstant(comp_, type_, value, names_.Get(bn_->name() + ".constant"));
  }
  // A per-feature value (or a scalar) broadcast to the operand's shape.
  HloInstruction* Spread(HloInstruction* v) {
    HloInstruction* b = Op(HloOpcode::kBroadcast, Full(), {v});
    b->SetAttribute("dimensions", v->shape().rank() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{feature_});
    return b;
  }
  HloInstruction* PerFeatureScalar(double value) { return AddSplat(comp_, PerFeature(), value, names_, bn_->name()); }
  HloInstruction* Sum(HloInstruction* x) {
    HloInstruction* r = Op(HloOpcode::kReduce, PerFeature(), {x, Scalar(0)});
    r->SetAttribute("dimensions", reduced_);
    r->SetAttribute("to_apply", hlo::ComputationRefs{{Adder()}});
    return r;
  }
  HloComputation* Adder() {
    HloComputation*& adder = adders_[type_];
    if (!adder) adder = AddBinaryComputation(module_, names_, HloOpcode::kAdd, type_, "batch_norm_add");
    return adder;
  }
  HloInstruction* Bin(HloOpcode op, HloInstruction* a, HloInstruction* b) { return Op(op, a->shape(), {a, b}); }
  // rsqrt(var + epsilon), per feature.
  HloInstruction* InverseStddev(HloInstruction* var) {
    return Op(HloOpcode::kRsqrt, PerFeature(), {Bin(HloOpcode::kAdd, var, PerFeatureScalar(epsilon_))});
  }
  // (x - mean) * rsqrt(var + eps) * scale + offset.
  HloInstruction* Normalize(HloInstruction* x, HloInstruction* mean, HloInstruction* var, HloInstruction* scale,
                            HloInstruction* offset) {
    HloInstruction* centered = Bin(HloOpcode::kSubtract, x, Spread(mean));
    HloInstruction* factor = Bin(HloOpcode::kMultiply, InverseStddev(var), scale);
    return Bin(HloOpcode::kAdd, Bin(HloOpcode::kMultiply, centered, Spread(factor)), Spread(offset));
  }

  StatusOr<HloInstruction*> Training() {
    HloInstruction* x = bn_->operand(0);
    HloInstruction* inverse_count = PerFeatureScalar(1.0 / static_cast<double>(count_));
    HloInstruction* mean = Bin(HloOpcode::kMultiply, Sum(x), inverse_count);
    HloInstruction* mean_of_squares = Bin(HloOpcode::kMultiply, Sum(Bin(HloOpcode::kMultiply, x, x)), inverse_count);
    HloInstruction* var = Bin(HloOpcode::kSubtract, mean_of_squares, Bin(HloOpcode::kMultiply, mean, mean));
    HloInstruction* out = Normalize(x, mean, var, bn_->operand(1), bn_->operand(2));
    return Op(HloOpcode::kTuple, bn_->shape(), {out, mean, var});
  }

  StatusOr<HloInstruction*> Inference() {
    return Normalize(bn_->operand(0), bn_->operand(3), bn_->operand(4), bn_->operand(1), bn_->operand(2));
  }

  StatusOr<HloInstruction*> Grad() {
    HloInstruction *x = bn_->operand(0), *scale = bn_->operand(1), *mean = bn_->operand(2);
    HloInstruction *var = bn_->operand(3), *dy = bn_->operand(4);
    HloInstruction* r = InverseStddev(var);
    HloInstruction* centered = Bin(HloOpcode::kSubtract, x, Spread(mean));
    HloInstruction* grad_offset = Sum(dy);
    HloInstruction* sum_dy_xc = Sum(Bin(HloOpcode::kMultiply, dy, centered));
    HloInstruction* grad_scale = Bin(HloOpcode::kMultiply, sum_dy_xc, r);
    HloInstruction* inverse_count = PerFeatureScalar(1.0 / static_cast<double>(count_));
    HloInstruction* mean_dy = Bin(HloOpcode::kMultiply, grad_offset, inverse_count);
    // r*r * sum(dy*xc)/N, per feature.
    HloInstruction* projection =
        Bin(HloOpcode::kMultiply, Bin(HloOpcode::kMultiply, r, r), Bin(HloOpcode::kMultiply, sum_dy_xc, inverse_count));
    HloInstruction* inner = Bin(HloOpcode::kSubtract, Bin(HloOpcode::kSubtract, dy, Spread(mean_dy)),
                                Bin(HloOpcode::kMultiply, centered, Spread(projection)));
    HloInstruction* grad_x = Bin(HloOpcode::kMultiply, Spread(Bin(HloOpcode::kMultiply, scale, r)), inner);
    return Op(HloOpcode::kTuple, bn_->shape(), {grad_x, grad_scale, grad_offset});
  }

  HloInstruction* bn_;
  HloComputation& comp_;
  hlo::HloModule& module_;
  NameUniquer& names_;
  std::map<ElementType, HloComputation*>& adders_;
  Shape shape_;
  ElementType type_;
  int64_t feature_ = 0;
  double epsilon_ = 0;
  int64_t count_ = 1;
  std::vector<int64_t> reduced_;
};

}  // namespace

StatusOr<bool> BatchNormExpander::Run(hlo::HloModule& module) {
  std::map<ElementType, HloComputation*> adders;
  return ExpandInstructions(
      module, [](const HloInstruction& inst) { return IsBatchNorm(inst.opcode()); },
      [&](HloInstruction* bn, NameUniquer& names) { return Expansion(bn, module, names, adders).Run(); });
}

}  // namespace kiln::passes
