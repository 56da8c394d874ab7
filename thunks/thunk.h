// Thunk: one step of a kiln host program, as plain data.
//
// A compiled module runs as a tree of thunks (XLA's GPU runtime model):
// kernel launches, library calls (GEMM, convolution, FFT, Cholesky,
// triangular solve, radix sort), copies, memsets,
// control flow and collectives, each reading and writing BufferSlices. The
// kinds are structs gathered in a std::variant rather than a class
// hierarchy: the program is then a value (copyable, comparable with ==),
// which is what serialization round trips and tests need, and the runtime
// dispatches with std::visit or a switch on kind(). Kinds whose execution
// comes later are modelled already so the .bef schema is stable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/element_type.h"
#include "common/shape.h"
#include "thunks/buffer.h"
#include "thunks/thunk_info.h"

namespace kiln::thunks {

struct Thunk;

// ---- kernels --------------------------------------------------------------

struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
  int64_t product() const { return x * y * z; }
  bool operator==(const Dim3&) const = default;
};

struct LaunchDims {
  Dim3 grid;
  Dim3 block;
  int64_t shared_memory_bytes = 0;  // dynamic shared memory
  bool operator==(const LaunchDims&) const = default;
};

struct KernelArgument {
  BufferSlice slice;
  bool written = false;  // the kernel writes this argument
  bool operator==(const KernelArgument&) const = default;
};

// Launches a compiled kernel, found by name in the artifact's kernel image
// for the running target (cubin/PTX on CUDA, the shared object on the host).
// `launch` is the CUDA launch, left at its default (1,1,1) when the artifact
// has no CUDA image: the host runs a kernel over the work units its host
// kernel entry records (any int64 count), never over these dimensions.
struct KernelThunk {
  std::string kernel_name;
  std::vector<KernelArgument> args;
  LaunchDims launch;
  bool operator==(const KernelThunk&) const = default;
};

// ---- library calls -------------------------------------------------------

// out[b] = alpha * op(lhs[b]) x op(rhs[b]) + beta * out[b] for b < batch,
// op(lhs) being m x k and op(rhs) k x n. Matrices are stored row-major:
// lhs is m rows of k elements (k rows of m when lhs_transposed), with
// *_leading_dim elements from one stored row to the next and *_batch_stride
// elements from one batch matrix to the next; likewise rhs (k x n, or n x k
// transposed) and out (m x n, never transposed). Explicit strides rather
// than a layout let the compiler describe any dot it lowers to a BLAS call.
struct GemmThunk {
  BufferSlice lhs, rhs, out;
  std::optional<BufferSlice> workspace;
  ElementType lhs_type = ElementType::kF32;
  ElementType rhs_type = ElementType::kF32;
  ElementType out_type = ElementType::kF32;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool lhs_transposed = false, rhs_transposed = false;
  int64_t lhs_leading_dim = 0, rhs_leading_dim = 0, out_leading_dim = 0;
  int64_t lhs_batch_stride = 0, rhs_batch_stride = 0, out_batch_stride = 0;
  double alpha_real = 1.0, alpha_imag = 0.0, beta = 0.0;
  // f32 x f32 -> f32 only: the library may round the operands to TF32 (the
  // dot's precision is DEFAULT: see compiler/passes/dot_precision.h). CUDA
  // then runs the GEMM on the TF32 tensor cores; the host ignores it.
  bool tf32 = false;
  bool operator==(const GemmThunk&) const = default;
};

// An FP8 GEMM: f8e4m3fn or f8e5m2 operands (not both f8e5m2) with an f32,
// bf16 or f16 result, accumulated in f32. CUDA runs it through cuBLASLt on
// the FP8 tensor cores, which take only the "TN" form: lhs [m,k] and rhs
// [n,k] (both contracting their contiguous dimension, rhs_transposed) with
// k and n multiples of 16 (16-byte aligned rows of operands and result),
// which DotCanonicalization produces (compiler/passes/fp8_gemm.h). The
// host widens the operands to f32 (exact) and runs an sgemm.
bool IsFp8Gemm(const GemmThunk& gemm);
// The f8 element types an FP8 GEMM operand may have.
bool IsFp8GemmOperandType(ElementType type);

enum class ConvolutionKind : uint8_t { kForward, kBackwardInput, kBackwardFilter };
std::string_view ConvolutionKindName(ConvolutionKind kind);  // "forward", ...

// HLO's ConvolutionDimensionNumbers (dim_labels), as dimension numbers.
struct ConvolutionDimensions {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvolutionDimensions&) const = default;
};

// One spatial dimension of HLO's window attribute.
struct WindowDimension {
  int64_t size = 1, stride = 1, padding_low = 0, padding_high = 0;
  int64_t lhs_dilation = 1, rhs_dilation = 1;
  bool reversal = false;
  bool operator==(const WindowDimension&) const = default;
};

// A convolution done by a library (cuDNN, or the host kernels). operands are
// (input, filter) for kForward, (output-gradient, filter) for
// kBackwardInput, (input, output-gradient) for kBackwardFilter; shapes carry
// element types and layouts.
struct ConvolutionThunk {
  ConvolutionKind kind = ConvolutionKind::kForward;
  std::vector<BufferSlice> operands;
  std::vector<Shape> operand_shapes;
  BufferSlice result;
  Shape result_shape;
  std::optional<BufferSlice> scratch;
  ConvolutionDimensions dimensions;
  std::vector<WindowDimension> window;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  bool operator==(const ConvolutionThunk&) const = default;
};

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
std::string_view FftTypeName(FftType type);  // "FFT", "IFFT", "RFFT", "IRFFT"

// HLO's fft over the innermost fft_length.size() dimensions.
struct FftThunk {
  FftType type = FftType::kFft;
  std::vector<int64_t> fft_length;
  BufferSlice input, output;
  Shape input_shape, output_shape;
  bool operator==(const FftThunk&) const = default;
};

// ---- linear algebra ---------------------------------------------------------------

// Cholesky factorization of `batch` dense row-major n x n matrices of
// `type` (f32, f64, c64, c128), in place, as LAPACK's and cuSOLVER's potrf:
// on entry `a` holds the matrices, of which only the `lower` (else upper)
// triangle is read; on exit that triangle holds L with a = L L^H (upper: U
// with a = U^H U) and the other triangle is left as it was. info (batch
// s32 values) receives potrf's status per matrix: 0, or i > 0 when the
// leading minor of order i is not positive definite (that matrix is then
// partly factored). HLO's cholesky is this thunk followed by a kernel that
// zeroes the other triangle and fills failed matrices with NaN
// (passes::CholeskyRewriter), which is what XLA returns.
struct CholeskyThunk {
  BufferSlice a, info;
  ElementType type = ElementType::kF32;
  int64_t n = 0, batch = 1;
  bool lower = true;
  bool operator==(const CholeskyThunk&) const = default;
};

// HLO's transpose_a: op(a) is a, a^T or a^H.
enum class TriangularSolveTranspose : uint8_t { kNoTranspose, kTranspose, kAdjoint };
// "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT" (HLO's spelling).
std::string_view TriangularSolveTransposeName(TriangularSolveTranspose transpose);

// HLO's triangular-solve of `batch` dense row-major systems of `type` (f32,
// f64, c64, c128), in place, as BLAS trsm: on entry b holds m x n right-hand
// sides, on exit the x solving op(a) x = b (left_side) or x op(a) = b. a is
// k x k with k = m (left_side) or n; only its `lower` (else upper) triangle
// is read, and with unit_diagonal its diagonal is taken to be ones.
struct TriangularSolveThunk {
  BufferSlice a, b;
  ElementType type = ElementType::kF32;
  int64_t m = 0, n = 0, batch = 1;
  bool left_side = false, lower = false, unit_diagonal = false;
  TriangularSolveTranspose transpose_a = TriangularSolveTranspose::kNoTranspose;
  int64_t k() const { return left_side ? m : n; }
  bool operator==(const TriangularSolveThunk&) const = default;
};

// A LAPACK routine of JAX's jnp.linalg custom calls (lapack_*_ffi).
enum class LinalgOp : uint8_t { kGetrf, kGeqrf, kOrgqr, kSyevd, kGesdd };
// "getrf", "geqrf", "orgqr", "syevd", "gesdd".
std::string_view LinalgOpName(LinalgOp op);

// One LAPACK routine on `batch` dense row-major m x n matrices of `type`
// (f32, f64, c64, c128; orgqr and syevd are ungqr and heevd for complex
// types, whose w and s are real), as XLA's FFI kernels return it for the logical matrices (the
// runtime hands LAPACK column-major copies; workspace is its own). `a`
// holds the matrices on entry and result 0 on exit; `results` are the
// others, in the custom call's order:
//   getrf: ipiv s32[batch, min(m,n)] (1-based), info s32[batch]
//   geqrf: tau [batch, min(m,n)]
//   orgqr: none; `tau` [batch, k] is read, Q (m x n, k <= n <= m) written to a
//   syevd: w [batch, n] ascending, info; a receives the eigenvectors (columns)
//          (only the `lower` (else upper) triangle of a is read)
//   gesdd: s [batch, min(m,n)] descending, u, vt, info; a is scratch.
//          mode 'A': u m x m, vt n x n; 'S': u m x k, vt k x n; 'N': no
//          vectors (u and vt are zeroed).
struct LinalgThunk {
  LinalgOp op = LinalgOp::kGetrf;
  ElementType type = ElementType::kF32;
  int64_t m = 0, n = 0, k = 0, batch = 1;  // k: orgqr's reflectors
  bool lower = true;
  char mode = 0;  // syevd 'V' / 'N', gesdd 'A' / 'S' / 'N'
  BufferSlice a, tau;
  std::vector<BufferSlice> results;
  bool operator==(const LinalgThunk&) const = default;
};

// ---- sorting ----------------------------------------------------------------

// How a radix sort orders keys (the comparator it stands for): unsigned or
// two's complement integers; floats in TOTALORDER (-NaN < -inf < ... < -0 <
// +0 < ... < +inf < +NaN); floats under the default compare (-0 == +0;
// NaN, which that compare leaves unordered, by total order); floats under
// JAX's comparator (-0 == +0, every NaN equal and after +inf).
enum class RadixKeyOrder : uint8_t { kUnsigned, kSigned, kFloatTotal, kFloatPartial, kFloatNumpy };
// "unsigned", "signed", "float-total", "float-partial", "float-numpy".
std::string_view RadixKeyOrderName(RadixKeyOrder order);

// A stable sort of `rows` rows of `row_length` keys of `key_type` (dense
// row-major, the sorted dimension minor), ascending or descending in
// `order`, with an optional payload of `value_type` moved with its key:
// HLO's sort whose comparator is one LT/GT compare of the key's two
// parameters (passes::RadixSortRewriter). Runs on CUDA as kiln's radix sort
// kernels built from CUB's block primitives (kernels_lib/cub_sort; scratch
// comes from the library scratch), and on the host as a stable sort by the
// same key bits (kernels_lib/host_radix_sort).
struct RadixSortThunk {
  BufferSlice keys, keys_out;
  std::optional<BufferSlice> values, values_out;  // both or neither
  ElementType key_type = ElementType::kF32;
  ElementType value_type = ElementType::kS32;  // meaningful with values
  int64_t rows = 0, row_length = 0;
  RadixKeyOrder order = RadixKeyOrder::kUnsigned;
  bool descending = false;
  bool operator==(const RadixSortThunk&) const = default;
};

// ---- data movement ----------------------------------------------------------

struct CopyThunk {
  BufferSlice source, destination;  // equal sizes
  bool operator==(const CopyThunk&) const = default;
};

// Fills destination with a repeated 32-bit pattern (0 = memzero; a nonzero
// pattern needs a size that is a multiple of 4).
struct MemsetThunk {
  BufferSlice destination;
  uint32_t pattern = 0;
  bool operator==(const MemsetThunk&) const = default;
};

// The random-number state of XLA's rng-get-and-update-state: writes the
// thunk's current 128-bit state to `state` (u64[2], low word first) and
// advances it by `delta`. The state belongs to the thunk in one loaded
// executable (the runtime keeps it, starting at kRngStateInitialValue for
// every thunk, as XLA does) and persists across executions.
struct RngGetAndUpdateStateThunk {
  BufferSlice state;  // 16 bytes
  int64_t delta = 0;
  bool operator==(const RngGetAndUpdateStateThunk&) const = default;
};
// XLA's initial state: any nonzero value works; XLA's keeps programs that
// draw from it reproducible across XLA and kiln.
inline constexpr uint64_t kRngStateInitialValue = 0x7012395;

// ---- control flow ---------------------------------------------------------

// Runs its children in order.
struct SequenceThunk {
  std::vector<Thunk> thunks;
  bool operator==(const SequenceThunk&) const;
};

// do { condition; if (!*predicate) break; body; } with a PRED predicate
// written by the condition. With a known trip count the runtime may run the
// body trip_count times without reading the predicate back (no host sync).
struct WhileThunk {
  SequenceThunk condition;
  BufferSlice predicate;
  SequenceThunk body;
  std::optional<int64_t> trip_count;
  bool operator==(const WhileThunk&) const;
};

// Runs one branch. is_pred: branch_index holds a PRED, true -> branch 0,
// false -> branch 1 (HLO's true/false computations). Otherwise it holds an
// S32 index; an out-of-range index runs the last branch (XLA semantics).
struct ConditionalThunk {
  BufferSlice branch_index;
  bool is_pred = false;
  std::vector<SequenceThunk> branches;
  bool operator==(const ConditionalThunk&) const;
};

// ---- collectives -------------------------------------------------------------

// and / or are the reducers of pred (logical) and integers (bitwise).
enum class ReductionKind : uint8_t { kSum, kProduct, kMin, kMax, kAnd, kOr };
std::string_view ReductionKindName(ReductionKind kind);  // "sum", ...

// HLO's replica_groups / channel_id / use_global_device_ids as written, and
// the groups they resolve to on the module's device grid (XLA's
// GetParticipatingDevices, done once at compile time): every group lists
// global device ids (replica * num_partitions + partition) in rank order,
// and every device of the grid is in exactly one group. A device looks up
// its group and its rank in it; nothing is derived at run time.
// async_id: present on the start half of an async pair (all-reduce-start,
// all-gather-start, collective-permute-start, async-start of a collective);
// the CollectiveDoneThunk with the same id completes it.
struct CollectiveConfig {
  std::vector<std::vector<int64_t>> replica_groups;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  std::vector<std::vector<int64_t>> device_groups;
  std::optional<int64_t> async_id;
  bool operator==(const CollectiveConfig&) const = default;
};

// One operand of a collective: element_count elements of element_type read
// from source, of dimensions `dims` (dense row-major); the result goes to
// destination.
struct CollectiveBuffer {
  BufferSlice source, destination;
  ElementType element_type = ElementType::kF32;
  int64_t element_count = 0;
  std::vector<int64_t> dims;
  bool operator==(const CollectiveBuffer&) const = default;
};

struct AllReduceThunk {
  CollectiveConfig config;
  ReductionKind reduction = ReductionKind::kSum;
  std::vector<CollectiveBuffer> buffers;
  bool operator==(const AllReduceThunk&) const = default;
};

// Contributions concatenated along `dimension` in rank order.
struct AllGatherThunk {
  CollectiveConfig config;
  int64_t dimension = 0;  // all_gather_dimension
  std::vector<CollectiveBuffer> buffers;
  bool operator==(const AllGatherThunk&) const = default;
};

// The all-reduce's block `rank` of `dimension`.
struct ReduceScatterThunk {
  CollectiveConfig config;
  ReductionKind reduction = ReductionKind::kSum;
  int64_t dimension = 0;  // scatter_dimension
  std::vector<CollectiveBuffer> buffers;
  bool operator==(const ReduceScatterThunk&) const = default;
};

// Split form: block i of split_dimension goes to rank i, received blocks
// concatenate in rank order. Tuple form (no split_dimension): buffer i's
// source goes to rank i, and buffer j's destination receives rank j's
// source number `rank`.
struct AllToAllThunk {
  CollectiveConfig config;
  std::optional<int64_t> split_dimension;  // absent: tuple form
  std::vector<CollectiveBuffer> buffers;
  bool operator==(const AllToAllThunk&) const = default;
};

// source_target_pairs as written; device_pairs the (source, target) global
// device ids they resolve to on every replica (or partition). A device that
// is no pair's target receives zeros.
struct CollectivePermuteThunk {
  CollectiveConfig config;  // replica_groups unused
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  CollectiveBuffer buffer;
  std::vector<std::pair<int64_t, int64_t>> device_pairs;
  bool operator==(const CollectivePermuteThunk&) const = default;
};

// Every rank of a group receives rank 0's value.
struct CollectiveBroadcastThunk {
  CollectiveConfig config;
  std::vector<CollectiveBuffer> buffers;
  bool operator==(const CollectiveBroadcastThunk&) const = default;
};

// Waits for the collective started by the thunk whose config has this
// async_id; its destinations hold the results afterwards.
struct CollectiveDoneThunk {
  int64_t async_id = 0;
  bool operator==(const CollectiveDoneThunk&) const = default;
};

// replica-id / partition-id: the running device's id, a u32 the runtime
// supplies (device = replica * num_partitions + partition).
enum class DeviceIdKind : uint8_t { kReplica, kPartition };
std::string_view DeviceIdKindName(DeviceIdKind kind);  // "replica", "partition"

struct DeviceIdThunk {
  DeviceIdKind kind = DeviceIdKind::kReplica;
  BufferSlice destination;  // 4 bytes
  bool operator==(const DeviceIdThunk&) const = default;
};

// ---- escape hatch --------------------------------------------------------------

// A call to a named custom-call target registered with the runtime.
struct CustomCallThunk {
  std::string target;
  std::vector<BufferSlice> operands;
  std::vector<BufferSlice> results;
  std::string backend_config;  // opaque bytes, passed through unchanged
  int32_t api_version = 0;
  bool operator==(const CustomCallThunk&) const = default;
};

// ---- the thunk -------------------------------------------------------------

// The variant's alternatives, in ThunkKind order.
using ThunkBody =
    std::variant<KernelThunk, GemmThunk, ConvolutionThunk, FftThunk, CopyThunk, MemsetThunk,
                 SequenceThunk, WhileThunk, ConditionalThunk, AllReduceThunk, AllGatherThunk,
                 ReduceScatterThunk, AllToAllThunk, CollectivePermuteThunk, CustomCallThunk,
                 RngGetAndUpdateStateThunk, CholeskyThunk, TriangularSolveThunk, LinalgThunk,
                 RadixSortThunk, CollectiveBroadcastThunk, CollectiveDoneThunk, DeviceIdThunk>;

enum class ThunkKind : uint8_t {
  kKernel, kGemm, kConvolution, kFft, kCopy, kMemset, kSequence, kWhile, kConditional,
  kAllReduce, kAllGather, kReduceScatter, kAllToAll, kCollectivePermute, kCustomCall,
  kRngGetAndUpdateState, kCholesky, kTriangularSolve, kLinalg, kRadixSort,
  kCollectiveBroadcast, kCollectiveDone, kDeviceId,
};
inline constexpr int kNumThunkKinds = 23;
static_assert(std::variant_size_v<ThunkBody> == kNumThunkKinds);

// "kernel", "gemm", "convolution", "fft", "copy", "memset", "sequence",
// "while", "conditional", "all-reduce", "all-gather", "reduce-scatter",
// "all-to-all", "collective-permute", "custom-call",
// "rng-get-and-update-state", "cholesky", "triangular-solve", "linalg",
// "radix-sort", "collective-broadcast", "collective-done", "device-id".
std::string_view ThunkKindName(ThunkKind kind);

// Multi-stream execution (thunks/streams.h): the direct children of a
// program's root sequence run on `stream` (0 unless the compiler assigned
// streams); before starting, a thunk waits until every event of
// wait_events has been recorded, and once it has finished it records
// record_event (-1: none). Nested thunks run on their parent's stream and
// carry neither.
struct Thunk {
  ThunkInfo info;
  ThunkBody body;
  int32_t stream = 0;
  std::vector<int32_t> wait_events;
  int32_t record_event = -1;

  ThunkKind kind() const { return static_cast<ThunkKind>(body.index()); }
  template <typename T>
  const T* As() const { return std::get_if<T>(&body); }
  template <typename T>
  T* As() { return std::get_if<T>(&body); }
  bool operator==(const Thunk&) const = default;
};

inline bool SequenceThunk::operator==(const SequenceThunk& o) const { return thunks == o.thunks; }
inline bool WhileThunk::operator==(const WhileThunk& o) const {
  return condition == o.condition && predicate == o.predicate && body == o.body &&
         trip_count == o.trip_count;
}
inline bool ConditionalThunk::operator==(const ConditionalThunk& o) const {
  return branch_index == o.branch_index && is_pred == o.is_pred && branches == o.branches;
}

// The slices a thunk itself reads or writes, not those of nested sequences.
std::vector<BufferSlice> DirectSlices(const Thunk& thunk);

// True for the thunks that exchange data between devices.
bool IsCollective(ThunkKind kind);
// The config of a collective thunk (nullptr for other kinds).
const CollectiveConfig* CollectiveConfigOf(const Thunk& thunk);

// The nested sequences of a control-flow thunk (empty for other kinds).
std::vector<const SequenceThunk*> ChildSequences(const Thunk& thunk);

}  // namespace kiln::thunks
