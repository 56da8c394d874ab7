// CUDA LinalgThunk (JAX's lapack_*_ffi custom calls) through cuSOLVER:
// getrf, geqrf, orgqr / ungqr, syevd / heevd and gesdd (as cuSOLVER's
// gesvd, which returns V^H, with jobu = jobvt = the thunk's mode) of f32,
// f64, c64 and c128 on device memory, stream-ordered on the stream both
// handles are bound to.
//
// The thunk's matrices are row-major, cuSOLVER's column-major, and unlike
// potrf (cuda_linalg.h) neither LU nor QR of a matrix can be had from its
// transpose's, so each matrix is transposed into a column-major copy in the
// library scratch with cuBLAS' geam, factored there, and transposed back,
// as the host thunk copies (host_lapack.h); gesvd's exceptions are in
// cuda_lapack.cc. Pivots (1-based, as LAPACK's), infos, tau, eigen- and
// singular values go straight into the thunk's results. Batches are one call per matrix, like potrf's; nothing waits on
// the host.
#pragma once

#include <cublas_api.h>
#include <cusolverDn.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "kernels_lib/cublas_library.h"
#include "kernels_lib/cuda_linalg.h"
#include "kernels_lib/cusolver_library.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// Zeroes `bytes` of device memory at an address, ordered on the stream.
using DeviceZeroFn = std::function<Status(uint64_t address, uint64_t bytes)>;

// The libraries and their handles, both bound to the stream the thunk runs
// on, and that stream's memset (gesdd's placeholder u and vt in mode 'N').
struct CudaLinalgLibraries {
  const CusolverLibrary& cusolver;
  cusolverDnHandle_t solver;
  const CublasLibrary& cublas;
  cublasHandle_t blas;
  DeviceZeroFn zero;
};

// Device addresses of one LinalgThunk's slices: `a`, `tau` (orgqr only)
// and the thunk's results in order.
struct CudaLinalgBuffers {
  uint64_t a = 0, tau = 0;
  std::vector<uint64_t> results;
};

// The column-major copy and cuSOLVER's workspace come from `scratch`.
Status CudaLinalg(const CudaLinalgLibraries& libs, const thunks::LinalgThunk& linalg, const CudaLinalgBuffers& buffers,
                  const DeviceScratchFn& scratch);

}  // namespace kiln::kernels
