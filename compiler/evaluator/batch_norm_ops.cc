// batch-norm-training, batch-norm-inference and batch-norm-grad, evaluated
// directly from their definitions in f64 (mean, population variance,
// normalization, and the gradients of out = (x - mean) / sqrt(var + eps) *
// scale + offset), independently of the BatchNormExpander rewrite the
// compiler uses, which tests check against this.
#include <cmath>
#include <vector>

#include "compiler/evaluator/eval_attrs.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {
namespace {

// The operand's elements grouped by feature: element i's feature is
// (i / inner) % features for a row-major shape.
struct FeatureLayout {
  int64_t features = 1, inner = 1, count = 1;  // count: elements per feature
  int64_t FeatureOf(int64_t i) const { return (i / inner) % features; }
};

StatusOr<FeatureLayout> Layout(const HloInstruction& inst, const Literal& x) {
  std::optional<int64_t> feature = eval::IntAttr(inst, "feature_index");
  const Shape& s = x.shape();
  if (!feature || *feature < 0 || *feature >= s.rank() || !IsFloat(s.element_type()))
    return Error(inst.DebugName() + ": batch-norm needs a float operand and a feature_index in range");
  FeatureLayout l;
  l.features = s.dim(*feature);
  for (int64_t d = *feature + 1; d < s.rank(); ++d) l.inner *= s.dim(d);
  l.count = l.features == 0 ? 0 : s.ElementCount() / l.features;
  return l;
}

Status CheckPerFeature(const HloInstruction& inst, const Literal& v, const FeatureLayout& l) {
  if (v.shape().rank() != 1 || v.shape().dim(0) != l.features)
    return Error(inst.DebugName() + ": batch-norm per-feature operand has shape " + v.shape().ToString() +
                 ", expected " + std::to_string(l.features) + " elements");
  return Status::Ok();
}

Literal PerFeatureLiteral(const Literal& like, const std::vector<double>& values) {
  Literal out(Shape(like.element_type(), {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) out.SetF64(static_cast<int64_t>(i), values[i]);
  return out;
}

double Epsilon(const HloInstruction& inst) {
  const double* e = inst.GetAttribute<double>("epsilon");
  return e ? *e : 0.0;
}

}  // namespace

StatusOr<Literal> EvalBatchNormOp(const HloInstruction& inst, const Operands& ops) {
  const Literal& x = *ops[0];
  KILN_ASSIGN_OR_RETURN(FeatureLayout l, Layout(inst, x));
  for (size_t i = 1; i < ops.size(); ++i)
    if (inst.opcode() != HloOpcode::kBatchNormGrad || i != 4) KILN_RETURN_IF_ERROR(CheckPerFeature(inst, *ops[i], l));
  const double eps = Epsilon(inst);
  const int64_t n = x.element_count();
  std::vector<double> mean(l.features), var(l.features);
  if (inst.opcode() == HloOpcode::kBatchNormTraining) {
    for (int64_t i = 0; i < n; ++i) mean[l.FeatureOf(i)] += x.GetF64(i);
    for (double& m : mean) m /= static_cast<double>(l.count);
    for (int64_t i = 0; i < n; ++i) {
      double c = x.GetF64(i) - mean[l.FeatureOf(i)];
      var[l.FeatureOf(i)] += c * c;
    }
    for (double& v : var) v /= static_cast<double>(l.count);
  } else {
    const Literal& m = *ops[inst.opcode() == HloOpcode::kBatchNormGrad ? 2 : 3];
    const Literal& v = *ops[inst.opcode() == HloOpcode::kBatchNormGrad ? 3 : 4];
    for (int64_t f = 0; f < l.features; ++f) mean[f] = m.GetF64(f), var[f] = v.GetF64(f);
  }
  const Literal& scale = *ops[1];
  if (inst.opcode() != HloOpcode::kBatchNormGrad) {
    const Literal& offset = *ops[2];
    Literal out(Shape(x.element_type(), x.shape().dims()));
    for (int64_t i = 0; i < n; ++i) {
      int64_t f = l.FeatureOf(i);
      out.SetF64(i, (x.GetF64(i) - mean[f]) / std::sqrt(var[f] + eps) * scale.GetF64(f) + offset.GetF64(f));
    }
    if (inst.opcode() == HloOpcode::kBatchNormInference) return out;
    std::vector<Literal> parts;
    parts.push_back(std::move(out));
    parts.push_back(PerFeatureLiteral(x, mean));
    parts.push_back(PerFeatureLiteral(x, var));
    return Literal::MakeTuple(std::move(parts));
  }
  const Literal& dy = *ops[4];
  if (dy.element_count() != n) return Error(inst.DebugName() + ": batch-norm-grad's grad_output differs in shape");
  std::vector<double> sum_dy(l.features), sum_dy_xc(l.features);
  for (int64_t i = 0; i < n; ++i) {
    int64_t f = l.FeatureOf(i);
    sum_dy[f] += dy.GetF64(i);
    sum_dy_xc[f] += dy.GetF64(i) * (x.GetF64(i) - mean[f]);
  }
  const double count = static_cast<double>(l.count);
  Literal grad_x(Shape(x.element_type(), x.shape().dims()));
  for (int64_t i = 0; i < n; ++i) {
    int64_t f = l.FeatureOf(i);
    double ve = var[f] + eps;
    double xc = x.GetF64(i) - mean[f];
    grad_x.SetF64(i, scale.GetF64(f) / std::sqrt(ve) *
                         (dy.GetF64(i) - sum_dy[f] / count - xc * sum_dy_xc[f] / (count * ve)));
  }
  std::vector<double> grad_scale(l.features);
  for (int64_t f = 0; f < l.features; ++f) grad_scale[f] = sum_dy_xc[f] / std::sqrt(var[f] + eps);
  std::vector<Literal> parts;
  parts.push_back(std::move(grad_x));
  parts.push_back(PerFeatureLiteral(x, grad_scale));
  parts.push_back(PerFeatureLiteral(x, sum_dy));
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace kiln::hlo
