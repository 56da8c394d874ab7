// The custom-call target registry; see custom_call_targets.h.
#include "compiler/hlo/custom_call_targets.h"

#include <cctype>
#include <map>

#include "compiler/hlo/instruction.h"

namespace kiln::hlo {
namespace {

using Registry = std::map<std::string, CustomCallTarget, std::less<>>;

// lapack_<t><op>_ffi for the element types kiln's LinalgThunk (or, for
// potrf, CholeskyThunk) takes.
void AddLapack(Registry& r, std::string_view op_name, LapackOp op, std::string_view prefixes) {
  for (char p : prefixes) {
    ElementType type = p == 's' ? ElementType::kF32 : p == 'd' ? ElementType::kF64
                     : p == 'c' ? ElementType::kC64 : ElementType::kC128;
    r[std::string("lapack_") + p + std::string(op_name) + "_ffi"] =
        CustomCallTarget{CustomCallHandler::kLapackEmitter, op, type};
  }
}

Registry BuildRegistry() {
  Registry r;
  for (const char* t : {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
                        "MoveToHost", "MoveToDevice", "AwsNeuronTransferWithStaticRing"})
    r[t] = {CustomCallHandler::kAnnotation};
  r["__cublas$gemm"] = {CustomCallHandler::kGemmRewriter};
  r["__cublas$lt$matmul"] = {CustomCallHandler::kGemmRewriter};
  for (const char* t : {"__cudnn$convForward", "__cudnn$convBackwardInput", "__cudnn$convBackwardFilter",
                        "__cudnn$convBiasActivationForward"})
    r[t] = {CustomCallHandler::kCudnnConvRewriter};
  // JAX's GPU linear algebra (jaxlib/gpu/solver_kernels_ffi.cc): one target
  // for every element type.
  for (auto [name, op] : {std::pair<const char*, LapackOp>{"cusolver_potrf_ffi", LapackOp::kPotrf},
                          {"cusolver_getrf_ffi", LapackOp::kGetrf},
                          {"cusolver_geqrf_ffi", LapackOp::kGeqrf},
                          {"cusolver_orgqr_ffi", LapackOp::kOrgqr},
                          {"cusolver_syevd_ffi", LapackOp::kSyevd},
                          {"cusolver_gesvd_ffi", LapackOp::kGesdd},
                          {"cusolver_gesvdj_ffi", LapackOp::kGesdd},
                          {"cusolver_gesvdp_ffi", LapackOp::kGesdd}})
    r[name] = {CustomCallHandler::kGpuSolverRewriter, op};
  r["cu_lu_pivots_to_permutation"] = {CustomCallHandler::kGpuSolverRewriter};
  // XLA GPU's own potrf call (its cholesky op): (factor, workspace, info).
  r["__cusolver$cholesky"] = {CustomCallHandler::kGpuSolverRewriter, LapackOp::kPotrf};
  // XLA GPU's trsm call (its triangular-solve op): (x, workspace).
  r[kCublasTriangularSolveTarget] = {CustomCallHandler::kGpuSolverRewriter};
  r["AwsNeuronGelu"] = {CustomCallHandler::kActivationRewriter};
  r["AwsNeuronGeluApprxTanh"] = {CustomCallHandler::kActivationRewriter};
  r["TopK"] = {CustomCallHandler::kTopKRewriter};
  r["GetRngSeed"] = {CustomCallHandler::kCpuRewriter};
  r["__onednn$layernorm"] = {CustomCallHandler::kCpuRewriter};
  // passes::kCholeskyCallTarget: CholeskyRewriter's potrf.
  r["__kiln$cholesky"] = {CustomCallHandler::kCholeskyEmitter, LapackOp::kPotrf};
  // passes::kRadixSortCallTarget: RadixSortRewriter's sort.
  r["__kiln$radix_sort"] = {CustomCallHandler::kRadixSortEmitter};
  AddLapack(r, "potrf", LapackOp::kPotrf, "sdcz");
  AddLapack(r, "getrf", LapackOp::kGetrf, "sdcz");
  AddLapack(r, "geqrf", LapackOp::kGeqrf, "sdcz");
  AddLapack(r, "orgqr", LapackOp::kOrgqr, "sd");
  AddLapack(r, "ungqr", LapackOp::kOrgqr, "cz");
  AddLapack(r, "syevd", LapackOp::kSyevd, "sd");
  AddLapack(r, "heevd", LapackOp::kSyevd, "cz");
  AddLapack(r, "gesdd", LapackOp::kGesdd, "sdcz");
  // potrf of every type runs as the CholeskyThunk.
  for (auto& [name, target] : r)
    if (target.handler == CustomCallHandler::kLapackEmitter && target.lapack_op == LapackOp::kPotrf)
      target.handler = CustomCallHandler::kCholeskyEmitter;
  return r;
}

const Registry& TheRegistry() {
  static const Registry* registry = new Registry(BuildRegistry());
  return *registry;
}

// The value of `key = <int>` in an MLIR dictionary attribute's text.
StatusOr<std::optional<int64_t>> DictionaryInt(std::string_view text, std::string_view key) {
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    size_t i = at + key.size();
    while (i < text.size() && text[i] == ' ') ++i;
    if (!starts || i >= text.size() || text[i] != '=') continue;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == i || end - i > 9) return Error(std::string(key) + " is not a small integer");
    return std::optional<int64_t>(std::stoll(std::string(text.substr(i, end - i))));
  }
  return std::optional<int64_t>();
}

// The value of `key = true|false` (MLIR) or `"key":true|false` (JSON).
StatusOr<std::optional<bool>> DictionaryBool(std::string_view text, std::string_view key) {
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    size_t i = at + key.size();
    if (i < text.size() && text[i] == '"') ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    if (!starts || i >= text.size() || (text[i] != '=' && text[i] != ':')) continue;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    if (text.substr(i, 4) == "true") return std::optional<bool>(true);
    if (text.substr(i, 5) == "false") return std::optional<bool>(false);
    return Error(std::string(key) + " is not true or false");
  }
  return std::optional<bool>();
}

}  // namespace

std::string_view LapackOpName(LapackOp op) {
  switch (op) {
    case LapackOp::kPotrf: return "potrf";
    case LapackOp::kGetrf: return "getrf";
    case LapackOp::kGeqrf: return "geqrf";
    case LapackOp::kOrgqr: return "orgqr";
    case LapackOp::kSyevd: return "syevd";
    case LapackOp::kGesdd: return "gesdd";
  }
  return "?";
}

std::optional<CustomCallTarget> FindCustomCallTarget(std::string_view target) {
  if (target.substr(0, 8) == "xla.sdy.") return CustomCallTarget{CustomCallHandler::kAnnotation};
  auto it = TheRegistry().find(target);
  if (it == TheRegistry().end()) return std::nullopt;
  return it->second;
}

bool IsAnnotationTarget(std::string_view target) {
  std::optional<CustomCallTarget> t = FindCustomCallTarget(target);
  return t && t->handler == CustomCallHandler::kAnnotation;
}

Status UnsupportedCustomCallTarget(const HloInstruction& call, std::string_view who) {
  return Error(call.DebugName() + ": " + std::string(who) + " does not support custom-call target '" +
               call.GetString("custom_call_target") +
               "' (it runs sharding and placement annotations, __cublas$gemm, __cublas$lt$matmul, __cublas$triangularSolve, "
               "__cudnn$conv{Forward,BackwardInput,BackwardFilter,BiasActivationForward}, TopK, "
               "AwsNeuronGelu(ApprxTanh), GetRngSeed, __onednn$layernorm, JAX's LAPACK targets lapack_{s,d}{orgqr,syevd}_ffi, "
               "lapack_{c,z}{ungqr,heevd}_ffi and lapack_{s,d,c,z}{potrf,getrf,geqrf,gesdd}_ffi, and its cuSOLVER targets "
               "cusolver_{potrf,getrf,geqrf,orgqr,syevd,gesvd,gesvdj,gesvdp}_ffi and cu_lu_pivots_to_permutation, and __cusolver$cholesky)");
}

StatusOr<LapackAttributes> ReadLapackAttributes(const HloInstruction& call) {
  LapackAttributes attrs;
  const std::string text = call.BackendConfig();
  for (auto [key, field] : {std::pair<const char*, char*>{"uplo", &attrs.uplo}, {"mode", &attrs.mode}}) {
    StatusOr<std::optional<int64_t>> value = DictionaryInt(text, key);
    if (!value.ok()) return Error(call.DebugName() + ": backend_config " + value.status().message());
    if (*value) *field = static_cast<char>(**value);
  }
  if (attrs.uplo != 'L' && attrs.uplo != 'U')
    return Error(call.DebugName() + ": backend_config uplo must be 'L' (76) or 'U' (85)");
  return attrs;
}

StatusOr<GpuSolverAttributes> ReadGpuSolverAttributes(const HloInstruction& call) {
  GpuSolverAttributes attrs;
  const std::string text = call.BackendConfig();
  for (auto [key, field] : {std::pair<const char*, bool*>{"lower", &attrs.lower},
                            {"full_matrices", &attrs.full_matrices},
                            {"compute_uv", &attrs.compute_uv},
                            {"transposed", &attrs.transposed}}) {
    StatusOr<std::optional<bool>> value = DictionaryBool(text, key);
    if (!value.ok()) return Error(call.DebugName() + ": backend_config " + value.status().message());
    if (*value) *field = **value;
  }
  return attrs;
}

StatusOr<TriangularSolveOptions> ReadTriangularSolveOptions(const HloInstruction& call) {
  TriangularSolveOptions o;
  const std::string text = call.BackendConfig();
  for (auto [key, field] : {std::pair<const char*, bool*>{"left_side", &o.left_side},
                            {"lower", &o.lower},
                            {"unit_diagonal", &o.unit_diagonal}}) {
    StatusOr<std::optional<bool>> value = DictionaryBool(text, key);
    if (!value.ok()) return Error(call.DebugName() + ": backend_config " + value.status().message());
    if (*value) *field = **value;
  }
  // "transpose_a":"NAME" or "transpose_a":N (TriangularSolveOptions.Transpose).
  const size_t at = text.find("\"transpose_a\"");
  if (at != std::string::npos) {
    size_t i = at + 13;
    while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '"')) ++i;
    size_t end = i;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    const std::string word = text.substr(i, end - i);
    o.transpose_a = word == "1" ? "NO_TRANSPOSE" : word == "2" ? "TRANSPOSE" : word == "3" ? "ADJOINT" : word;
  }
  if (o.transpose_a != "NO_TRANSPOSE" && o.transpose_a != "TRANSPOSE" && o.transpose_a != "ADJOINT")
    return Error(call.DebugName() + ": backend_config transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  return o;
}

}  // namespace kiln::hlo
