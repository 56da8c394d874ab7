// XLA GPU's cuDNN convolution custom calls, which optimized GPU dumps carry
// and kiln runs as ordinary HLO (passes::CudnnConvCustomCallRewriter) and
// evaluates directly (the reference evaluator): what each computes, in one
// place (XLA's GpuConvConfig):
//   __cudnn$convForward(x, w) -> y
//   __cudnn$convBackwardInput(dy, w) -> dx
//   __cudnn$convBackwardFilter(x, dy) -> dw
//   __cudnn$convBiasActivationForward(x, w, bias[, side_input]) ->
//       activation(conv_result_scale * conv(x, w)
//                  + side_input_scale * side_input + broadcast(bias))
// Every kind is described by its *forward* convolution x * w -> y: window,
// dim_labels (input labels name x or dx, kernel labels w or dw, output
// labels y or dy), feature_group_count and batch_group_count are that
// convolution's. conv_result_scale multiplies every kind's result. The
// result is a tuple (result, u8[N] cuDNN scratch), or the result alone.
// backend_config is JSON: GpuBackendConfig's cudnn_conv_backend_config
// {conv_result_scale, side_input_scale, activation_mode (dnn.proto's
// ActivationMode, by name or number), leakyrelu_alpha}, or, in older dumps,
// those fields at the top level; absent fields take proto3's defaults
// (conv_result_scale 1 when the config is absent altogether).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/literal.h"
#include "common/status.h"
#include "compiler/evaluator/op_evaluators.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

enum class CudnnConvKind { kForward, kBackwardInput, kBackwardFilter, kBiasActivation };

// The kind of a __cudnn$conv* target, or nullopt for any other target.
std::optional<CudnnConvKind> CudnnConvKindOf(std::string_view target);

struct CudnnConvConfig {
  double conv_result_scale = 1, side_input_scale = 0, leakyrelu_alpha = 0;
  // kNone, kSigmoid, kRelu, kRelu6, kReluX, kTanh, kBandPass, kElu,
  // kLeakyRelu or kGeluExact.
  std::string activation = "kNone";
};

// Reads the call's backend_config; an error naming the call for a
// malformed one.
StatusOr<CudnnConvConfig> ParseCudnnConvConfig(const HloInstruction& call);

// The reference evaluator's value of a __cudnn$conv* call: the forward
// convolution's sums taken directly (each gradient by scattering the
// forward products into dx or dw), in double, then the epilogue.
StatusOr<Literal> EvalCudnnConvCall(const HloInstruction& call, const Operands& operands);

}  // namespace kiln::hlo
