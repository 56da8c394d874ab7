// The custom-call targets kiln runs: one registry, keyed by target name,
// that says which pass or emitter handles each one, so the passes, the
// emitter and the reference evaluator agree on the list and an unknown
// target is one line naming it.
//
// The LAPACK targets are those JAX emits for jnp.linalg on CPU
// (lapack_<t><op>_ffi, typed FFI, XLA's jaxlib/cpu/lapack_kernels.cc): the
// operands are batched over the leading dimensions and laid out column-major
// in XLA, but kiln drops layouts, so each call acts on the logical matrices
// (the thunk hands LAPACK its own column-major copy). Their attributes come
// in backend_config as an MLIR dictionary, e.g. {mode = 86 : ui8, uplo = 76 : ui8}.
//
// The GPU-only targets of optimized XLA GPU dumps and of JAX's CUDA
// lowerings (__cudnn$conv*, cusolver_*_ffi, cu_lu_pivots_to_permutation,
// __cusolver$cholesky, __cublas$triangularSolve) are rewritten early into
// HLO or the LAPACK targets (docs/architecture.md, "Custom calls of GPU
// dumps"), so every target compiles for the host and CUDA alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/shape.h"
#include "common/status.h"

namespace kiln::hlo {

class HloInstruction;

// Who turns a custom call into something kiln executes.
enum class CustomCallHandler : uint8_t {
  kAnnotation,          // identity; passes::AnnotationRemover bypasses it
  kGemmRewriter,        // passes::GemmCustomCallRewriter: a dot
  kCudnnConvRewriter,   // passes::CudnnConvCustomCallRewriter: a convolution and elementwise ops
  kGpuSolverRewriter,   // passes::GpuSolverCustomCallRewriter: a lapack_*_ffi call (or HLO)
  kActivationRewriter,  // passes::ActivationCustomCallRewriter: elementwise ops
  kTopKRewriter,        // passes::TopKCustomCallRewriter: a topk
  kCpuRewriter,         // passes::CpuCustomCallRewriter: GetRngSeed, oneDNN layer norm
  kCholeskyEmitter,     // the emitter: thunks::CholeskyThunk (potrf)
  kLapackEmitter,       // the emitter: thunks::LinalgThunk
  kRadixSortEmitter,    // the emitter: thunks::RadixSortThunk (RadixSortRewriter's call)
};

// The LAPACK routine of a lapack_*_ffi target (ungqr and heevd, the complex
// targets' names, are kOrgqr and kSyevd).
enum class LapackOp : uint8_t { kPotrf, kGetrf, kGeqrf, kOrgqr, kSyevd, kGesdd };

// "potrf", "getrf", "geqrf", "orgqr", "syevd", "gesdd".
std::string_view LapackOpName(LapackOp op);

struct CustomCallTarget {
  CustomCallHandler handler;
  // LAPACK targets: the routine and the element type of the matrices.
  LapackOp lapack_op = LapackOp::kPotrf;
  ElementType type = ElementType::kInvalid;
};

// The registry's entry for `target`, or nullopt when kiln does not run it.
std::optional<CustomCallTarget> FindCustomCallTarget(std::string_view target);

// True for the targets that compute the identity of their single operand on
// one device (Sharding, SPMDFullToShardShape, SPMDShardToFullShape, xla.sdy.*,
// annotate_device_placement, MoveToHost, MoveToDevice,
// AwsNeuronTransferWithStaticRing).
bool IsAnnotationTarget(std::string_view target);

// "<call>: <who> does not support custom-call target '<target>' (it runs ...)",
// who being "bef-compile" or "the reference evaluator".
Status UnsupportedCustomCallTarget(const HloInstruction& call, std::string_view who);

// The LAPACK FFI attributes kiln reads from backend_config: uplo ('L' or
// 'U') of potrf and syevd, mode of syevd ('V' vectors, 'N' values only) and
// gesdd ('A' full, 'S' reduced, 'N' no vectors). Absent keys keep the
// defaults; an unreadable value is an error.
struct LapackAttributes {
  char uplo = 'L';
  char mode = 0;
};
StatusOr<LapackAttributes> ReadLapackAttributes(const HloInstruction& call);

// The attributes of JAX's cuSOLVER targets (an MLIR dictionary, e.g.
// {lower = true} or {compute_uv = true, full_matrices = false, transposed =
// false}) and of XLA's __cusolver$cholesky (CholeskyOptions as JSON,
// {"lower":true}). Absent keys keep the defaults; a value other than true
// or false is an error.
struct GpuSolverAttributes {
  bool lower = false;          // potrf, syevd: the triangle read and written
  bool full_matrices = true;   // gesvd(j): full U and V, else min(m, n) columns
  bool compute_uv = true;      // gesvd(j): singular vectors too
  bool transposed = false;     // gesvd: the call factors A^T (results 2 and 3 swap)
};
StatusOr<GpuSolverAttributes> ReadGpuSolverAttributes(const HloInstruction& call);

// XLA GPU's __cublas$triangularSolve(a, b) -> (x, s8[] workspace): HLO's
// triangular-solve with its TriangularSolveOptions as JSON in
// backend_config ({"left_side":true,"lower":true,"unit_diagonal":false,
// "transpose_a":"NO_TRANSPOSE"}; transpose_a by name or number 1-3).
inline constexpr char kCublasTriangularSolveTarget[] = "__cublas$triangularSolve";
struct TriangularSolveOptions {
  bool left_side = false, lower = false, unit_diagonal = false;
  std::string transpose_a;  // NO_TRANSPOSE, TRANSPOSE or ADJOINT
};
StatusOr<TriangularSolveOptions> ReadTriangularSolveOptions(const HloInstruction& call);

}  // namespace kiln::hlo
