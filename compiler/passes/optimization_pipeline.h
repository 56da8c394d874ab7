// The optimization pipeline bef-compile runs between parsing and thunk
// emission, and its observability hooks (--dump-dir per pass,
// --dump-passes=REGEX, --time-passes).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

struct PipelineOptions {
  // Called with (pass index, pass name, module) after every pass that
  // changed the module; the driver writes dumps from it.
  std::function<Status(int, std::string_view, const hlo::HloModule&)> after_changed_pass;
  // Called with (pass index, number of passes, pass name) before each pass.
  std::function<void(int, int, std::string_view)> before_pass;
  // Verify after every pass that changed the module (else once at the end);
  // unset: the build's default (on in debug builds).
  std::optional<bool> verify_each_pass;
  // GEMMs take bf16 operands with f32 accumulation (compiling for CUDA:
  // cuBLAS's tensor cores) instead of widening them to f32 first.
  bool bf16_gemm_operands = false;
  // s8 x s8 -> s32 dots cuBLAS' int8 tensor cores take (IsInt8GemmDot) stay
  // GEMMs (compiling for CUDA; the host runs them too, in kernels_lib)
  // instead of becoming reduction kernels.
  bool int8_gemms = false;
  // f8 dots cuBLASLt's FP8 tensor cores take (IsFp8GemmDot, also behind
  // XLA's convert-and-scale pattern: Fp8ScaleHoisting) stay f8 GEMMs
  // (compiling for CUDA; the host runs them too, in kernels_lib) instead of
  // widening their operands to bf16.
  bool fp8_gemms = false;
  // Sorts that a radix sort computes become calls of kiln's radix sort
  // kernels (compiling for CUDA, with the kernels built).
  bool radix_sort = false;
  // Softmax, layer norm and other row normalizations become one kernel each
  // (compiling for CUDA; RowNormalizationFusion): the host keeps its
  // reduction and loop kernels when compiling for the host alone.
  bool row_normalization = false;
  // GEMMs sharing an operand merge into one where the GPU runs that faster
  // (compiling for CUDA; DotMerger).
  bool dot_merger = false;
  // While loops of small scalar iterations become one kernel each
  // (compiling for the host alone; WhileLoopKernelFusion).
  bool loop_kernels = false;
  // f32 GEMMs at DEFAULT precision may use TF32 (--tf32): what the merger's
  // time estimate assumes of them.
  bool tf32 = true;
};

// Runs kiln's HLO passes on `module` in place. `records` (optional)
// receives one entry per pass run (name, changed, seconds).
Status RunOptimizationPipeline(hlo::HloModule& module, const PipelineOptions& options = {},
                               std::vector<PassRecord>* records = nullptr);

}  // namespace kiln::passes
