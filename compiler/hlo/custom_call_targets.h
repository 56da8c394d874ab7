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

}  // namespace kiln::hlo
