// DynamicPadder: bounded dynamic shapes (`f32[<=N]`) become static shapes at
// their bounds, with each dynamic dimension's size an explicit s32[] value,
// as XLA's DynamicPadder does.
//
// Every value the entry computes keeps its bound; what lies past a size is
// padding that no later result depends on:
//   - entry parameters with dynamic dimensions get one trailing s32[]
//     parameter per dimension (the runtime fills it from the caller's
//     argument; ModuleConfig::entry_dynamic_dimensions records the mapping);
//   - set-dimension-size gives a dimension its size and passes the data on;
//     get-dimension-size becomes the size;
//   - elementwise ops, broadcast and transpose carry sizes along;
//   - reduce and dot mask the padding of a reduced or contracted dimension
//     with the reduction's init value (zero for dot) first;
//   - reshape and dynamic-reshape of a dynamic value gather each output
//     element from the input position with the same row-major position
//     among the logical elements (a plain reshape when only the major
//     dimension is dynamic on both sides);
//   - slice from 0 with stride 1 clips the size;
//   - a root with dynamic dimensions becomes (root, sizes...), and the
//     runtime cuts each result to its size.
// Any other op that reaches a dynamic dimension is a one-line error naming
// it, as are dynamic shapes outside the entry computation.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class DynamicPadder : public HloPass {
 public:
  std::string_view name() const override { return "dynamic-padder"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
