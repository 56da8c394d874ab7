// The cuDNN double: the legacy convolution entry points kiln calls
// (kernels_lib/cudnn_library.h), computed on the host over the emulated
// device's memory.
//
// Device pointers are host addresses (DeviceMemory), so each call is a
// direct loop over the descriptors' sizes and element strides: every
// output element sums its products in f64 and is rounded once to the
// compute type (f32, or f64) and then to the data type. It does not share
// the host runtime's convolution code (kernels_lib): the emulator links
// nothing of the runtime, and an independent direct sum is what the
// runtime's lowering onto cuDNN is checked against.
//
// As the cuBLAS double, what makes it a faithful double is everything
// around the arithmetic: descriptors are validated by cuDNN's documented
// rules (CUDNN_STATUS_BAD_PARAM: output dims that are not the ones cuDNN
// derives, channels not divisible by the group count, mismatched types),
// every tensor's range must lie in a live allocation (else
// CUDNN_STATUS_EXECUTION_FAILED, reported and sticky like a kernel's
// illegal address), beta == 0 means the output is never read, and each call
// counts as one launch on the handle's stream. Its duration is modeled as
// the implicit GEMM cuDNN runs (model::ModelConvolution) on the datapath
// its types and math type select. The heuristics rank one algorithm per
// direction, which needs no workspace. What it does not implement (filter
// formats other than NCHW/NHWC, more than 3 spatial dimensions, the other
// entry points) is CUDNN_STATUS_NOT_SUPPORTED or absent, never ignored.
#include <cudnn.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/float_formats.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/model/call_models.h"

struct cudnnContext {
  CUstream stream = nullptr;  // the legacy default stream until set
};
struct cudnnTensorStruct {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int64_t> dims, strides;  // empty until set
};
struct cudnnFilterStruct {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  std::vector<int64_t> dims;  // [K, C, spatial...]
};
struct cudnnConvolutionStruct {
  std::vector<int64_t> pad, stride, dilation;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  int groups = 1;
};

namespace {

using kiln::emu::Allocation;
using kiln::emu::driver::EmulatedDevice;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

cudnnStatus_t Reject(cudnnStatus_t status, std::string detail) {
  kiln::emu::driver::SetErrorDetail(std::move(detail));
  return status;
}

// ---- elements -----------------------------------------------------------------

int ElementBytes(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_FLOAT: return 4;
    case CUDNN_DATA_DOUBLE: return 8;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return 2;
    default: return 0;  // not supported by the double
  }
}

double Load(cudnnDataType_t t, const uint8_t* p) {
  switch (t) {
    case CUDNN_DATA_FLOAT: { float v; std::memcpy(&v, p, 4); return v; }
    case CUDNN_DATA_DOUBLE: { double v; std::memcpy(&v, p, 8); return v; }
    default: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      return kiln::DecodeNarrowFloat(t == CUDNN_DATA_HALF ? kiln::ElementType::kF16 : kiln::ElementType::kBF16, bits);
    }
  }
}

// Rounds `v` to the compute type, then stores it as the data type.
void Store(cudnnDataType_t t, bool f64_compute, uint8_t* p, double v) {
  if (!f64_compute) v = static_cast<float>(v);
  switch (t) {
    case CUDNN_DATA_FLOAT: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
    case CUDNN_DATA_DOUBLE: std::memcpy(p, &v, 8); return;
    default: {
      uint16_t bits = static_cast<uint16_t>(kiln::EncodeNarrowFloat(
          t == CUDNN_DATA_HALF ? kiln::ElementType::kF16 : kiln::ElementType::kBF16, v));
      std::memcpy(p, &bits, 2);
      return;
    }
  }
}

// ---- tensors in memory ----------------------------------------------------------

struct View {
  const char* name;
  cudnnDataType_t type;
  uint8_t* base;
  std::vector<int64_t> dims, strides;  // elements
};

int64_t Count(const View& v) {
  int64_t n = 1;
  for (int64_t d : v.dims) n *= d;
  return n;
}

// [first byte, last byte + 1) that `v` spans; false when it has no element.
bool Extent(const View& v, uint64_t* address, uint64_t* bytes) {
  if (Count(v) == 0) return false;
  int64_t last = 0;
  for (size_t i = 0; i < v.dims.size(); ++i) last += (v.dims[i] - 1) * v.strides[i];
  *address = reinterpret_cast<uint64_t>(v.base);
  *bytes = static_cast<uint64_t>((last + 1) * ElementBytes(v.type));
  return true;
}

// Calls fn(element offset) for every element of `v`.
template <typename Fn>
void ForEachElement(const View& v, Fn fn) {
  std::vector<int64_t> index(v.dims.size(), 0);
  int64_t n = Count(v);
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i) offset += index[i] * v.strides[i];
    fn(offset);
    for (size_t i = index.size(); i-- > 0;) {
      if (++index[i] < v.dims[i]) break;
      index[i] = 0;
    }
  }
}

// Checks `v` against the ledger (and, with initcheck, that what is read
// was written); marks a written tensor initialized. Returns the fault, or
// "". Under a ReadLock.
std::string CheckView(const char* call, const View& v, bool written) {
  uint64_t address = 0, bytes = 0;
  if (!Extent(v, &address, &bytes)) return "";
  kiln::emu::DeviceMemory& memory = Device().memory();
  Allocation* a = memory.Find(address, bytes);
  std::string where = std::string(" tensor ") + v.name + " by " + call;
  if (!a) return std::string("invalid ") + (written ? "write of" : "read of") + where + ": " + memory.Describe(address, bytes);
  const uint64_t element = static_cast<uint64_t>(ElementBytes(v.type));
  const bool dense = bytes == static_cast<uint64_t>(Count(v)) * element;
  if (written) {
    if (dense) {
      a->MarkInitialized(address, bytes);
    } else {
      ForEachElement(v, [&](int64_t o) { a->MarkInitialized(address + static_cast<uint64_t>(o) * element, element); });
    }
    return "";
  }
  if (!Device().checks().uninitialized) return "";
  int64_t first = -1;
  if (dense) {
    first = a->FirstUninitialized(address, bytes);
  } else {
    ForEachElement(v, [&](int64_t o) {
      if (first < 0) first = a->FirstUninitialized(address + static_cast<uint64_t>(o) * element, element);
    });
  }
  if (first < 0) return "";
  return "uninitialized read of" + where + ": byte " + memory.Describe(static_cast<uint64_t>(first), 1) +
         " was never written";
}

// ---- the convolution ------------------------------------------------------------

// One convolution in 3 spatial dimensions (unused ones have size 1).
struct Conv {
  int64_t n = 0, c = 0, k = 0, groups = 1, cg = 0, kg = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, r[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
  bool flip = false;
  View x, w, y;
  int64_t xs[5] = {}, ws[5] = {}, ys[5] = {};  // n, c, spatial (w: k, c, spatial)
  bool f64 = false;
};

// Validates the descriptors by cuDNN's rules and fills `c`; "" when valid.
std::string Describe(const cudnnTensorStruct* x, const cudnnFilterStruct* w, const cudnnConvolutionStruct* conv,
                     const cudnnTensorStruct* y, Conv* c) {
  if (!x || !w || !conv || !y) return "a descriptor is null";
  if (x->dims.empty() || y->dims.empty() || w->dims.empty() || conv->pad.empty()) return "a descriptor was never set";
  size_t rank = x->dims.size();
  if (rank < 4 || rank > 5) return "only 4- and 5-dimensional tensors (2 or 3 spatial dimensions)";
  if (y->dims.size() != rank || w->dims.size() != rank || conv->pad.size() != rank - 2)
    return "the tensors, the filter and the convolution differ in rank";
  if (x->type != y->type || x->type != w->type) return "x, w and y differ in data type";
  if (!ElementBytes(x->type)) return "data type " + std::to_string(static_cast<int>(x->type)) + " is not supported";
  bool f64 = x->type == CUDNN_DATA_DOUBLE;
  if ((conv->compute == CUDNN_DATA_DOUBLE) != f64 || (conv->compute != CUDNN_DATA_DOUBLE && conv->compute != CUDNN_DATA_FLOAT))
    return "compute type does not match the data type";
  c->f64 = f64;
  c->n = x->dims[0];
  c->c = x->dims[1];
  c->k = w->dims[0];
  c->groups = conv->groups;
  // Filter dims are [K, C/G, spatial...] in either format (as in
  // cudnnSetFilter4dDescriptor's k, c, h, w); the format is the memory order.
  c->cg = w->dims[1];
  if (c->groups < 1 || c->c != c->cg * c->groups || c->k % c->groups != 0)
    return "channels " + std::to_string(c->c) + " / filter " + std::to_string(c->k) + "x" + std::to_string(c->cg) +
           " do not match group count " + std::to_string(c->groups);
  c->kg = c->k / c->groups;
  c->flip = conv->mode == CUDNN_CONVOLUTION;
  std::vector<int64_t> expected{c->n, c->k};
  for (size_t i = 0; i + 2 < rank; ++i) {
    c->in[i] = x->dims[i + 2];
    c->r[i] = w->dims[i + 2];
    c->pad[i] = conv->pad[i];
    c->stride[i] = conv->stride[i];
    c->dil[i] = conv->dilation[i];
    int64_t window = (c->r[i] - 1) * c->dil[i] + 1;
    int64_t padded = c->in[i] + 2 * c->pad[i];
    c->out[i] = padded < window ? 0 : (padded - window) / c->stride[i] + 1;
    expected.push_back(c->out[i]);
  }
  if (y->dims != expected) return "output dims are not the ones cudnnGetConvolutionNdForwardOutputDim gives";
  // The filter is packed in its format.
  std::vector<int64_t> wdims = w->dims, order(rank);  // order: memory order, outermost first
  if (w->format == CUDNN_TENSOR_NHWC) {
    order[0] = 0;
    for (size_t i = 0; i + 2 < rank; ++i) order[i + 1] = static_cast<int64_t>(i) + 2;
    order[rank - 1] = 1;
    wdims = {c->k, c->cg};
    for (size_t i = 0; i + 2 < rank; ++i) wdims.push_back(c->r[i]);
  } else {
    for (size_t i = 0; i < rank; ++i) order[i] = static_cast<int64_t>(i);
  }
  std::vector<int64_t> wstrides(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    wstrides[order[i]] = s;
    s *= wdims[order[i]];
  }
  c->x = {"x", x->type, nullptr, x->dims, x->strides};
  c->y = {"y", y->type, nullptr, y->dims, y->strides};
  c->w = {"w", w->type, nullptr, wdims, wstrides};
  for (size_t i = 0; i < rank; ++i) {
    c->xs[i] = x->strides[i];
    c->ys[i] = y->strides[i];
    c->ws[i] = wstrides[i];
  }
  return "";
}

int64_t Tap(const Conv& c, int d, int64_t r) { return c.flip ? c.r[d] - 1 - r : r; }

// y[n, k, o] = alpha * sum x[n, g*cg + ci, o*s - p + r*d] * w[k, ci, r] + beta * y.
void Forward(const Conv& c, double alpha, double beta) {
  const int eb = ElementBytes(c.x.type);
  Device().pool().ParallelFor(c.n * c.k, [&](int64_t nk, int) {
    int64_t n = nk / c.k, k = nk % c.k, g = k / c.kg;
    for (int64_t o0 = 0; o0 < c.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < c.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < c.out[2]; ++o2) {
          double acc = 0;
          for (int64_t ci = 0; ci < c.cg; ++ci) {
            int64_t xc = n * c.xs[0] + (g * c.cg + ci) * c.xs[1], wc = k * c.ws[0] + ci * c.ws[1];
            for (int64_t r0 = 0; r0 < c.r[0]; ++r0) {
              int64_t i0 = o0 * c.stride[0] - c.pad[0] + r0 * c.dil[0];
              if (i0 < 0 || i0 >= c.in[0]) continue;
              for (int64_t r1 = 0; r1 < c.r[1]; ++r1) {
                int64_t i1 = o1 * c.stride[1] - c.pad[1] + r1 * c.dil[1];
                if (i1 < 0 || i1 >= c.in[1]) continue;
                for (int64_t r2 = 0; r2 < c.r[2]; ++r2) {
                  int64_t i2 = o2 * c.stride[2] - c.pad[2] + r2 * c.dil[2];
                  if (i2 < 0 || i2 >= c.in[2]) continue;
                  int64_t xo = xc + i0 * c.xs[2] + i1 * c.xs[3] + i2 * c.xs[4];
                  int64_t wo = wc + Tap(c, 0, r0) * c.ws[2] + Tap(c, 1, r1) * c.ws[3] + Tap(c, 2, r2) * c.ws[4];
                  acc += Load(c.x.type, c.x.base + xo * eb) * Load(c.w.type, c.w.base + wo * eb);
                }
              }
            }
          }
          uint8_t* yp = c.y.base + (n * c.ys[0] + k * c.ys[1] + o0 * c.ys[2] + o1 * c.ys[3] + o2 * c.ys[4]) * eb;
          Store(c.y.type, c.f64, yp, alpha * acc + (beta != 0 ? beta * Load(c.y.type, yp) : 0.0));
        }
  });
}

// dx[n, c, i] = alpha * sum over (k in c's group, r, o with o*s - p + r*d == i) of
// dy[n, k, o] * w[k, ci, r] + beta * dx.
void BackwardData(const Conv& c, double alpha, double beta) {
  const int eb = ElementBytes(c.x.type);
  Device().pool().ParallelFor(c.n * c.c, [&](int64_t nc, int) {
    int64_t n = nc / c.c, ch = nc % c.c, g = ch / c.cg, ci = ch % c.cg;
    for (int64_t i0 = 0; i0 < c.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < c.in[1]; ++i1)
        for (int64_t i2 = 0; i2 < c.in[2]; ++i2) {
          double acc = 0;
          for (int64_t kk = 0; kk < c.kg; ++kk) {
            int64_t k = g * c.kg + kk;
            for (int64_t r0 = 0; r0 < c.r[0]; ++r0) {
              int64_t t0 = i0 + c.pad[0] - r0 * c.dil[0];
              if (t0 < 0 || t0 % c.stride[0] || t0 / c.stride[0] >= c.out[0]) continue;
              for (int64_t r1 = 0; r1 < c.r[1]; ++r1) {
                int64_t t1 = i1 + c.pad[1] - r1 * c.dil[1];
                if (t1 < 0 || t1 % c.stride[1] || t1 / c.stride[1] >= c.out[1]) continue;
                for (int64_t r2 = 0; r2 < c.r[2]; ++r2) {
                  int64_t t2 = i2 + c.pad[2] - r2 * c.dil[2];
                  if (t2 < 0 || t2 % c.stride[2] || t2 / c.stride[2] >= c.out[2]) continue;
                  int64_t yo = n * c.ys[0] + k * c.ys[1] + t0 / c.stride[0] * c.ys[2] + t1 / c.stride[1] * c.ys[3] +
                               t2 / c.stride[2] * c.ys[4];
                  int64_t wo = k * c.ws[0] + ci * c.ws[1] + Tap(c, 0, r0) * c.ws[2] + Tap(c, 1, r1) * c.ws[3] +
                               Tap(c, 2, r2) * c.ws[4];
                  acc += Load(c.y.type, c.y.base + yo * eb) * Load(c.w.type, c.w.base + wo * eb);
                }
              }
            }
          }
          uint8_t* xp = c.x.base + (n * c.xs[0] + ch * c.xs[1] + i0 * c.xs[2] + i1 * c.xs[3] + i2 * c.xs[4]) * eb;
          Store(c.x.type, c.f64, xp, alpha * acc + (beta != 0 ? beta * Load(c.x.type, xp) : 0.0));
        }
  });
}

// dw[k, ci, r] = alpha * sum over (n, o) of x[n, g*cg + ci, o*s - p + r*d] * dy[n, k, o] + beta * dw.
void BackwardFilter(const Conv& c, double alpha, double beta) {
  const int eb = ElementBytes(c.x.type);
  Device().pool().ParallelFor(c.k * c.cg, [&](int64_t kc, int) {
    int64_t k = kc / c.cg, ci = kc % c.cg, g = k / c.kg;
    for (int64_t r0 = 0; r0 < c.r[0]; ++r0)
      for (int64_t r1 = 0; r1 < c.r[1]; ++r1)
        for (int64_t r2 = 0; r2 < c.r[2]; ++r2) {
          double acc = 0;
          for (int64_t n = 0; n < c.n; ++n) {
            int64_t xc = n * c.xs[0] + (g * c.cg + ci) * c.xs[1], yc = n * c.ys[0] + k * c.ys[1];
            for (int64_t o0 = 0; o0 < c.out[0]; ++o0) {
              int64_t i0 = o0 * c.stride[0] - c.pad[0] + r0 * c.dil[0];
              if (i0 < 0 || i0 >= c.in[0]) continue;
              for (int64_t o1 = 0; o1 < c.out[1]; ++o1) {
                int64_t i1 = o1 * c.stride[1] - c.pad[1] + r1 * c.dil[1];
                if (i1 < 0 || i1 >= c.in[1]) continue;
                for (int64_t o2 = 0; o2 < c.out[2]; ++o2) {
                  int64_t i2 = o2 * c.stride[2] - c.pad[2] + r2 * c.dil[2];
                  if (i2 < 0 || i2 >= c.in[2]) continue;
                  int64_t xo = xc + i0 * c.xs[2] + i1 * c.xs[3] + i2 * c.xs[4];
                  int64_t yo = yc + o0 * c.ys[2] + o1 * c.ys[3] + o2 * c.ys[4];
                  acc += Load(c.x.type, c.x.base + xo * eb) * Load(c.y.type, c.y.base + yo * eb);
                }
              }
            }
          }
          uint8_t* wp = c.w.base + (k * c.ws[0] + ci * c.ws[1] + Tap(c, 0, r0) * c.ws[2] + Tap(c, 1, r1) * c.ws[3] +
                                    Tap(c, 2, r2) * c.ws[4]) * eb;
          Store(c.w.type, c.f64, wp, alpha * acc + (beta != 0 ? beta * Load(c.w.type, wp) : 0.0));
        }
  });
}

enum class Direction { kForward, kBackwardData, kBackwardFilter };

kiln::emu::model::GemmMath MathOf(const Conv& c, const cudnnConvolutionStruct& conv) {
  using kiln::emu::model::GemmMath;
  if (c.f64) return GemmMath::kFp64Tensor;
  if (c.x.type == CUDNN_DATA_HALF || c.x.type == CUDNN_DATA_BFLOAT16) return GemmMath::kFp16Tensor;
  return conv.math == CUDNN_FMA_MATH ? GemmMath::kFp32 : GemmMath::kTf32Tensor;
}

// The implicit GEMM of each direction (docs/gpu_timing_model.md).
kiln::emu::model::GemmShape ImplicitGemm(const Conv& c, Direction d) {
  int64_t out = c.out[0] * c.out[1] * c.out[2], in = c.in[0] * c.in[1] * c.in[2];
  int64_t taps = c.r[0] * c.r[1] * c.r[2], strides = c.stride[0] * c.stride[1] * c.stride[2];
  kiln::emu::model::GemmShape s;
  s.batches = c.groups;
  s.element_bytes = static_cast<uint32_t>(ElementBytes(c.x.type));
  switch (d) {
    case Direction::kForward: s.m = c.n * out, s.n = c.kg, s.k = c.cg * taps; break;
    case Direction::kBackwardData: s.m = c.n * in, s.n = c.cg, s.k = std::max<int64_t>(1, c.kg * taps / strides); break;
    case Direction::kBackwardFilter: s.m = c.kg, s.n = c.cg * taps, s.k = c.n * out; break;
  }
  return s;
}

// The common path of the three directions; `x`, `w`, `y` already placed in
// c.x/c.w/c.y's base, `out` the one written.
cudnnStatus_t Run(const char* call, cudnnHandle_t handle, Conv& c, const cudnnConvolutionStruct& conv, Direction d,
                  const void* alpha, const void* beta, const View& out) {
  if (Device().EnterContext() != CUDA_SUCCESS) return CUDNN_STATUS_EXECUTION_FAILED;  // detail set
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(handle->stream);
  if (!timeline) return Reject(CUDNN_STATUS_EXECUTION_FAILED, std::string(call) + ": the handle's stream was destroyed");
  double a = c.f64 ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  double b = c.f64 ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  // Which of c's views `out` is: the work below has copies of c and out.
  const int out_index = &out == &c.x ? 0 : &out == &c.w ? 1 : 2;
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    const View* written = out_index == 0 ? &c.x : out_index == 1 ? &c.w : &c.y;
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while the convolution runs
      std::string fault;
      for (const View* v : {&c.x, &c.w, &c.y}) {
        if (fault.empty() && (v != written || b != 0)) fault = CheckView(call, *v, false);
      }
      if (fault.empty()) fault = CheckView(call, out, true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      switch (d) {
        case Direction::kForward: Forward(c, a, b); break;
        case Direction::kBackwardData: BackwardData(c, a, b); break;
        case Direction::kBackwardFilter: BackwardFilter(c, a, b); break;
      }
    }
    kiln::emu::model::GemmShape gemm = ImplicitGemm(c, d);
    double bytes = double(ElementBytes(c.x.type)) * double(Count(c.x) + Count(c.w) + Count(c.y) + (b != 0 ? Count(out) : 0));
    kiln::emu::model::GemmTime time = kiln::emu::model::ModelConvolution(gemm, bytes, MathOf(c, conv));
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUDNN_STATUS_EXECUTION_FAILED;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t Prepare(const char* call, cudnnHandle_t handle, const cudnnTensorStruct* x, const cudnnFilterStruct* w,
                      const cudnnConvolutionStruct* conv, const cudnnTensorStruct* y, const void* alpha,
                      const void* beta, Conv* c) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": the handle is null");
  std::string invalid = Describe(x, w, conv, y, c);
  if (!invalid.empty()) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": " + invalid);
  if (!alpha || !beta) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": alpha and beta must not be null");
  return CUDNN_STATUS_SUCCESS;
}

template <typename Perf, typename Algo>
cudnnStatus_t Heuristic(const char* call, cudnnHandle_t handle, const cudnnTensorStruct* x,
                        const cudnnFilterStruct* w, const cudnnConvolutionStruct* conv, const cudnnTensorStruct* y,
                        int requested, int* returned, Perf* perf, Algo algo) {
  Conv c;
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": the handle is null");
  std::string invalid = Describe(x, w, conv, y, &c);
  if (!invalid.empty()) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": " + invalid);
  if (requested < 1 || !returned || !perf) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": no room for results");
  perf[0] = Perf{};
  perf[0].algo = algo;
  perf[0].status = CUDNN_STATUS_SUCCESS;
  perf[0].time = -1;  // heuristics measure nothing
  perf[0].memory = 0;
  perf[0].determinism = CUDNN_DETERMINISTIC;
  perf[0].mathType = conv->math;
  *returned = 1;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t Workspace(const char* call, cudnnHandle_t handle, const cudnnTensorStruct* x, const cudnnFilterStruct* w,
                        const cudnnConvolutionStruct* conv, const cudnnTensorStruct* y, int algo, size_t* size) {
  Conv c;
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": the handle is null");
  std::string invalid = Describe(x, w, conv, y, &c);
  if (!invalid.empty()) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": " + invalid);
  if (!size) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": null size");
  if (algo != 0) return Reject(CUDNN_STATUS_NOT_SUPPORTED, std::string(call) + ": the emulator implements algorithm 0 only");
  *size = 0;
  return CUDNN_STATUS_SUCCESS;
}

std::vector<int64_t> Vector(int n, const int* a) { return std::vector<int64_t>(a, a + n); }

}  // namespace

extern "C" {

KILN_EMU_EXPORT size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

KILN_EMU_EXPORT const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN";
  }
}

KILN_EMU_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnCreate: the handle pointer is null");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUDNN_STATUS_NOT_INITIALIZED;  // detail set
  *handle = new cudnnContext();
  Device().CountLibraryHandles(1);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnDestroy: the handle is null");
  delete handle;
  Device().CountLibraryHandles(-1);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: the handle is null");
  if (!Device().timeline().Find(stream)) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a live stream");
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  if (!d) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnCreateTensorDescriptor: null pointer");
  *d = new cudnnTensorStruct();
  Device().CountLibraryDescriptors(1);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  if (d) Device().CountLibraryDescriptors(-1);
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t type, int rank,
                                                        const int dims[], const int strides[]) {
  kiln::emu::driver::ClearErrorDetail();
  if (!d || !dims || !strides) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: null pointer");
  if (rank < 3 || rank > CUDNN_DIM_MAX) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: bad rank");
  if (!ElementBytes(type)) return Reject(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetTensorNdDescriptor: data type not supported by the emulator");
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 1 || strides[i] < 1)
      return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: dims and strides must be positive");
  }
  d->type = type;
  d->dims = Vector(rank, dims);
  d->strides = Vector(rank, strides);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  if (!d) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnCreateFilterDescriptor: null pointer");
  *d = new cudnnFilterStruct();
  Device().CountLibraryDescriptors(1);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  if (d) Device().CountLibraryDescriptors(-1);
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                                        cudnnTensorFormat_t format, int rank, const int dims[]) {
  kiln::emu::driver::ClearErrorDetail();
  if (!d || !dims) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: null pointer");
  if (rank < 3 || rank > CUDNN_DIM_MAX) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: bad rank");
  if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)
    return Reject(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetFilterNdDescriptor: only NCHW and NHWC filters");
  if (!ElementBytes(type)) return Reject(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetFilterNdDescriptor: data type not supported by the emulator");
  for (int i = 0; i < rank; ++i)
    if (dims[i] < 1) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: dims must be positive");
  d->type = type;
  d->format = format;
  d->dims = Vector(rank, dims);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
  if (!d) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnCreateConvolutionDescriptor: null pointer");
  *d = new cudnnConvolutionStruct();
  Device().CountLibraryDescriptors(1);
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  if (d) Device().CountLibraryDescriptors(-1);
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int length,
                                                             const int pad[], const int stride[], const int dilation[],
                                                             cudnnConvolutionMode_t mode, cudnnDataType_t compute) {
  kiln::emu::driver::ClearErrorDetail();
  if (!d || !pad || !stride || !dilation) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionNdDescriptor: null pointer");
  if (length < 1 || length > 3)
    return Reject(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetConvolutionNdDescriptor: 1 to 3 spatial dimensions");
  for (int i = 0; i < length; ++i) {
    if (pad[i] < 0 || stride[i] < 1 || dilation[i] < 1)
      return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionNdDescriptor: negative padding or non-positive stride/dilation");
  }
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION)
    return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionNdDescriptor: bad mode");
  d->pad = Vector(length, pad);
  d->stride = Vector(length, stride);
  d->dilation = Vector(length, dilation);
  d->mode = mode;
  d->compute = compute;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  if (!d || groups < 1) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionGroupCount: bad descriptor or count");
  d->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
  if (!d) return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionMathType: null descriptor");
  // Every mode permits the full-precision arithmetic the double does; the
  // mode only selects the modeled datapath.
  if (math != CUDNN_DEFAULT_MATH && math != CUDNN_TENSOR_OP_MATH && math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
      math != CUDNN_FMA_MATH)
    return Reject(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionMathType: bad math type");
  d->math = math;
  return CUDNN_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* perf) {
  return Heuristic("cudnnGetConvolutionForwardAlgorithm_v7", handle, x, w, conv, y, requested, returned, perf,
                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  return Heuristic("cudnnGetConvolutionBackwardDataAlgorithm_v7", handle, dx, w, conv, dy, requested, returned, perf,
                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  return Heuristic("cudnnGetConvolutionBackwardFilterAlgorithm_v7", handle, x, dw, conv, dy, requested, returned, perf,
                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle,
                                                                     const cudnnTensorDescriptor_t x,
                                                                     const cudnnFilterDescriptor_t w,
                                                                     const cudnnConvolutionDescriptor_t conv,
                                                                     const cudnnTensorDescriptor_t y,
                                                                     cudnnConvolutionFwdAlgo_t algo, size_t* size) {
  return Workspace("cudnnGetConvolutionForwardWorkspaceSize", handle, x, w, conv, y, algo, size);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx, cudnnConvolutionBwdDataAlgo_t algo,
    size_t* size) {
  return Workspace("cudnnGetConvolutionBackwardDataWorkspaceSize", handle, dx, w, conv, dy, algo, size);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw, cudnnConvolutionBwdFilterAlgo_t algo,
    size_t* size) {
  return Workspace("cudnnGetConvolutionBackwardFilterWorkspaceSize", handle, x, dw, conv, dy, algo, size);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                                     const cudnnTensorDescriptor_t xd, const void* x,
                                                     const cudnnFilterDescriptor_t wd, const void* w,
                                                     const cudnnConvolutionDescriptor_t conv,
                                                     cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                                     size_t workspace_bytes, const void* beta,
                                                     const cudnnTensorDescriptor_t yd, void* y) {
  const char* call = "cudnnConvolutionForward";
  Conv c;
  cudnnStatus_t s = Prepare(call, handle, xd, wd, conv, yd, alpha, beta, &c);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM)
    return Reject(CUDNN_STATUS_NOT_SUPPORTED, std::string(call) + ": the emulator implements IMPLICIT_GEMM only");
  c.x.base = static_cast<uint8_t*>(const_cast<void*>(x));
  c.w.base = static_cast<uint8_t*>(const_cast<void*>(w));
  c.y.base = static_cast<uint8_t*>(y);
  return Run(call, handle, c, *conv, Direction::kForward, alpha, beta, c.y);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                                          const cudnnFilterDescriptor_t wd, const void* w,
                                                          const cudnnTensorDescriptor_t dyd, const void* dy,
                                                          const cudnnConvolutionDescriptor_t conv,
                                                          cudnnConvolutionBwdDataAlgo_t algo, void* workspace,
                                                          size_t workspace_bytes, const void* beta,
                                                          const cudnnTensorDescriptor_t dxd, void* dx) {
  const char* call = "cudnnConvolutionBackwardData";
  Conv c;
  cudnnStatus_t s = Prepare(call, handle, dxd, wd, conv, dyd, alpha, beta, &c);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_0)
    return Reject(CUDNN_STATUS_NOT_SUPPORTED, std::string(call) + ": the emulator implements ALGO_0 only");
  c.x.base = static_cast<uint8_t*>(dx);
  c.w.base = static_cast<uint8_t*>(const_cast<void*>(w));
  c.y.base = static_cast<uint8_t*>(const_cast<void*>(dy));
  c.x.name = "dx", c.y.name = "dy";
  return Run(call, handle, c, *conv, Direction::kBackwardData, alpha, beta, c.x);
}

KILN_EMU_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                                            const cudnnTensorDescriptor_t xd, const void* x,
                                                            const cudnnTensorDescriptor_t dyd, const void* dy,
                                                            const cudnnConvolutionDescriptor_t conv,
                                                            cudnnConvolutionBwdFilterAlgo_t algo, void* workspace,
                                                            size_t workspace_bytes, const void* beta,
                                                            const cudnnFilterDescriptor_t dwd, void* dw) {
  const char* call = "cudnnConvolutionBackwardFilter";
  Conv c;
  cudnnStatus_t s = Prepare(call, handle, xd, dwd, conv, dyd, alpha, beta, &c);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0)
    return Reject(CUDNN_STATUS_NOT_SUPPORTED, std::string(call) + ": the emulator implements ALGO_0 only");
  c.x.base = static_cast<uint8_t*>(const_cast<void*>(x));
  c.w.base = static_cast<uint8_t*>(dw);
  c.y.base = static_cast<uint8_t*>(const_cast<void*>(dy));
  c.w.name = "dw", c.y.name = "dy";
  return Run(call, handle, c, *conv, Direction::kBackwardFilter, alpha, beta, c.w);
}

// y = alpha * x + beta * y over two layouts of one shape and type; one
// launch reading x (and y when beta != 0) and writing y.
KILN_EMU_EXPORT cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void* alpha,
                                                  const cudnnTensorDescriptor_t xd, const void* x, const void* beta,
                                                  const cudnnTensorDescriptor_t yd, void* y) {
  const char* call = "cudnnTransformTensor";
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": the handle is null");
  if (!xd || !yd || xd->dims.empty() || xd->dims != yd->dims || !alpha || !beta)
    return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": x and y must be set with the same dims");
  if (xd->type != yd->type)
    return Reject(CUDNN_STATUS_NOT_SUPPORTED, std::string(call) + ": the emulator converts no data types");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUDNN_STATUS_EXECUTION_FAILED;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(handle->stream);
  if (!timeline) return Reject(CUDNN_STATUS_EXECUTION_FAILED, std::string(call) + ": the handle's stream was destroyed");
  bool f64 = xd->type == CUDNN_DATA_DOUBLE;
  double a = f64 ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  double b = f64 ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  View xv{"x", xd->type, static_cast<uint8_t*>(const_cast<void*>(x)), xd->dims, xd->strides};
  View yv{"y", yd->type, static_cast<uint8_t*>(y), yd->dims, yd->strides};
  const int eb = ElementBytes(xd->type);
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();
      std::string fault = CheckView(call, xv, false);
      if (fault.empty() && b != 0) fault = CheckView(call, yv, false);
      if (fault.empty()) fault = CheckView(call, yv, true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      // Walks x's and y's offsets together, index by index.
      std::vector<int64_t> index(xv.dims.size(), 0);
      for (int64_t e = 0, n = Count(xv); e < n; ++e) {
        int64_t xo = 0, yo = 0;
        for (size_t i = 0; i < index.size(); ++i) xo += index[i] * xv.strides[i], yo += index[i] * yv.strides[i];
        uint8_t* yp = yv.base + yo * eb;
        Store(yv.type, f64, yp, a * Load(xv.type, xv.base + xo * eb) + (b != 0 ? b * Load(yv.type, yp) : 0.0));
        for (size_t i = index.size(); i-- > 0;) {
          if (++index[i] < xv.dims[i]) break;
          index[i] = 0;
        }
      }
    }
    // As a device-to-device copy of x (DRAM read + write).
    uint64_t bytes = static_cast<uint64_t>(Count(xv) * eb);
    KilnEmuCounters counters{};
    counters.launches = 1;
    uint64_t ns = static_cast<uint64_t>(std::llround(
        kiln::emu::model::TransferSeconds(kiln::emu::model::TransferKind::kDeviceToDevice, bytes) * 1e9));
    counters.model_ns = ns;
    counters.optimal_ns = ns;
    timeline.AddLaunch(counters);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUDNN_STATUS_EXECUTION_FAILED;
  return CUDNN_STATUS_SUCCESS;
}

// y = *value everywhere (value of y's data type); one launch writing y.
KILN_EMU_EXPORT cudnnStatus_t cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yd, void* y,
                                            const void* value) {
  const char* call = "cudnnSetTensor";
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": the handle is null");
  if (!yd || yd->dims.empty() || !value) return Reject(CUDNN_STATUS_BAD_PARAM, std::string(call) + ": y must be set");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUDNN_STATUS_EXECUTION_FAILED;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(handle->stream);
  if (!timeline) return Reject(CUDNN_STATUS_EXECUTION_FAILED, std::string(call) + ": the handle's stream was destroyed");
  View yv{"y", yd->type, static_cast<uint8_t*>(y), yd->dims, yd->strides};
  const int eb = ElementBytes(yd->type);
  const double v = Load(yd->type, static_cast<const uint8_t*>(value));
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();
      std::string fault = CheckView(call, yv, true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      ForEachElement(yv, [&](int64_t o) { Store(yv.type, yv.type == CUDNN_DATA_DOUBLE, yv.base + o * eb, v); });
    }
    KilnEmuCounters counters{};
    counters.launches = 1;
    uint64_t ns = static_cast<uint64_t>(std::llround(
        kiln::emu::model::TransferSeconds(kiln::emu::model::TransferKind::kMemset, static_cast<uint64_t>(Count(yv) * eb)) *
        1e9));
    counters.model_ns = ns;
    counters.optimal_ns = ns;
    timeline.AddLaunch(counters);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUDNN_STATUS_EXECUTION_FAILED;
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
