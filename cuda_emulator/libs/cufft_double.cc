// The cuFFT double: the cuFFT entry points kiln calls
// (kernels_lib/cufft_library.h), computed on the host over the emulated
// device's memory with reference DFTs in double precision
// (reference_dft.h), rounded once to the plan's precision.
//
// As the cuBLAS and cuDNN doubles, what makes it a faithful double is
// everything around the arithmetic: plans are validated by cuFFT's
// documented rules (rank 1 to 3, positive sizes and batch:
// CUFFT_INVALID_SIZE; a known type: CUFFT_INVALID_TYPE), an exec call must
// match its plan's type (CUFFT_INVALID_PLAN) and direction
// (CUFFT_INVALID_VALUE), input and output ranges must lie in live
// allocations (else CUFFT_EXEC_FAILED, reported and sticky like a kernel's
// illegal address) and the input must have been written (initcheck), and
// each exec counts as one launch on the plan's stream (the legacy default
// stream until cufftSetStream), modeled by model::ModelFft. Transforms are
// unnormalized, as cuFFT's are. A complex-to-real transform overwrites its
// input, which cuFFT documents it may do out of place: the double fills the
// input with NaNs afterwards, so a caller that relies on the input surviving
// fails loudly. C2R reads only the n/2+1 stored terms of the last
// dimension, inverting the outer dimensions first (numpy's irfftn). What
// it does not implement (advanced data layouts, in-place real transforms,
// partially overlapping buffers) is CUFFT_NOT_SUPPORTED, never ignored.
#include <cufft.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/libs/reference_dft.h"
#include "cuda_emulator/model/call_models.h"

namespace {

using kiln::emu::Allocation;
using kiln::emu::ComplexD;
using kiln::emu::driver::EmulatedDevice;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

cufftResult Reject(cufftResult result, std::string detail) {
  kiln::emu::driver::SetErrorDetail(std::move(detail));
  return result;
}

struct Plan {
  std::vector<int64_t> n;  // logical (real-side) lengths
  cufftType type = CUFFT_C2C;
  int64_t batch = 1;
  CUstream stream = nullptr;  // the legacy default stream until set

  bool real_input() const { return type == CUFFT_R2C || type == CUFFT_D2Z; }
  bool real_output() const { return type == CUFFT_C2R || type == CUFFT_Z2D; }
  bool double_precision() const { return type == CUFFT_Z2Z || type == CUFFT_D2Z || type == CUFFT_Z2D; }
  // Dimensions of one transform's complex side (n/2+1 last for real types).
  std::vector<int64_t> ComplexDims() const {
    std::vector<int64_t> d = n;
    if (real_input() || real_output()) d.back() = n.back() / 2 + 1;
    return d;
  }
  int64_t RealCount() const {
    int64_t c = 1;
    for (int64_t v : n) c *= v;
    return c;
  }
  int64_t ComplexCount() const {
    int64_t c = 1;
    for (int64_t v : ComplexDims()) c *= v;
    return c;
  }
  int64_t ComponentBytes() const { return double_precision() ? 8 : 4; }
  int64_t InputBytes() const { return batch * (real_input() ? RealCount() : 2 * ComplexCount()) * ComponentBytes(); }
  int64_t OutputBytes() const {
    return batch * (real_output() ? RealCount() : 2 * ComplexCount()) * ComponentBytes();
  }
};

// The plan table; cufftHandle values are keys, starting at 1.
struct PlanTable {
  std::mutex mu;
  std::map<cufftHandle, Plan> plans;
  cufftHandle next = 1;
};
PlanTable& Plans() {
  static PlanTable* table = new PlanTable();  // outlives exit-time destroys
  return *table;
}

bool FindPlan(cufftHandle handle, Plan* out) {
  std::lock_guard<std::mutex> lock(Plans().mu);
  auto it = Plans().plans.find(handle);
  if (it == Plans().plans.end()) return false;
  *out = it->second;
  return true;
}

const char* TypeName(cufftType t) {
  switch (t) {
    case CUFFT_C2C: return "C2C";
    case CUFFT_Z2Z: return "Z2Z";
    case CUFFT_R2C: return "R2C";
    case CUFFT_D2Z: return "D2Z";
    case CUFFT_C2R: return "C2R";
    case CUFFT_Z2D: return "Z2D";
  }
  return "?";
}

// ---- the arithmetic -----------------------------------------------------------

template <typename T>
std::vector<ComplexD> LoadComplex(const void* p, int64_t count) {
  const T* v = static_cast<const T*>(p);
  std::vector<ComplexD> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = {double(v[2 * i]), double(v[2 * i + 1])};
  return out;
}
template <typename T>
std::vector<ComplexD> LoadReal(const void* p, int64_t count) {
  const T* v = static_cast<const T*>(p);
  std::vector<ComplexD> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = {double(v[i]), 0.0};
  return out;
}
template <typename T>
void StoreComplex(const std::vector<ComplexD>& data, void* p) {
  T* v = static_cast<T*>(p);
  for (size_t i = 0; i < data.size(); ++i) {
    v[2 * i] = static_cast<T>(data[i].real());
    v[2 * i + 1] = static_cast<T>(data[i].imag());
  }
}
template <typename T>
void StoreReal(const std::vector<ComplexD>& data, void* p) {
  T* v = static_cast<T*>(p);
  for (size_t i = 0; i < data.size(); ++i) v[i] = static_cast<T>(data[i].real());
}

// [batch, dims...] with the transform axes 1..rank.
std::vector<int64_t> Batched(int64_t batch, const std::vector<int64_t>& dims) {
  std::vector<int64_t> d{batch};
  d.insert(d.end(), dims.begin(), dims.end());
  return d;
}

// Changes the last dimension of a row-major array from dims.back() to
// `last`, taking element j of each line from fill(line, j).
template <typename Fill>
std::vector<ComplexD> ResizeLast(const std::vector<ComplexD>& data, std::vector<int64_t>& dims, int64_t last,
                                 Fill fill) {
  const int64_t old = dims.back();
  const int64_t lines = static_cast<int64_t>(data.size()) / old;
  std::vector<ComplexD> out(static_cast<size_t>(lines * last));
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t j = 0; j < last; ++j) out[l * last + j] = fill(data.data() + l * old, j);
  }
  dims.back() = last;
  return out;
}

// The transform of `plan` from `in` to `out` (host addresses of device
// memory); `sign` is the exec call's direction for complex transforms.
template <typename T>
void Transform(const Plan& plan, const void* in, void* out, int sign) {
  const size_t rank = plan.n.size();
  std::vector<int64_t> dims = Batched(plan.batch, plan.n);
  const int64_t n_last = plan.n.back();
  if (plan.real_input()) {
    // Last dimension first (real in, n/2+1 kept), then the outer ones.
    std::vector<ComplexD> data = LoadReal<T>(in, plan.batch * plan.RealCount());
    kiln::emu::TransformAxis(data, dims, rank, -1);
    data = ResizeLast(data, dims, n_last / 2 + 1, [](const ComplexD* line, int64_t j) { return line[j]; });
    for (size_t a = 1; a < rank; ++a) kiln::emu::TransformAxis(data, dims, a, -1);
    StoreComplex<T>(data, out);
    return;
  }
  std::vector<ComplexD> data = LoadComplex<T>(in, plan.batch * plan.ComplexCount());
  if (plan.real_output()) {
    // Outer dimensions first, then the Hermitian extension of the last one
    // (X[n-k] = conj(X[k])); the real part of its inverse is the result.
    dims = Batched(plan.batch, plan.ComplexDims());
    for (size_t a = 1; a < rank; ++a) kiln::emu::TransformAxis(data, dims, a, +1);
    const int64_t half = n_last / 2 + 1;
    data = ResizeLast(data, dims, n_last, [&](const ComplexD* line, int64_t j) {
      return j < half ? line[j] : std::conj(line[n_last - j]);
    });
    kiln::emu::TransformAxis(data, dims, rank, +1);
    StoreReal<T>(data, out);
    return;
  }
  for (size_t a = 1; a <= rank; ++a) kiln::emu::TransformAxis(data, dims, a, sign);
  StoreComplex<T>(data, out);
}

// ---- exec ---------------------------------------------------------------------

// Checks that [address, address + bytes) lies in a live allocation and, for
// a read under initcheck, was written; marks a write initialized. Returns
// the fault, or "". Under a ReadLock.
std::string CheckRange(const char* call, const char* what, uint64_t address, uint64_t bytes, bool written) {
  kiln::emu::DeviceMemory& memory = Device().memory();
  Allocation* a = memory.Find(address, bytes);
  std::string where = std::string(" ") + what + " by " + call;
  if (!a) {
    return std::string("invalid ") + (written ? "write of" : "read of") + where + ": " +
           memory.Describe(address, bytes);
  }
  if (written) {
    a->MarkInitialized(address, bytes);
    return "";
  }
  if (!Device().checks().uninitialized) return "";
  int64_t first = a->FirstUninitialized(address, bytes);
  if (first < 0) return "";
  return "uninitialized read of" + where + ": byte " + memory.Describe(static_cast<uint64_t>(first), 1) +
         " was never written";
}

cufftResult Exec(const char* call, cufftHandle handle, cufftType expected, const void* in, void* out, int sign) {
  kiln::emu::driver::ClearErrorDetail();
  Plan plan;
  if (!FindPlan(handle, &plan)) return Reject(CUFFT_INVALID_PLAN, std::string(call) + ": not a live plan");
  if (plan.type != expected) {
    return Reject(CUFFT_INVALID_PLAN,
                  std::string(call) + ": the plan is " + TypeName(plan.type) + ", not " + TypeName(expected));
  }
  if (sign != CUFFT_FORWARD && sign != CUFFT_INVERSE) {
    return Reject(CUFFT_INVALID_VALUE, std::string(call) + ": direction must be CUFFT_FORWARD or CUFFT_INVERSE");
  }
  if (!in || !out) return Reject(CUFFT_INVALID_VALUE, std::string(call) + ": null data pointer");
  const uint64_t in_address = reinterpret_cast<uint64_t>(in), out_address = reinterpret_cast<uint64_t>(out);
  const uint64_t in_bytes = static_cast<uint64_t>(plan.InputBytes());
  const uint64_t out_bytes = static_cast<uint64_t>(plan.OutputBytes());
  bool in_place = in_address == out_address && in_bytes == out_bytes;
  bool overlap = in_address < out_address + out_bytes && out_address < in_address + in_bytes;
  if (overlap && !(in_place && !plan.real_input() && !plan.real_output())) {
    return Reject(CUFFT_NOT_SUPPORTED, std::string(call) +
                                           ": overlapping input and output (other than an in-place complex "
                                           "transform) are not supported by the emulator");
  }
  if (Device().EnterContext() != CUDA_SUCCESS) return CUFFT_EXEC_FAILED;  // detail set
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(plan.stream);
  if (!timeline) return Reject(CUFFT_EXEC_FAILED, std::string(call) + ": the plan's stream was destroyed");
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while it runs
      std::string fault = CheckRange(call, "input", in_address, in_bytes, false);
      if (fault.empty()) fault = CheckRange(call, "output", out_address, out_bytes, true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      if (plan.double_precision()) {
        Transform<double>(plan, in, out, sign);
      } else {
        Transform<float>(plan, in, out, sign);
      }
      if (plan.real_output()) std::memset(const_cast<void*>(in), 0xff, in_bytes);  // see the file comment
    }
    kiln::emu::model::FftShape shape;
    shape.rank = static_cast<int>(plan.n.size());
    for (int i = 0; i < shape.rank; ++i) shape.lengths[i] = plan.n[static_cast<size_t>(i)];
    shape.batch = plan.batch;
    shape.real = plan.real_input() || plan.real_output();
    shape.double_precision = plan.double_precision();
    shape.input_bytes = double(in_bytes);
    shape.output_bytes = double(out_bytes);
    kiln::emu::model::GemmTime time = kiln::emu::model::ModelFft(shape);
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, plan.stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUFFT_EXEC_FAILED;
  return CUFFT_SUCCESS;
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT cufftResult cufftPlanMany(cufftHandle* plan, int rank, int* n, int* inembed, int istride, int idist,
                                          int* onembed, int ostride, int odist, cufftType type, int batch) {
  (void)istride, (void)idist, (void)ostride, (void)odist;  // ignored with null embeds, as by cuFFT
  kiln::emu::driver::ClearErrorDetail();
  if (!plan || !n) return Reject(CUFFT_INVALID_VALUE, "cufftPlanMany: null plan or size pointer");
  if (rank < 1 || rank > 3) return Reject(CUFFT_INVALID_SIZE, "cufftPlanMany: rank must be 1, 2 or 3");
  if (batch < 1) return Reject(CUFFT_INVALID_SIZE, "cufftPlanMany: batch must be positive");
  Plan p;
  for (int i = 0; i < rank; ++i) {
    if (n[i] < 1) return Reject(CUFFT_INVALID_SIZE, "cufftPlanMany: sizes must be positive");
    p.n.push_back(n[i]);
  }
  switch (type) {
    case CUFFT_C2C: case CUFFT_Z2Z: case CUFFT_R2C: case CUFFT_D2Z: case CUFFT_C2R: case CUFFT_Z2D: break;
    default: return Reject(CUFFT_INVALID_TYPE, "cufftPlanMany: unknown cufftType " + std::to_string(int(type)));
  }
  if (inembed || onembed) {
    return Reject(CUFFT_NOT_SUPPORTED,
                  "cufftPlanMany: the emulator implements the basic data layout only (null embeds)");
  }
  p.type = type;
  p.batch = batch;
  if (Device().EnterContext() != CUDA_SUCCESS) return CUFFT_SETUP_FAILED;  // detail set
  std::lock_guard<std::mutex> lock(Plans().mu);
  cufftHandle h = Plans().next++;
  Plans().plans[h] = p;
  Device().CountLibraryHandles(1);
  *plan = h;
  return CUFFT_SUCCESS;
}

KILN_EMU_EXPORT cufftResult cufftDestroy(cufftHandle plan) {
  kiln::emu::driver::ClearErrorDetail();
  std::lock_guard<std::mutex> lock(Plans().mu);
  if (Plans().plans.erase(plan) == 0) return Reject(CUFFT_INVALID_PLAN, "cufftDestroy: not a live plan");
  Device().CountLibraryHandles(-1);
  return CUFFT_SUCCESS;
}

KILN_EMU_EXPORT cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream) {
  kiln::emu::driver::ClearErrorDetail();
  if (!Device().timeline().Find(stream)) return Reject(CUFFT_INVALID_VALUE, "cufftSetStream: not a live stream");
  std::lock_guard<std::mutex> lock(Plans().mu);
  auto it = Plans().plans.find(plan);
  if (it == Plans().plans.end()) return Reject(CUFFT_INVALID_PLAN, "cufftSetStream: not a live plan");
  it->second.stream = stream;
  return CUFFT_SUCCESS;
}

KILN_EMU_EXPORT cufftResult cufftGetVersion(int* version) {
  kiln::emu::driver::ClearErrorDetail();
  if (!version) return Reject(CUFFT_INVALID_VALUE, "cufftGetVersion: null pointer");
  *version = CUFFT_VERSION;
  return CUFFT_SUCCESS;
}

KILN_EMU_EXPORT cufftResult cufftExecC2C(cufftHandle plan, cufftComplex* idata, cufftComplex* odata, int direction) {
  return Exec("cufftExecC2C", plan, CUFFT_C2C, idata, odata, direction);
}

KILN_EMU_EXPORT cufftResult cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex* idata, cufftDoubleComplex* odata,
                                         int direction) {
  return Exec("cufftExecZ2Z", plan, CUFFT_Z2Z, idata, odata, direction);
}

KILN_EMU_EXPORT cufftResult cufftExecR2C(cufftHandle plan, cufftReal* idata, cufftComplex* odata) {
  return Exec("cufftExecR2C", plan, CUFFT_R2C, idata, odata, CUFFT_FORWARD);
}

KILN_EMU_EXPORT cufftResult cufftExecD2Z(cufftHandle plan, cufftDoubleReal* idata, cufftDoubleComplex* odata) {
  return Exec("cufftExecD2Z", plan, CUFFT_D2Z, idata, odata, CUFFT_FORWARD);
}

KILN_EMU_EXPORT cufftResult cufftExecC2R(cufftHandle plan, cufftComplex* idata, cufftReal* odata) {
  return Exec("cufftExecC2R", plan, CUFFT_C2R, idata, odata, CUFFT_INVERSE);
}

KILN_EMU_EXPORT cufftResult cufftExecZ2D(cufftHandle plan, cufftDoubleComplex* idata, cufftDoubleReal* odata) {
  return Exec("cufftExecZ2D", plan, CUFFT_Z2D, idata, odata, CUFFT_INVERSE);
}

}  // extern "C"
