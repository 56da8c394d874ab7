// LinalgGeometry: what every operand and result of a LinalgThunk holds, per
// matrix of the batch: element counts and types, from the routine, the
// matrix dimensions and the mode.
//
// One statement of XLA's FFI result shapes (jaxlib/cpu/lapack_kernels.cc),
// checked once: validate.cc sizes the thunk's slices with it, so the host
// runtime can hand raw pointers to LAPACK (a thunk read from a file cannot
// make it write past a slice), and the emitter checks the custom call's
// shapes against it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::thunks {

struct LinalgBlock {
  std::string name;  // "ipiv", "info", "tau", "w", "s", "u", "vt"
  int64_t elements = 0;  // per matrix of the batch
  ElementType type = ElementType::kF32;
};

struct LinalgGeometry {
  int64_t a_elements = 0;            // m * n per matrix
  std::vector<LinalgBlock> results;  // LinalgThunk::results, in order
  // gesdd's u and vt: rows x cols of one matrix (0 when no vectors).
  int64_t u_rows = 0, u_cols = 0, vt_rows = 0, vt_cols = 0;
};

// The geometry of `l`, or an error naming what is inconsistent (a type other
// than f32/f64, negative or mismatched dimensions, an unknown mode).
StatusOr<LinalgGeometry> GetLinalgGeometry(const LinalgThunk& l);

}  // namespace kiln::thunks
