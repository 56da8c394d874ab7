// Host LAPACK for LinalgThunk (JAX's lapack_*_ffi custom calls): getrf,
// geqrf, orgqr/ungqr, syevd/heevd and gesdd of f32, f64, c64 and c128 from
// OpenBLAS' LAPACK (Debian's libopenblas
// carries it; it ships no header for these routines, so host_lapack.cc
// declares their Fortran entry points).
//
// The thunk's matrices are dense row-major; LAPACK is column-major, so each
// matrix is copied into a column-major work matrix, factored there, and
// copied back (as are gesdd's u and vt). Workspace sizes come from LAPACK's
// own query (lwork = -1) and live in the call. Batches are a plain loop.
#pragma once

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// The buffers of one LinalgThunk call, already resolved to host addresses:
// `a` (in place), `tau` (orgqr only) and the thunk's other results in order.
struct LinalgBuffers {
  void* a = nullptr;
  const void* tau = nullptr;
  std::vector<void*> results;
};

// Runs `linalg` on every matrix of the batch. A type other than f32, f64,
// c64 or c128, a
// dimension beyond LAPACK's int, or a malformed thunk is an error naming it.
Status HostLinalg(const thunks::LinalgThunk& linalg, const LinalgBuffers& buffers);

}  // namespace kiln::kernels
