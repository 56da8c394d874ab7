// ComplexReduceSplitter: a reduce or reduce-window of complex values
// becomes a variadic one over their real and imaginary parts, and
// complex(real result, imaginary result) after it.
//
// Why: the reduction kernels' GPU trees shuffle and stage scalars in
// shared memory as integers and floats only, so codegen refuses complex
// reduction values; a variadic reduction of two reals is what they do
// run. The combiner stays exact whatever it computes: the new one takes
// (acc_re, acc_im, x_re, x_im), rebuilds the complex accumulator and value,
// calls the original combiner on them (CallInliner, which runs next,
// inlines it) and returns the result's real and imaginary parts. The parts
// of the input and init values are real() and imag(), which fuse into the
// reduction kernel.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class ComplexReduceSplitter : public HloPass {
 public:
  std::string_view name() const override { return "complex-reduce-splitter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
