// InputDilationToPad: a forward convolution whose input is dilated
// (lhs_dilation > 1, a transposed convolution) and that also strides its
// window or groups its batch cannot be expressed to cuDNN, which handles
// input dilation only as a backward-data convolution without either. The
// dilation is interior padding of the input, so it becomes an explicit pad
// (interior lhs_dilation - 1, the window's edge padding too) feeding a
// convolution without input dilation or padding; both libraries (cuDNN and
// the host's im2col) then run it. XLA's semantics are kept exactly: the
// window's padding applies to the dilated input.
//
// A pointwise convolution (window size 1, stride 1) of a dilated input
// instead runs on the undilated input, and its result is dilated and
// padded: only the output elements that the dilation keeps read input data.
// That is 1/prod(lhs_dilation) of the work, and cuDNN runs it forward (as a
// backward-data convolution, a 1x1 filter over a cropped gradient has no
// cuDNN algorithm). The zeros it pads are zeros under XLA's semantics too,
// unless the filter holds an infinity or NaN (0 x inf).
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class InputDilationToPad : public HloPass {
 public:
  std::string_view name() const override { return "input-dilation-to-pad"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
