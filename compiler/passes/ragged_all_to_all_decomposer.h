// RaggedAllToAllDecomposer: ragged-all-to-all as dense collectives kiln's
// runtimes already move (as XLA's RaggedAllToAllDecomposer):
//
//   ragged-all-to-all(input[R, ...], output[O, ...], input_offsets[n],
//                     send_sizes[n], output_offsets[n], recv_sizes[n])
//
// 1. chunks[j, r] = input[input_offsets[j] + r] for r < R: a gather of
//    n x R rows (rows past send_sizes[j] are sent too, and ignored);
// 2. all-to-all(chunks) along dimension 0, and all-to-all(output_offsets):
//    participant i's chunk for this device and where it goes;
// 3. a scatter into `output` that overwrites row offset[i] + r with
//    received[i, r] for r < recv_sizes[i]; the other rows target row O,
//    out of bounds, which a scatter skips.
//
// The exchange moves n x R rows per device however few are sent: the price
// of running on the dense all-to-all of Gloo and NCCL (a ragged transfer
// needs the sizes on the host before it starts).
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class RaggedAllToAllDecomposer : public HloPass {
 public:
  std::string_view name() const override { return "ragged-all-to-all-decomposer"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
