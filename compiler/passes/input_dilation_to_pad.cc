// InputDilationToPad: see input_dilation_to_pad.h.
#include "compiler/passes/input_dilation_to_pad.h"

#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Every spatial window of size 1 with stride 1: each output element reads
// one element of the dilated, padded input.
bool IsPointwise(const hlo::Window& window) {
  for (const hlo::WindowDim& w : window.dims)
    if (w.size != 1 || w.stride != 1) return false;
  return true;
}

bool NeedsExplicitPad(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.operand_count() != 2) return false;
  const auto* window = conv.GetAttribute<hlo::Window>("window");
  const auto* dn = conv.GetAttribute<hlo::ConvDimensionNumbers>("dim_labels");
  if (!window || !dn || window->dims.size() != dn->input_spatial.size() ||
      !IsFloat(conv.operand(0)->shape().element_type()))
    return false;
  bool dilated = false, strided = false;
  for (const hlo::WindowDim& w : window->dims) {
    dilated |= w.lhs_dilation > 1;
    strided |= w.stride > 1;
  }
  return dilated && (strided || conv.GetInt("batch_group_count", 1) > 1 || IsPointwise(*window));
}

// The window's input dilation and edge padding as a pad of the dimensions
// `spatial` (of a shape of rank `rank`), removed from the window.
hlo::PaddingConfig TakeDilationAndPadding(hlo::Window& window, const std::vector<int64_t>& spatial, int64_t rank) {
  hlo::PaddingConfig padding;
  padding.dims.resize(rank);
  for (size_t i = 0; i < spatial.size(); ++i) {
    hlo::WindowDim& w = window.dims[i];
    padding.dims[spatial[i]] = {w.pad_low, w.pad_high, w.lhs_dilation - 1};
    w.pad_low = w.pad_high = 0;
    w.lhs_dilation = 1;
  }
  return padding;
}

// A pointwise convolution of a dilated input: the pointwise convolution of
// the input itself, then dilated and padded (a zero input element gives a
// zero output element). It does 1/prod(lhs_dilation) of the work, and cuDNN
// runs it as a forward convolution: as a backward-data convolution its
// 1x1 filter with a cropped gradient has no cuDNN algorithm.
StatusOr<HloInstruction*> RewritePointwise(HloInstruction* conv, NameUniquer& names) {
  hlo::HloComputation& comp = *conv->parent();
  hlo::Window window = *conv->GetAttribute<hlo::Window>("window");
  const hlo::ConvDimensionNumbers& dn = *conv->GetAttribute<hlo::ConvDimensionNumbers>("dim_labels");
  const Shape& out = conv->shape();
  std::vector<int64_t> dims = out.dims();
  for (size_t i = 0; i < dn.input_spatial.size(); ++i)
    dims[dn.output_spatial[i]] = conv->operand(0)->shape().dim(dn.input_spatial[i]);
  hlo::PaddingConfig padding = TakeDilationAndPadding(window, dn.output_spatial, out.rank());
  std::unique_ptr<HloInstruction> clone =
      conv->CloneWithOperands({conv->operand(0), conv->operand(1)}, names.Get(conv->name() + ".pointwise"));
  clone->SetAttribute("window", window);
  clone->mutable_shape() = Shape(out.element_type(), dims);
  HloInstruction* pointwise = comp.AddInstruction(std::move(clone));
  HloInstruction* zero = AddScalarConstant(comp, out.element_type(), 0, names.Get(conv->name() + ".pad_value"));
  HloInstruction* pad = AddInstruction(comp, HloOpcode::kPad, out, {pointwise, zero}, names.Get(conv->name()));
  pad->SetAttribute("padding", padding);
  return pad;
}

StatusOr<HloInstruction*> Rewrite(HloInstruction* conv, NameUniquer& names) {
  hlo::HloComputation& comp = *conv->parent();
  hlo::Window window = *conv->GetAttribute<hlo::Window>("window");
  if (IsPointwise(window) && conv->GetInt("batch_group_count", 1) == 1) return RewritePointwise(conv, names);
  const hlo::ConvDimensionNumbers& dn = *conv->GetAttribute<hlo::ConvDimensionNumbers>("dim_labels");
  HloInstruction* input = conv->operand(0);
  const Shape& in = input->shape();
  std::vector<int64_t> dims = in.dims();
  for (size_t i = 0; i < dn.input_spatial.size(); ++i) {
    int64_t d = dn.input_spatial[i];
    const hlo::WindowDim& w = window.dims[i];
    int64_t dilated = dims[d] == 0 ? 0 : (dims[d] - 1) * w.lhs_dilation + 1;
    dims[d] = dilated + w.pad_low + w.pad_high;
    if (dims[d] < 0) return Error(conv->DebugName() + ": padding removes more than the dilated input");
  }
  hlo::PaddingConfig padding = TakeDilationAndPadding(window, dn.input_spatial, in.rank());
  HloInstruction* zero = AddScalarConstant(comp, in.element_type(), 0, names.Get(conv->name() + ".pad_value"));
  HloInstruction* pad = AddInstruction(comp, HloOpcode::kPad, Shape(in.element_type(), dims), {input, zero},
                                       names.Get(conv->name() + ".dilated_input"));
  pad->SetAttribute("padding", padding);
  std::unique_ptr<HloInstruction> clone = conv->CloneWithOperands({pad, conv->operand(1)}, names.Get(conv->name()));
  clone->SetAttribute("window", window);
  return comp.AddInstruction(std::move(clone));
}

}  // namespace

StatusOr<bool> InputDilationToPad::Run(hlo::HloModule& module) {
  return ExpandInstructions(module, NeedsExplicitPad, Rewrite);
}

}  // namespace kiln::passes
