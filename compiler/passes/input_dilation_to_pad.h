// InputDilationToPad: a forward convolution whose input is dilated
// (lhs_dilation > 1, a transposed convolution) and that also strides its
// window or groups its batch cannot be expressed to cuDNN, which handles
// input dilation only as a backward-data convolution without either. The
// dilation is interior padding of the input, so it becomes an explicit pad
// (interior lhs_dilation - 1, the window's edge padding too) feeding a
// convolution without input dilation or padding; both libraries (cuDNN and
// the host's im2col) then run it. XLA's semantics are kept exactly: the
// window's padding applies to the dilated input.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class InputDilationToPad : public HloPass {
 public:
  std::string_view name() const override { return "input-dilation-to-pad"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
