// The cuBLASLt double: the cuBLASLt entry points kiln's FP8 GEMMs call
// (handle, matmul descriptor, matrix layouts, preference, heuristic,
// matmul), computed on the host over the emulated device's memory.
//
// It implements what Hopper's cuBLASLt does for FP8: A and B of
// CUDA_R_8F_E4M3 or CUDA_R_8F_E5M2 (not both E5M2), f32 compute and scale
// type, C and D of one type (f32, bf16 or f16), the "TN" form (A
// transposed, B not) with 16-byte aligned leading dimensions, batch
// strides and pointers, and the per-tensor A, B and D scale pointers
// (device f32 scalars; unset means 1.0). Anything else FP8 kernels do not
// run is CUBLAS_STATUS_NOT_SUPPORTED, and malformed arguments (null
// descriptors, shapes that do not multiply, leading dimensions shorter
// than a column, mismatched batch counts, attribute sizes) are
// CUBLAS_STATUS_INVALID_VALUE, with the reason in kilnEmuLastErrorDetail.
// Other data types are not implemented (NOT_SUPPORTED), nor are
// epilogues, device pointer mode, row-major orders or fp8 outputs.
//
// The arithmetic: every output is sum_k A(i,k) B(k,j) of the decoded f8
// values in double, times alpha and the A and B scales, plus beta C,
// times the D scale, rounded once to D's type. Hardware accumulates in
// f32 (more coarsely with fast accumulation); double is what XLA's
// reference computes, so tests compare against the evaluator's exact sums.
// The heuristic returns one algorithm, which asks for the smaller of the
// preference's workspace limit and kWorkspaceBytes: the matmul checks the
// caller hands it that much live device memory and writes it. Each matmul
// is one library call on its stream, modeled on the FP8 tensor cores
// (model::ModelGemm with GemmMath::kFp8Tensor). In sampling mode
// (KILN_EMU_SAMPLE) the checks and the time are the same but the sums are
// not computed (device memory does not hold results then).
#include <cublasLt.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common/float_formats.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/libs/matrix_operand.h"
#include "cuda_emulator/model/call_models.h"

// The handle's state; cublasLtHandle_t is an opaque pointer to it.
struct cublasLtContext {
  int unused = 0;
};

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::libs::CheckMatrix;
using kiln::emu::libs::CheckWrittenRange;
using Operand = kiln::emu::libs::MatrixOperand;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

// The workspace the emulated algorithm asks for (at most the preference's
// limit): enough that callers must hand over real device memory.
constexpr uint64_t kWorkspaceBytes = uint64_t{1} << 20;
// algo.data[0] of the algorithm the heuristic returns.
constexpr uint64_t kAlgorithmId = 0x6b696c6e4650380aull;

cublasStatus_t Reject(cublasStatus_t status, std::string detail) {
  kiln::emu::driver::SetErrorDetail(std::move(detail));
  return status;
}

// Descriptor state kept inside cuBLASLt's semi-opaque structs.
struct MatmulDescState {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;
};
struct LayoutState {
  cudaDataType_t type = CUDA_R_32F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t order = CUBLASLT_ORDER_COL;
  int32_t batch = 1;
  int64_t stride = 0;  // elements
};
struct PreferenceState {
  uint64_t max_workspace = 0;
};
static_assert(sizeof(MatmulDescState) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(LayoutState) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(PreferenceState) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

template <typename State, typename Opaque>
State* StateOf(Opaque* opaque) {
  return std::launder(reinterpret_cast<State*>(opaque->data));
}

// Creates an opaque descriptor holding a State built from `state`.
template <typename Opaque, typename State>
cublasStatus_t CreateDescriptor(Opaque** out, const State& state, const char* call) {
  kiln::emu::driver::ClearErrorDetail();
  if (!out) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": the descriptor pointer is null");
  Opaque* opaque = new Opaque{};
  new (opaque->data) State(state);
  *out = opaque;
  Device().CountLibraryDescriptors(1);
  return CUBLAS_STATUS_SUCCESS;
}

template <typename Opaque>
cublasStatus_t DestroyDescriptor(Opaque* opaque) {
  kiln::emu::driver::ClearErrorDetail();
  if (!opaque) return CUBLAS_STATUS_SUCCESS;  // as cuBLASLt: destroying null is a no-op
  delete opaque;
  Device().CountLibraryDescriptors(-1);
  return CUBLAS_STATUS_SUCCESS;
}

// Copies an attribute value of exactly sizeof(T) bytes into `*field`.
template <typename T>
cublasStatus_t SetField(T* field, const void* buf, size_t size, const char* call, int attr) {
  if (!buf || size != sizeof(T))
    return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": attribute " + std::to_string(attr) +
                                                   " takes " + std::to_string(sizeof(T)) + " bytes, got " +
                                                   std::to_string(size));
  std::memcpy(field, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t UnsupportedAttribute(const char* call, int attr) {
  return Reject(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(call) + ": attribute " + std::to_string(attr) + " is not implemented by the emulator");
}

bool IsF8(cudaDataType_t t) { return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2; }

size_t TypeBytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2: return 1;
    case CUDA_R_16BF:
    case CUDA_R_16F: return 2;
    default: return 4;
  }
}

kiln::ElementType ElementOf(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8F_E4M3: return kiln::ElementType::kF8E4M3FN;
    case CUDA_R_8F_E5M2: return kiln::ElementType::kF8E5M2;
    case CUDA_R_16BF: return kiln::ElementType::kBF16;
    case CUDA_R_16F: return kiln::ElementType::kF16;
    default: return kiln::ElementType::kF32;
  }
}

// A matmul's descriptors, checked: m x n output, k the contraction.
struct Problem {
  MatmulDescState desc;
  LayoutState a, b, c, d;
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

// The FP8 kernels' rules (types, TN, 16-byte alignment); "" when they hold.
std::string Fp8RuleError(const Problem& p) {
  if (p.desc.compute != CUBLAS_COMPUTE_32F || p.desc.scale != CUDA_R_32F)
    return "FP8 matmuls need CUBLAS_COMPUTE_32F with a CUDA_R_32F scale type";
  if (!IsF8(p.a.type) || !IsF8(p.b.type))
    return "the emulator's cuBLASLt implements FP8 matmuls only (A and B CUDA_R_8F_E4M3 or CUDA_R_8F_E5M2)";
  if (p.a.type == CUDA_R_8F_E5M2 && p.b.type == CUDA_R_8F_E5M2) return "FP8 matmuls have no E5M2 x E5M2 kernels";
  if (p.c.type != p.d.type || (p.d.type != CUDA_R_32F && p.d.type != CUDA_R_16BF && p.d.type != CUDA_R_16F))
    return "FP8 matmuls here take C and D of one type, CUDA_R_32F, CUDA_R_16BF or CUDA_R_16F";
  if (p.desc.transa != CUBLAS_OP_T || p.desc.transb != CUBLAS_OP_N)
    return "FP8 matmuls need the TN form (A transposed, B not)";
  for (const LayoutState* l : {&p.a, &p.b, &p.c, &p.d}) {
    if (l->order != CUBLASLT_ORDER_COL) return "only column-major layouts are implemented";
    const uint64_t bytes = TypeBytes(l->type);
    if ((static_cast<uint64_t>(l->ld) * bytes) % 16 != 0 ||
        (p.batch > 1 && (static_cast<uint64_t>(l->stride) * bytes) % 16 != 0))
      return "FP8 matmuls need 16-byte aligned leading dimensions and batch strides (ld " + std::to_string(l->ld) +
             ")";
  }
  return "";
}

// Builds and checks the problem; on failure *status and the detail are set.
bool DescribeProblem(const char* call, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A,
                     cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, Problem* p,
                     cublasStatus_t* status) {
  auto fail = [&](cublasStatus_t s, const std::string& why) {
    *status = Reject(s, std::string(call) + ": " + why);
    return false;
  };
  if (!desc || !A || !B || !C || !D) return fail(CUBLAS_STATUS_INVALID_VALUE, "a descriptor is null");
  p->desc = *StateOf<MatmulDescState>(desc);
  p->a = *StateOf<LayoutState>(A);
  p->b = *StateOf<LayoutState>(B);
  p->c = *StateOf<LayoutState>(C);
  p->d = *StateOf<LayoutState>(D);
  auto op_ok = [](int32_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T; };
  if (!op_ok(p->desc.transa) || !op_ok(p->desc.transb)) return fail(CUBLAS_STATUS_INVALID_VALUE, "bad transa/transb");
  const bool ta = p->desc.transa == CUBLAS_OP_T, tb = p->desc.transb == CUBLAS_OP_T;
  p->m = static_cast<int64_t>(ta ? p->a.cols : p->a.rows);
  p->k = static_cast<int64_t>(ta ? p->a.rows : p->a.cols);
  const int64_t kb = static_cast<int64_t>(tb ? p->b.cols : p->b.rows);
  p->n = static_cast<int64_t>(tb ? p->b.rows : p->b.cols);
  if (kb != p->k) return fail(CUBLAS_STATUS_INVALID_VALUE, "op(A) is m x " + std::to_string(p->k) + " but op(B) " +
                                                               std::to_string(kb) + " x n");
  for (const LayoutState* l : {&p->c, &p->d})
    if (static_cast<int64_t>(l->rows) != p->m || static_cast<int64_t>(l->cols) != p->n)
      return fail(CUBLAS_STATUS_INVALID_VALUE, "C and D must be " + std::to_string(p->m) + " x " +
                                                   std::to_string(p->n));
  for (const LayoutState* l : {&p->a, &p->b, &p->c, &p->d})
    if (l->ld < std::max<int64_t>(1, static_cast<int64_t>(l->rows)))
      return fail(CUBLAS_STATUS_INVALID_VALUE, "leading dimension " + std::to_string(l->ld) + " < rows " +
                                                   std::to_string(l->rows));
  p->batch = p->d.batch;
  for (const LayoutState* l : {&p->a, &p->b, &p->c})
    if (l->batch != p->batch) return fail(CUBLAS_STATUS_INVALID_VALUE, "the layouts' batch counts differ");
  if (p->batch < 1) return fail(CUBLAS_STATUS_INVALID_VALUE, "batch count must be positive");
  std::string rule = Fp8RuleError(*p);
  if (!rule.empty()) return fail(CUBLAS_STATUS_NOT_SUPPORTED, rule);
  return true;
}

// Reads a scale pointer's f32 (1 when unset); "" or the fault.
std::string ReadScale(const char* call, const char* name, const float* scale, double* value) {
  *value = 1.0;
  if (!scale) return "";
  Operand op{name, reinterpret_cast<uint64_t>(scale), 0, 1, 1, 1};
  std::string fault = CheckMatrix(call, op, 1, sizeof(float), false);
  if (fault.empty()) *value = *scale;
  return fault;
}

// The element (row, col) of a column-major matrix of `type` decoded.
double Element(const uint8_t* base, cudaDataType_t type, int64_t ld, int64_t row, int64_t col) {
  const uint8_t* at = base + (row + col * ld) * static_cast<int64_t>(TypeBytes(type));
  if (TypeBytes(type) == 1) return kiln::DecodeNarrowFloat(ElementOf(type), *at);
  if (TypeBytes(type) == 2) {
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    return kiln::DecodeNarrowFloat(ElementOf(type), bits);
  }
  float f;
  std::memcpy(&f, at, 4);
  return f;
}

void Store(uint8_t* base, cudaDataType_t type, int64_t ld, int64_t row, int64_t col, double value) {
  uint8_t* at = base + (row + col * ld) * static_cast<int64_t>(TypeBytes(type));
  if (TypeBytes(type) == 2) {
    const uint16_t bits = static_cast<uint16_t>(kiln::EncodeNarrowFloat(ElementOf(type), value));
    std::memcpy(at, &bits, 2);
    return;
  }
  const float f = static_cast<float>(value);
  std::memcpy(at, &f, 4);
}

struct Pointers {
  const uint8_t *a, *b, *c;
  uint8_t* d;
};

// op(X) of one batch decoded, row-major: rows x cols doubles.
std::vector<double> Decoded(const uint8_t* x, const LayoutState& l, bool transposed, int64_t rows, int64_t cols) {
  std::vector<double> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[static_cast<size_t>(r * cols + c)] = transposed ? Element(x, l.type, l.ld, c, r) : Element(x, l.type, l.ld, r, c);
  return out;
}

// D = d_scale (alpha a_scale b_scale op(A) op(B) + beta C), batch by batch.
void Compute(const Problem& p, const Pointers& ptr, double alpha, double beta, double ab_scale, double d_scale) {
  const bool ta = p.desc.transa == CUBLAS_OP_T, tb = p.desc.transb == CUBLAS_OP_T;
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    // op(A) as m x k and op(B) transposed (n x k), so each sum walks two rows.
    const std::vector<double> a = Decoded(ptr.a + batch * p.a.stride, p.a, ta, p.m, p.k);  // f8: 1 byte each
    const std::vector<double> bt = Decoded(ptr.b + batch * p.b.stride, p.b, !tb, p.n, p.k);
    const uint8_t* c = ptr.c + batch * p.c.stride * static_cast<int64_t>(TypeBytes(p.c.type));
    uint8_t* d = ptr.d + batch * p.d.stride * static_cast<int64_t>(TypeBytes(p.d.type));
    for (int64_t j = 0; j < p.n; ++j) {
      for (int64_t i = 0; i < p.m; ++i) {
        double sum = 0;
        for (int64_t q = 0; q < p.k; ++q) sum += a[static_cast<size_t>(i * p.k + q)] * bt[static_cast<size_t>(j * p.k + q)];
        double value = alpha * ab_scale * sum;
        if (beta != 0) value += beta * Element(c, p.c.type, p.c.ld, i, j);
        Store(d, p.d.type, p.d.ld, i, j, d_scale * value);
      }
    }
  }
}

// The memory checks of a matmul, under the memory's read lock; "" or the
// fault.
std::string CheckOperands(const char* call, const Problem& p, const Pointers& ptr, bool reads_ab, bool reads_c,
                          uint64_t workspace, uint64_t workspace_bytes) {
  auto operand = [](const char* name, const void* base, const LayoutState& l) {
    return Operand{name, reinterpret_cast<uint64_t>(base), l.stride, static_cast<int64_t>(l.rows),
                   static_cast<int64_t>(l.cols), l.ld};
  };
  std::string fault;
  if (reads_ab) fault = CheckMatrix(call, operand("A", ptr.a, p.a), p.batch, TypeBytes(p.a.type), false);
  if (fault.empty() && reads_ab) fault = CheckMatrix(call, operand("B", ptr.b, p.b), p.batch, TypeBytes(p.b.type), false);
  if (fault.empty() && reads_c) fault = CheckMatrix(call, operand("C", ptr.c, p.c), p.batch, TypeBytes(p.c.type), false);
  if (fault.empty()) fault = CheckMatrix(call, operand("D", ptr.d, p.d), p.batch, TypeBytes(p.d.type), true);
  if (fault.empty()) fault = CheckWrittenRange(call, "the workspace", workspace, workspace_bytes);
  return fault;
}

bool Aligned16(const void* p) { return reinterpret_cast<uint64_t>(p) % 16 == 0; }

}  // namespace

extern "C" {

KILN_EMU_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_INVALID_VALUE, "cublasLtCreate: the handle pointer is null");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUBLAS_STATUS_NOT_INITIALIZED;  // detail set
  *handle = new cublasLtContext();
  Device().CountLibraryHandles(1);
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy: the handle is null");
  delete handle;
  Device().CountLibraryHandles(-1);
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT const char* cublasLtGetStatusName(cublasStatus_t status) { return cublasGetStatusName(status); }

KILN_EMU_EXPORT const char* cublasLtGetStatusString(cublasStatus_t status) { return cublasGetStatusString(status); }

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                                        cudaDataType_t scale) {
  MatmulDescState state;
  state.compute = compute;
  state.scale = scale;
  return CreateDescriptor(desc, state, "cublasLtMatmulDescCreate");
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) { return DestroyDescriptor(desc); }

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                                              size_t size) {
  const char* call = "cublasLtMatmulDescSetAttribute";
  kiln::emu::driver::ClearErrorDetail();
  if (!desc) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": the descriptor is null");
  MatmulDescState& s = *StateOf<MatmulDescState>(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return SetField(&s.compute, buf, size, call, attr);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return SetField(&s.scale, buf, size, call, attr);
    case CUBLASLT_MATMUL_DESC_TRANSA: return SetField(&s.transa, buf, size, call, attr);
    case CUBLASLT_MATMUL_DESC_TRANSB: return SetField(&s.transb, buf, size, call, attr);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: return SetField(&s.a_scale, buf, size, call, attr);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: return SetField(&s.b_scale, buf, size, call, attr);
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER: return SetField(&s.d_scale, buf, size, call, attr);
    default: return UnsupportedAttribute(call, attr);
  }
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                                          uint64_t rows, uint64_t cols, int64_t ld) {
  LayoutState state;
  state.type = type;
  state.rows = rows;
  state.cols = cols;
  state.ld = ld;
  state.stride = 0;
  return CreateDescriptor(layout, state, "cublasLtMatrixLayoutCreate");
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  return DestroyDescriptor(layout);
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                                cublasLtMatrixLayoutAttribute_t attr,
                                                                const void* buf, size_t size) {
  const char* call = "cublasLtMatrixLayoutSetAttribute";
  kiln::emu::driver::ClearErrorDetail();
  if (!layout) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": the layout is null");
  LayoutState& s = *StateOf<LayoutState>(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return SetField(&s.type, buf, size, call, attr);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return SetField(&s.order, buf, size, call, attr);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return SetField(&s.rows, buf, size, call, attr);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return SetField(&s.cols, buf, size, call, attr);
    case CUBLASLT_MATRIX_LAYOUT_LD: return SetField(&s.ld, buf, size, call, attr);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return SetField(&s.batch, buf, size, call, attr);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return SetField(&s.stride, buf, size, call, attr);
    default: return UnsupportedAttribute(call, attr);
  }
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return CreateDescriptor(pref, PreferenceState{}, "cublasLtMatmulPreferenceCreate");
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return DestroyDescriptor(pref);
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                                    const void* buf, size_t size) {
  const char* call = "cublasLtMatmulPreferenceSetAttribute";
  kiln::emu::driver::ClearErrorDetail();
  if (!pref) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": the preference is null");
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) return UnsupportedAttribute(call, attr);
  return SetField(&StateOf<PreferenceState>(pref)->max_workspace, buf, size, call, attr);
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
    cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int* returned) {
  const char* call = "cublasLtMatmulAlgoGetHeuristic";
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  if (!pref || !results || !returned || requested <= 0)
    return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": null arguments or requestedAlgoCount <= 0");
  *returned = 0;
  Problem p;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (!DescribeProblem(call, desc, A, B, C, D, &p, &status)) return status;
  cublasLtMatmulHeuristicResult_t& r = results[0];
  r = cublasLtMatmulHeuristicResult_t{};
  r.algo.data[0] = kAlgorithmId;
  r.workspaceSize = std::min(StateOf<PreferenceState>(pref)->max_workspace, kWorkspaceBytes);
  r.algo.data[1] = r.workspaceSize;
  r.state = CUBLAS_STATUS_SUCCESS;
  r.wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                              const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
                                              cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                              cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                                              const cublasLtMatmulAlgo_t* algo, void* workspace,
                                              size_t workspace_bytes, cudaStream_t stream) {
  const char* call = "cublasLtMatmul";
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  Problem p;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (!DescribeProblem(call, desc, Adesc, Bdesc, Cdesc, Ddesc, &p, &status)) return status;
  if (!alpha || !beta) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": alpha and beta must not be null");
  if (algo && algo->data[0] != kAlgorithmId)
    return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": the algorithm is not one the heuristic returned");
  const uint64_t needed = algo ? algo->data[1] : 0;
  if (workspace_bytes < needed || (needed > 0 && !workspace))
    return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": the algorithm needs " + std::to_string(needed) +
                                                   " bytes of workspace, got " + std::to_string(workspace_bytes));
  if (!Aligned16(A) || !Aligned16(B) || !Aligned16(C) || !Aligned16(D))
    return Reject(CUBLAS_STATUS_NOT_SUPPORTED, std::string(call) + ": FP8 matmuls need 16-byte aligned A, B, C and D");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;  // detail set
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(stream);
  if (!timeline) return Reject(CUBLAS_STATUS_EXECUTION_FAILED, std::string(call) + ": not a live stream");
  const double a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  const bool reads_ab = p.k > 0 && a != 0;
  const Pointers ptr{static_cast<const uint8_t*>(A), static_cast<const uint8_t*>(B), static_cast<const uint8_t*>(C),
                     static_cast<uint8_t*>(D)};
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while the matmul runs
      double a_scale = 1, b_scale = 1, d_scale = 1;
      std::string fault = ReadScale(call, "the A scale", p.desc.a_scale, &a_scale);
      if (fault.empty()) fault = ReadScale(call, "the B scale", p.desc.b_scale, &b_scale);
      if (fault.empty()) fault = ReadScale(call, "the D scale", p.desc.d_scale, &d_scale);
      if (fault.empty())
        fault = CheckOperands(call, p, ptr, reads_ab, b != 0, reinterpret_cast<uint64_t>(workspace), needed);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      if (Device().sample_blocks() == 0) Compute(p, ptr, reads_ab ? a : 0.0, b, a_scale * b_scale, d_scale);
    }
    kiln::emu::model::GemmShape shape{p.m, p.n, p.k, p.batch, 1, reads_ab, b != 0,
                                      static_cast<uint32_t>(TypeBytes(p.d.type)), false};
    kiln::emu::model::GemmTime time = kiln::emu::model::ModelGemm(shape, kiln::emu::model::GemmMath::kFp8Tensor);
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
