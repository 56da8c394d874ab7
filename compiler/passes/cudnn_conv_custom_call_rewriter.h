// CudnnConvCustomCallRewriter: a dump that XLA's GPU compiler already
// optimized calls cuDNN through custom-calls (`__cudnn$convForward`,
// `__cudnn$convBackwardInput`, `__cudnn$convBackwardFilter`,
// `__cudnn$convBiasActivationForward`) that carry a convolution's window,
// dim_labels and group counts and, in backend_config, a
// cudnn_conv_backend_config (conv_result_scale, side_input_scale,
// activation_mode, leakyrelu_alpha). Each becomes the plain HLO it stands
// for, so kiln's convolution canonicalization, fusion and library thunks
// take over (the CUDA executor turns the gradient forms back into cuDNN's
// backward calls):
//   forward:          conv(x, w)
//   backward input:   (dy, w) -> dx, the window and dim_labels being the
//                     forward convolution's (dim_labels' input labels name
//                     dx, its output labels dy): conv(dy, w reversed with
//                     its features swapped per group) with lhs_dilation =
//                     the forward stride
//   backward filter:  (x, dy) -> dw, likewise described by the forward
//                     convolution: conv(x, dy) with x's batch and feature
//                     roles swapped, window stride = the forward
//                     rhs_dilation, rhs_dilation = the forward stride and
//                     batch_group_count = the forward feature_group_count
//   bias-activation:  (x, w, bias[, side_input]) ->
//                     activation(scale * conv(x, w) + side_input_scale *
//                     side_input + bias along the output features)
// as XLA's GpuConvConfig defines them (compiler/evaluator/cudnn_conv_calls.h,
// which the reference evaluator follows directly). conv_result_scale
// multiplies every kind. The tuple's second element (cuDNN's scratch, u8[N]) becomes a zero
// array. What kiln cannot express (kReluX and kBandPass activations,
// window reversal or lhs dilation on a backward call) is a one-line error.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class CudnnConvCustomCallRewriter : public HloPass {
 public:
  std::string_view name() const override { return "cudnn-conv-custom-call-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
