// InputDilationToPad: see input_dilation_to_pad.h.
#include "compiler/passes/input_dilation_to_pad.h"

#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

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
  return dilated && (strided || conv.GetInt("batch_group_count", 1) > 1);
}

StatusOr<HloInstruction*> Rewrite(HloInstruction* conv, NameUniquer& names) {
  hlo::HloComputation& comp = *conv->parent();
  hlo::Window window = *conv->GetAttribute<hlo::Window>("window");
  const hlo::ConvDimensionNumbers& dn = *conv->GetAttribute<hlo::ConvDimensionNumbers>("dim_labels");
  HloInstruction* input = conv->operand(0);
  const Shape& in = input->shape();
  hlo::PaddingConfig padding;
  padding.dims.resize(in.rank());
  std::vector<int64_t> dims = in.dims();
  for (size_t i = 0; i < dn.input_spatial.size(); ++i) {
    int64_t d = dn.input_spatial[i];
    hlo::WindowDim& w = window.dims[i];
    padding.dims[d] = {w.pad_low, w.pad_high, w.lhs_dilation - 1};
    int64_t dilated = dims[d] == 0 ? 0 : (dims[d] - 1) * w.lhs_dilation + 1;
    dims[d] = dilated + w.pad_low + w.pad_high;
    if (dims[d] < 0) return Error(conv->DebugName() + ": padding removes more than the dilated input");
    w.pad_low = w.pad_high = 0;
    w.lhs_dilation = 1;
  }
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
