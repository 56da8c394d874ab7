// The CUDA emulator as kiln's runtime sees it: libkiln_cuda_emulator.so
// opened with dlopen and called through the function types of the CUDA 13
// headers, so every check also checks the exported ABI names (cuMemAlloc is
// looked up as cuMemAlloc_v2, as cuda.h says). Covers device attributes,
// memory and its memcheck messages, module loading, events, the cuBLAS
// double and the runtime's CudaDriver/CudaBackend on the emulator, and the
// timing model as events see it: modeled launches, copies and GEMMs, and
// sampling mode (KILN_EMU_SAMPLE). Kernel execution is tested elsewhere;
// the launches here run an empty kernel or a copy.
#include <cublas_api.h>
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"

namespace {

// clang-format off
#define KILN_TEST_FUNCTIONS(X) \
  X(cuGetErrorName) X(cuGetErrorString) X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) \
  X(cuDeviceGet) X(cuDeviceGetAttribute) X(cuDeviceGetName) X(cuDeviceTotalMem) \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxGetCurrent) \
  X(cuCtxSynchronize) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventElapsedTime) X(cuEventQuery) \
  X(cuEventSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemGetInfo) \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuMemsetD32) X(cuMemsetD8Async) X(cuMemsetD32Async) \
  X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction) \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasGetStatusName) \
  X(cublasGetStatusString) X(cublasSgemmStridedBatched) X(cublasDgemmStridedBatched) \
  X(cublasSetMathMode) X(cublasGetMathMode) X(cublasGetVersion_v2) \
  X(kilnEmuDescription) X(kilnEmuLastErrorDetail) X(kilnEmuEventCounters) X(kilnEmuResultsComputed)
// clang-format on

#define KILN_TEST_STRINGIZE_INNER(x) #x
#define KILN_TEST_STRINGIZE(x) KILN_TEST_STRINGIZE_INNER(x)  // after macro expansion

// The library's entry points, resolved by their ABI names.
struct Api {
  void* handle = nullptr;
  std::string missing;  // the first entry point the library lacks
#define KILN_TEST_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_TEST_FUNCTIONS(KILN_TEST_MEMBER)
#undef KILN_TEST_MEMBER
  // Overloaded in C++ by cublas_api.h: the exported form's type.
  cublasStatus_t (*cublasGemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                               int, const void*, const void*, cudaDataType, int, long long,
                                               const void*, cudaDataType, int, long long, const void*, void*,
                                               cudaDataType, int, long long, int, cublasComputeType_t,
                                               cublasGemmAlgo_t) = nullptr;
};

// Opened on first use, so that a fresh process (a death test's child)
// starts with an uninitialized emulator.
const Api& Emu() {
  static const Api api = [] {
    Api a;
    a.handle = dlopen(KILN_CUDA_EMULATOR_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!a.handle) return a;
#define KILN_TEST_RESOLVE(fn)                                                            \
  a.fn = reinterpret_cast<decltype(a.fn)>(dlsym(a.handle, KILN_TEST_STRINGIZE(fn))); \
  if (!a.fn && a.missing.empty()) a.missing = KILN_TEST_STRINGIZE(fn);
    KILN_TEST_FUNCTIONS(KILN_TEST_RESOLVE)
    KILN_TEST_RESOLVE(cublasGemmStridedBatchedEx)
#undef KILN_TEST_RESOLVE
    return a;
  }();
  return api;
}

std::string Hex(CUdeviceptr p) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", p);
  return buf;
}

std::string Detail() { return Emu().kilnEmuLastErrorDetail(); }

constexpr char kNoopPtx[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry noop()\n"
    "{\n"
    "\tret;\n"
    "}\n"
    "\n"
    ".visible .entry takes_pointer(.param .u64 p)\n"
    "{\n"
    "\tret;\n"
    "}\n";

// out[i] = in[i] for i = ctaid.x * 256 + tid.x (blocks of 256 threads).
constexpr char kCopyPtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry copy(.param .u64 p_in, .param .u64 p_out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  .reg .f32 %f1;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r0, 8;
  add.s32 %r2, %r2, %r1;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd0, %rd2;
  add.s64 %rd4, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  st.global.f32 [%rd4], %f1;
  ret;
}
)";

// Loads kCopyPtx and copies `n` floats (a multiple of 256) between two new
// buffers on `stream`; false on any failure. The input is set on the
// default stream, whose clock is not `stream`'s.
bool LaunchCopy(const Api& e, uint32_t n, CUstream stream) {
  CUmodule m = nullptr;
  CUfunction f = nullptr;
  CUdeviceptr in = 0, out = 0;
  if (e.cuModuleLoadData(&m, kCopyPtx) != CUDA_SUCCESS || e.cuModuleGetFunction(&f, m, "copy") != CUDA_SUCCESS ||
      e.cuMemAlloc(&in, n * 4ull) != CUDA_SUCCESS || e.cuMemAlloc(&out, n * 4ull) != CUDA_SUCCESS ||
      e.cuMemsetD32(in, 0, n) != CUDA_SUCCESS) {
    return false;
  }
  void* params[] = {&in, &out};
  return e.cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, stream, params, nullptr) == CUDA_SUCCESS;
}

// Every test runs in a fresh primary context: TearDown's release is the
// last one, which destroys the context with its memory, streams and events.
class DriverApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Api& e = Emu();
    ASSERT_NE(e.handle, nullptr) << dlerror();
    ASSERT_TRUE(e.missing.empty()) << "the emulator lacks " << e.missing;
    ASSERT_EQ(e.cuInit(0), CUDA_SUCCESS) << Detail();
    ASSERT_EQ(e.cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(e.cuCtxSetCurrent(context_), CUDA_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(Emu().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS); }

  CUdeviceptr Alloc(size_t bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(Emu().cuMemAlloc(&p, bytes), CUDA_SUCCESS) << Detail();
    return p;
  }
  CUfunction LoadNoop() {
    CUmodule m = nullptr;
    EXPECT_EQ(Emu().cuModuleLoadData(&m, kNoopPtx), CUDA_SUCCESS) << Detail();
    CUfunction f = nullptr;
    if (m) {
      EXPECT_EQ(Emu().cuModuleGetFunction(&f, m, "noop"), CUDA_SUCCESS) << Detail();
    }
    return f;
  }

  CUcontext context_ = nullptr;
};

// Runs in a fresh process (threadsafe death test), before any cuInit.
TEST(DriverApiInit, CallsBeforeCuInitFail) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int count = -1;
        bool ok = Emu().handle && Emu().cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED &&
                  Emu().cuInit(0) == CUDA_SUCCESS && Emu().cuDeviceGetCount(&count) == CUDA_SUCCESS &&
                  count == 8;
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(DriverApiInit, MalformedCheckOptionsFailCuInit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("KILN_EMU_CHECK", "memcheck,bogus", 1);
        bool ok = Emu().handle && Emu().cuInit(0) == CUDA_ERROR_INVALID_VALUE &&
                  Detail().find("KILN_EMU_CHECK") != std::string::npos;
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(DriverApiTest, ExportsOnlyTheCApi) {
  EXPECT_EQ(dlsym(Emu().handle, "_ZN4kiln3emu12DeviceMemory8AllocateEmNS0_10MemoryKindE"), nullptr);
  EXPECT_EQ(std::string(Emu().kilnEmuDescription()), "kiln emulator (sm_90, H100-class)");
  EXPECT_EQ(Emu().kilnEmuResultsComputed(), 1);
}

// KILN_EMU_SAMPLE=8: the library says results are not computed, and a
// launch of 4096 blocks runs 8 of them with its counters extrapolated: the
// copy of 1M floats below is counted in full (32768 load requests) and
// modeled as the full copy (4796 ns, see EventsMeasureModeledTime).
// In a fresh process with KILN_EMU_SAMPLE=8.
bool SampledCopyCountsAsTheFullCopy() {
  const Api& e = Emu();
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  CUevent start = nullptr;
  CUevent end = nullptr;
  KilnEmuCounters c{};
  bool ok = e.handle && e.cuInit(0) == CUDA_SUCCESS && e.kilnEmuResultsComputed() == 0 &&
            std::string(e.kilnEmuDescription()) ==
                "kiln emulator (sm_90, H100-class), sampled 8 blocks/launch: results not computed" &&
            e.cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS && e.cuCtxSetCurrent(ctx) == CUDA_SUCCESS &&
            e.cuStreamCreate(&s, 0) == CUDA_SUCCESS && e.cuEventCreate(&start, 0) == CUDA_SUCCESS &&
            e.cuEventCreate(&end, 0) == CUDA_SUCCESS && e.cuEventRecord(start, s) == CUDA_SUCCESS &&
            LaunchCopy(e, 1 << 20, s) && e.cuEventRecord(end, s) == CUDA_SUCCESS &&
            e.kilnEmuEventCounters(start, end, &c) == CUDA_SUCCESS;
  return ok && c.launches == 1 && c.sampled_launches == 1 && c.global_load_requests == 32768 &&
         c.model_ns == 4796;
}

TEST(DriverApiInit, SamplingModeExtrapolatesAndSaysResultsAreNotComputed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("KILN_EMU_SAMPLE", "8", 1);
        _exit(SampledCopyCountsAsTheFullCopy() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(DriverApiInit, MalformedSampleFailsCuInit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("KILN_EMU_SAMPLE", "8 blocks", 1);
        bool ok = Emu().handle && Emu().cuInit(0) == CUDA_ERROR_INVALID_VALUE &&
                  Detail() == "cuInit: KILN_EMU_SAMPLE: expected a positive number of blocks per launch, got '8 blocks'";
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(DriverApiTest, DeviceIsAnH100) {
  const Api& e = Emu();
  auto attribute = [&](CUdevice_attribute a) {
    int v = -1;
    EXPECT_EQ(e.cuDeviceGetAttribute(&v, a, 0), CUDA_SUCCESS) << a;
    return v;
  };
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), 9);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), 0);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 132);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR), 228 * 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), 232448);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK), 49152);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z), 64);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), 2147483647);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), 50 * 1024 * 1024);
  int v = 0;
  EXPECT_EQ(e.cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(100000), 0), CUDA_ERROR_INVALID_VALUE);
  // Eight devices (KILN_EMU_DEVICES' default), ordinals 0..7.
  EXPECT_EQ(e.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7), CUDA_SUCCESS);
  EXPECT_EQ(e.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 8), CUDA_ERROR_INVALID_DEVICE);

  char name[256] = {};
  ASSERT_EQ(e.cuDeviceGetName(name, sizeof(name) - 1, 0), CUDA_SUCCESS);
  EXPECT_STREQ(name, "kiln emulator (sm_90, H100-class)");
  char small[6] = {};
  ASSERT_EQ(e.cuDeviceGetName(small, sizeof(small), 0), CUDA_SUCCESS);
  EXPECT_STREQ(small, "kiln ");
  size_t total = 0;
  ASSERT_EQ(e.cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
  EXPECT_EQ(total, size_t{85899345920});
  int version = 0;
  ASSERT_EQ(e.cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, CUDA_VERSION);
  CUdevice device = -1;
  EXPECT_EQ(e.cuDeviceGet(&device, 0), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(e.cuDeviceGet(&device, 3), CUDA_SUCCESS);
  EXPECT_EQ(device, 3);
  EXPECT_EQ(e.cuDeviceGet(&device, 8), CUDA_ERROR_INVALID_DEVICE);
}

// Every device has its own primary context; allocations, copies and
// launches work with any of them current.
TEST_F(DriverApiTest, EachDeviceHasItsOwnPrimaryContext) {
  const Api& e = Emu();
  CUcontext third = nullptr, current = nullptr;
  ASSERT_EQ(e.cuDevicePrimaryCtxRetain(&third, 3), CUDA_SUCCESS);
  EXPECT_NE(third, context_);
  ASSERT_EQ(e.cuCtxSetCurrent(third), CUDA_SUCCESS);
  ASSERT_EQ(e.cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, third);
  CUdeviceptr p = Alloc(16);
  const uint32_t word = 0x01020304;
  ASSERT_EQ(e.cuMemcpyHtoD(p, &word, sizeof word), CUDA_SUCCESS);
  EXPECT_EQ(e.cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(e.cuCtxSetCurrent(reinterpret_cast<CUcontext>(&current)), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(e.cuCtxSetCurrent(context_), CUDA_SUCCESS);
  EXPECT_EQ(e.cuDevicePrimaryCtxRelease(3), CUDA_SUCCESS);
}

TEST_F(DriverApiTest, ErrorNamesAndStrings) {
  const char* s = nullptr;
  ASSERT_EQ(Emu().cuGetErrorName(CUDA_ERROR_INVALID_PTX, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "CUDA_ERROR_INVALID_PTX");
  ASSERT_EQ(Emu().cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "an illegal memory access was encountered");
  ASSERT_EQ(Emu().cuGetErrorName(CUDA_SUCCESS, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "CUDA_SUCCESS");
  EXPECT_EQ(Emu().cuGetErrorName(static_cast<CUresult>(12345), &s), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(DriverApiTest, CallsNeedACurrentContext) {
  CUresult r = CUDA_SUCCESS;
  std::string detail;
  std::thread t([&] {
    CUdeviceptr p = 0;
    r = Emu().cuMemAlloc(&p, 16);
    detail = Detail();
  });
  t.join();
  EXPECT_EQ(r, CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_NE(detail.find("no CUDA context is current"), std::string::npos) << detail;
  CUcontext current = nullptr;
  ASSERT_EQ(Emu().cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, context_);
}

TEST_F(DriverApiTest, AllocCopyRoundTrip) {
  const Api& e = Emu();
  size_t free_before = 0, total = 0;
  ASSERT_EQ(e.cuMemGetInfo(&free_before, &total), CUDA_SUCCESS);
  std::vector<uint8_t> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 1);
  CUdeviceptr a = Alloc(in.size()), b = Alloc(in.size());
  EXPECT_EQ(a % 256, 0u);
  size_t free_after = 0;
  ASSERT_EQ(e.cuMemGetInfo(&free_after, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_before - free_after, 2000u);
  ASSERT_EQ(e.cuMemcpyHtoD(a, in.data(), in.size()), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemcpyDtoD(b, a, in.size()), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemcpyDtoH(out.data(), b, out.size()), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(in, out);

  CUstream s = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  void* pinned = nullptr;
  ASSERT_EQ(e.cuMemHostAlloc(&pinned, 1000, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyDtoHAsync(pinned, a, 1000, s), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(pinned, in.data(), 1000), 0);
  EXPECT_EQ(e.cuMemFreeHost(pinned), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(e.cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(e.cuMemFree(b), CUDA_SUCCESS);
}

TEST_F(DriverApiTest, AllocationSizes) {
  CUdeviceptr p = 0;
  EXPECT_EQ(Emu().cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(Emu().cuMemAlloc(&p, size_t{100} << 30), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(Detail().find("free"), std::string::npos) << Detail();
}

TEST_F(DriverApiTest, MemsetD8AndD32) {
  const Api& e = Emu();
  CUdeviceptr p = Alloc(32);
  ASSERT_EQ(e.cuMemsetD8(p, 0xAB, 32), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemsetD32(p + 4, 0x01020304u, 2), CUDA_SUCCESS) << Detail();
  CUstream s = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&s, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemsetD8Async(p + 16, 0x11, 4, s), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemsetD32Async(p + 24, 0xDEADBEEFu, 1, s), CUDA_SUCCESS) << Detail();
  uint8_t out[32];
  ASSERT_EQ(e.cuMemcpyDtoH(out, p, 32), CUDA_SUCCESS);
  const uint8_t expected[32] = {0xAB, 0xAB, 0xAB, 0xAB, 0x04, 0x03, 0x02, 0x01, 0x04, 0x03, 0x02,
                                0x01, 0xAB, 0xAB, 0xAB, 0xAB, 0x11, 0x11, 0x11, 0x11, 0xAB, 0xAB,
                                0xAB, 0xAB, 0xEF, 0xBE, 0xAD, 0xDE, 0xAB, 0xAB, 0xAB, 0xAB};
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], expected[i]) << "byte " << i;
  EXPECT_EQ(e.cuMemsetD32(p + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(Detail().find("misaligned"), std::string::npos) << Detail();
  EXPECT_EQ(e.cuMemsetD8(p, 0, 33), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(DriverApiTest, OutOfRangeCopyNamesTheAddress) {
  CUdeviceptr p = Alloc(64);
  std::vector<uint8_t> host(64);
  EXPECT_EQ(Emu().cuMemcpyHtoD(p + 32, host.data(), 64), CUDA_ERROR_INVALID_VALUE);
  std::string d = Detail();
  EXPECT_NE(d.find(Hex(p + 32)), std::string::npos) << d;
  EXPECT_NE(d.find("32 bytes past the end of a 64-byte allocation at " + Hex(p)), std::string::npos) << d;
  EXPECT_EQ(d.rfind("cuMemcpyHtoD: ", 0), 0u) << d;
  // The detail belongs to the last failing call only.
  EXPECT_EQ(Emu().cuMemcpyHtoD(p, host.data(), 64), CUDA_SUCCESS);
  EXPECT_EQ(Detail(), "");
}

TEST_F(DriverApiTest, UseAfterFreeIsReported) {
  CUdeviceptr p = Alloc(256);
  ASSERT_EQ(Emu().cuMemFree(p), CUDA_SUCCESS);
  uint32_t v = 0;
  EXPECT_EQ(Emu().cuMemcpyDtoH(&v, p + 8, 4), CUDA_ERROR_INVALID_VALUE);
  std::string d = Detail();
  EXPECT_NE(d.find(Hex(p + 8)), std::string::npos) << d;
  EXPECT_NE(d.find("that was freed"), std::string::npos) << d;
  EXPECT_EQ(Emu().cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(Detail().find("invalid free of " + Hex(p)), std::string::npos) << Detail();
}

TEST_F(DriverApiTest, CubinIsRefusedWithALog) {
  const unsigned char cubin[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  char log[128];
  std::memset(log, 'x', sizeof(log));
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof(log)})};
  CUmodule m = nullptr;
  EXPECT_EQ(Emu().cuModuleLoadDataEx(&m, cubin, 2, options, values), CUDA_ERROR_NO_BINARY_FOR_GPU);
  const std::string message = "kiln emulator executes PTX only; load the PTX";
  EXPECT_EQ(std::string(log), message);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values[1]), message.size() + 1);
  EXPECT_EQ(Detail(), message);

  char small[10];
  values[0] = small;
  values[1] = reinterpret_cast<void*>(uintptr_t{sizeof(small)});
  EXPECT_EQ(Emu().cuModuleLoadDataEx(&m, cubin, 2, options, values), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(std::string(small), message.substr(0, 9));
}

TEST_F(DriverApiTest, InvalidPtxIsRefusedWithTheParserMessage) {
  char log[512] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof(log)})};
  CUmodule m = nullptr;
  const char* ptx = ".version 8.0\n.target sm_90\n.address_size 64\nthis is not PTX;\n";
  EXPECT_EQ(Emu().cuModuleLoadDataEx(&m, ptx, 2, options, values), CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(std::string(log), "");
  EXPECT_EQ(Detail(), std::string(log));
}

TEST_F(DriverApiTest, ModuleFunctionsAndAttributes) {
  const Api& e = Emu();
  CUmodule m = nullptr;
  ASSERT_EQ(e.cuModuleLoadData(&m, kNoopPtx), CUDA_SUCCESS) << Detail();
  CUfunction f = nullptr;
  ASSERT_EQ(e.cuModuleGetFunction(&f, m, "noop"), CUDA_SUCCESS);
  EXPECT_EQ(e.cuModuleGetFunction(&f, m, "missing"), CUDA_ERROR_NOT_FOUND);
  EXPECT_NE(Detail().find("'missing'"), std::string::npos) << Detail();
  EXPECT_NE(Detail().find("noop"), std::string::npos) << Detail();
  ASSERT_EQ(e.cuModuleGetFunction(&f, m, "noop"), CUDA_SUCCESS);
  int v = -1;
  ASSERT_EQ(e.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), CUDA_SUCCESS);
  EXPECT_EQ(v, 1024);
  ASSERT_EQ(e.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), CUDA_SUCCESS);
  EXPECT_EQ(v, 0);
  ASSERT_EQ(e.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f), CUDA_SUCCESS);
  EXPECT_EQ(v, 49152);
  EXPECT_EQ(e.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(e.cuModuleUnload(m), CUDA_SUCCESS);
  EXPECT_EQ(e.cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
}

// Module variables live in device memory the module owns.
TEST_F(DriverApiTest, ModuleGlobalsAreAllocatedAndFreed) {
  const Api& e = Emu();
  const char* ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".global .align 4 .u32 table[3] = {7, 8, 9};\n"
      ".visible .entry noop()\n{\n\tret;\n}\n";
  size_t free_before = 0, free_loaded = 0, free_after = 0, total = 0;
  ASSERT_EQ(e.cuMemGetInfo(&free_before, &total), CUDA_SUCCESS);
  CUmodule m = nullptr;
  ASSERT_EQ(e.cuModuleLoadData(&m, ptx), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemGetInfo(&free_loaded, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_before - free_loaded, 12u);
  ASSERT_EQ(e.cuModuleUnload(m), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemGetInfo(&free_after, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_after, free_before);
}

TEST_F(DriverApiTest, LaunchIsValidatedLikeTheDriver) {
  const Api& e = Emu();
  CUfunction f = LoadNoop();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(e.cuLaunchKernel(f, 1, 1, 1, 32, 64, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(Detail().find("2048 threads"), std::string::npos) << Detail();
  EXPECT_EQ(e.cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(e.cuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(e.cuLaunchKernel(f, 1, 1, 1, 1, 1, 128, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  // More than 48 KiB of dynamic shared memory needs the opt-in.
  EXPECT_EQ(e.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 64 * 1024, nullptr, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(Detail().find("MAX_DYNAMIC_SHARED_SIZE_BYTES"), std::string::npos) << Detail();
  void* extra[] = {CU_LAUNCH_PARAM_END};
  EXPECT_EQ(e.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(e.cuLaunchKernel(reinterpret_cast<CUfunction>(&extra), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr,
                             nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  // None of these is a fault: the context stays usable.
  EXPECT_EQ(e.cuCtxSynchronize(), CUDA_SUCCESS);
}

// A kernel that holds 96 loaded floats live at once (then sums them):
// ptxas needs ~100 registers for it, which a block of 1024 threads (64 each
// at most) cannot hold. The device refuses such a launch unless .maxntid
// made ptxas fit the kernel to the block.
std::string RegisterHungryPtx(const char* name, const char* directive) {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry " + std::string(name) +
                    "(.param .u64 p)" + directive + "\n{\n.reg .f32 %f<97>;\n.reg .b64 %rd<2>;\n"
                    "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\n";
  for (int i = 0; i < 96; ++i)
    ptx += "ld.global.f32 %f" + std::to_string(i) + ", [%rd1+" + std::to_string(4 * i) + "];\n";
  ptx += "mov.f32 %f96, 0f00000000;\n";
  for (int i = 95; i >= 0; --i) ptx += "add.f32 %f96, %f96, %f" + std::to_string(i) + ";\n";
  return ptx + "st.global.f32 [%rd1+384], %f96;\nret;\n}\n";
}

TEST_F(DriverApiTest, BlocksMustFitTheRegisterFile) {
  const Api& e = Emu();
  CUdeviceptr p = Alloc(388);
  std::vector<float> ones(96, 1.0f);
  ASSERT_EQ(e.cuMemcpyHtoD(p, ones.data(), 384), CUDA_SUCCESS);
  void* params[] = {&p};
  CUfunction loose = nullptr, capped = nullptr;
  CUmodule m1 = nullptr, m2 = nullptr;
  std::string loose_ptx = RegisterHungryPtx("loose", ""), capped_ptx = RegisterHungryPtx("capped", " .maxntid 1024");
  ASSERT_EQ(e.cuModuleLoadData(&m1, loose_ptx.c_str()), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuModuleLoadData(&m2, capped_ptx.c_str()), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuModuleGetFunction(&loose, m1, "loose"), CUDA_SUCCESS);
  ASSERT_EQ(e.cuModuleGetFunction(&capped, m2, "capped"), CUDA_SUCCESS);
  int loose_regs = 0, capped_regs = 0;
  ASSERT_EQ(e.cuFuncGetAttribute(&loose_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, loose), CUDA_SUCCESS);
  ASSERT_EQ(e.cuFuncGetAttribute(&capped_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, capped), CUDA_SUCCESS);
  EXPECT_GE(loose_regs, 96);
  EXPECT_EQ(capped_regs, 64);  // 65536 registers / 1024 threads
  EXPECT_EQ(e.cuLaunchKernel(loose, 1, 1, 1, 1024, 1, 1, 0, nullptr, params, nullptr),
            CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  EXPECT_NE(Detail().find("registers"), std::string::npos) << Detail();
  // 256 threads of ~100 registers fit; so does the capped kernel at 1024.
  ASSERT_EQ(e.cuLaunchKernel(loose, 1, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuLaunchKernel(capped, 1, 1, 1, 1024, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuCtxSynchronize(), CUDA_SUCCESS);
  float sum = 0;
  ASSERT_EQ(e.cuMemcpyDtoH(&sum, p + 384, 4), CUDA_SUCCESS);
  EXPECT_EQ(sum, 96.0f);
}

TEST_F(DriverApiTest, EventsMeasureTimeAndCountLaunches) {
  const Api& e = Emu();
  CUfunction f = LoadNoop();
  ASSERT_NE(f, nullptr);
  CUstream s = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent start = nullptr, end = nullptr, never = nullptr;
  ASSERT_EQ(e.cuEventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventCreate(&never, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(e.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(start, s), CUDA_SUCCESS);
  CUdeviceptr p = Alloc(1 << 20);
  ASSERT_EQ(e.cuMemsetD8Async(p, 0, 1 << 20, s), CUDA_SUCCESS);
  ASSERT_EQ(e.cuLaunchKernel(f, 3, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuLaunchKernel(f, 2, 2, 1, 64, 1, 1, 0, s, nullptr, nullptr), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(end, s), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventSynchronize(end), CUDA_SUCCESS);
  EXPECT_EQ(e.cuEventQuery(never), CUDA_SUCCESS);

  float ms = -1;
  ASSERT_EQ(e.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(e.cuEventElapsedTime(&ms, start, never), CUDA_ERROR_INVALID_HANDLE);

  KilnEmuCounters c{};
  ASSERT_EQ(e.kilnEmuEventCounters(start, end, &c), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(c.launches, 2u);  // the launch before `start` is not counted
  EXPECT_EQ(c.grid[0], 2u);
  EXPECT_EQ(c.grid[1], 2u);
  EXPECT_EQ(c.block[0], 64u);
  EXPECT_EQ(e.kilnEmuEventCounters(start, never, &c), CUDA_ERROR_INVALID_HANDLE);

  CUevent untimed = nullptr;
  ASSERT_EQ(e.cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(untimed, s), CUDA_SUCCESS);
  EXPECT_EQ(e.cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(e.cuEventDestroy(start), CUDA_SUCCESS);
  EXPECT_EQ(e.cuEventRecord(start, s), CUDA_ERROR_INVALID_HANDLE);
}

// Under the emulator, events measure modeled time (docs/gpu_timing_model.md),
// by hand from its figures:
//   memset of 4 MiB: 2 us + 4 MiB / 3.0e12 B/s = 3.398101 us;
//   copy kernel of 1M floats, DRAM-bound: 2 us + 8 MiB / 3.0e12 = 4.796 us
//     (the counters carry it rounded to 4796 ns, which the clock adds);
//   sgemm 256^3, default math (FP32 cores): four 128x128 tiles in one wave,
//     2 * 128 * 128 * 256 flops / (66.9e12 / 132 * 0.8) = 20.689 us, + 2 us
//     = 22.689 us (operands 768 KiB: 0.26 us); optimal 2 * 256^3 / 66.9e12
//     = 0.502 us + 2 us;
//   copy of 1 MiB host -> device over PCIe: 2 us + 1 MiB / 64e9 = 18.384 us.
TEST_F(DriverApiTest, EventsMeasureModeledTime) {
  const Api& e = Emu();
  CUstream s = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr buffer = Alloc(4 << 20);
  std::vector<float> host(1 << 18, 1.0f);
  CUevent start = nullptr, end = nullptr, after_copy = nullptr;
  for (CUevent* ev : {&start, &end, &after_copy}) ASSERT_EQ(e.cuEventCreate(ev, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(start, s), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemsetD32Async(buffer, 0, 1 << 20, s), CUDA_SUCCESS);
  ASSERT_TRUE(LaunchCopy(e, 1 << 20, s)) << Detail();
  cublasHandle_t h = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(e.cublasSetStream_v2(h, s), CUBLAS_STATUS_SUCCESS);
  auto* m = reinterpret_cast<float*>(buffer);
  float alpha = 1, beta = 0;
  ASSERT_EQ(e.cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &alpha, m, 256, 0,
                                        m + 65536, 256, 0, &beta, m + 131072, 256, 0, 1),
            CUBLAS_STATUS_SUCCESS)
      << Detail();
  ASSERT_EQ(e.cuEventRecord(end, s), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyHtoDAsync(buffer, host.data(), 1 << 20, s), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(after_copy, s), CUDA_SUCCESS);

  float ms = -1;
  ASSERT_EQ(e.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  EXPECT_NEAR(ms * 1e3, 3.398101 + 4.796 + 22.689, 1e-4);
  KilnEmuCounters c{};
  ASSERT_EQ(e.kilnEmuEventCounters(start, end, &c), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(c.launches, 2u);
  EXPECT_EQ(c.model_ns, 4796u + 22689u);
  EXPECT_EQ(c.optimal_ns, 4796u + 2502u);
  ASSERT_EQ(e.cuEventElapsedTime(&ms, end, after_copy), CUDA_SUCCESS);
  EXPECT_NEAR(ms * 1e3, 18.384, 1e-3);
  EXPECT_EQ(e.cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
}

// Column-major, C = alpha * op(A) * op(B) + beta * C with m=2, n=3, k=2,
// both operands transposed: A is stored k x m, B is stored n x k.
//   A = [1 3; 2 4] -> A^T = [1 2; 3 4]
//   B = [5 8; 6 9; 7 10] -> B^T = [5 6 7; 8 9 10]
//   A^T B^T = [21 24 27; 47 54 61]
TEST_F(DriverApiTest, CublasSgemmWithTransposes) {
  const Api& e = Emu();
  const float a[4] = {1, 2, 3, 4};
  const float b[12] = {5, 6, 7, 8, 9, 10, /* batch 1: 2 B */ 10, 12, 14, 16, 18, 20};
  const float nan = std::nanf("");
  const float c0[12] = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan};
  CUdeviceptr da = Alloc(sizeof(a)), db = Alloc(sizeof(b)), dc = Alloc(sizeof(c0));
  ASSERT_EQ(e.cuMemcpyHtoD(da, a, sizeof(a)), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyHtoD(db, b, sizeof(b)), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyHtoD(dc, c0, sizeof(c0)), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(e.cublasSetStream_v2(h, s), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(e.cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  CUevent start = nullptr, end = nullptr;
  ASSERT_EQ(e.cuEventCreate(&start, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventCreate(&end, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(start, s), CUDA_SUCCESS);

  auto* A = reinterpret_cast<const float*>(da);
  auto* B = reinterpret_cast<const float*>(db);
  auto* C = reinterpret_cast<float*>(dc);
  float alpha = 1, beta = 0;  // beta == 0: the NaNs in C are never read
  ASSERT_EQ(e.cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_T, 2, 3, 2, &alpha, A, 2, 0, B, 3, 6, &beta,
                                        C, 2, 6, 2),
            CUBLAS_STATUS_SUCCESS)
      << Detail();
  float out[12];
  ASSERT_EQ(e.cuMemcpyDtoH(out, dc, sizeof(out)), CUDA_SUCCESS);
  const float expected[12] = {21, 47, 24, 54, 27, 61, 42, 94, 48, 108, 54, 122};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], expected[i]) << "C[" << i << "]";

  alpha = 0.5f;
  beta = 2;  // C = 0.5 AB + 2 AB for batch 0
  ASSERT_EQ(e.cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_T, 2, 3, 2, &alpha, A, 2, 0, B, 3, 6, &beta,
                                        C, 2, 6, 1),
            CUBLAS_STATUS_SUCCESS)
      << Detail();
  ASSERT_EQ(e.cuEventRecord(end, s), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyDtoH(out, dc, sizeof(out)), CUDA_SUCCESS);
  const float scaled[6] = {52.5f, 117.5f, 60, 135, 67.5f, 152.5f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], scaled[i]) << "C[" << i << "]";
  KilnEmuCounters c{};
  ASSERT_EQ(e.kilnEmuEventCounters(start, end, &c), CUDA_SUCCESS);
  EXPECT_EQ(c.launches, 2u);  // each GEMM counts as one launch on its stream
  float ms = -1;
  ASSERT_EQ(e.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(e.cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
}

// The same product as CublasSgemmWithTransposes with bf16 A and B (every
// value exact in bf16) and an f32 C: cublasGemmStridedBatchedEx, compute
// type CUBLAS_COMPUTE_32F. Other type combinations are NOT_SUPPORTED.
TEST_F(DriverApiTest, CublasGemmExBf16OperandsF32Result) {
  const Api& e = Emu();
  auto bf16 = [](float f) {
    uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    return static_cast<uint16_t>(bits >> 16);
  };
  const uint16_t a[4] = {bf16(1), bf16(2), bf16(3), bf16(4)};
  const uint16_t b[6] = {bf16(5), bf16(6), bf16(7), bf16(8), bf16(9), bf16(10)};
  CUdeviceptr da = Alloc(sizeof(a)), db = Alloc(sizeof(b)), dc = Alloc(6 * sizeof(float));
  ASSERT_EQ(e.cuMemcpyHtoD(da, a, sizeof(a)), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyHtoD(db, b, sizeof(b)), CUDA_SUCCESS);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(e.cublasGemmStridedBatchedEx, nullptr);
  float alpha = 1, beta = 0;
  auto* A = reinterpret_cast<const void*>(da);
  auto* B = reinterpret_cast<const void*>(db);
  auto* C = reinterpret_cast<void*>(dc);
  ASSERT_EQ(e.cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_T, 2, 3, 2, &alpha, A, CUDA_R_16BF, 2, 0, B,
                                         CUDA_R_16BF, 3, 0, &beta, C, CUDA_R_32F, 2, 0, 1, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS)
      << Detail();
  float out[6];
  ASSERT_EQ(e.cuMemcpyDtoH(out, dc, sizeof(out)), CUDA_SUCCESS);
  const float expected[6] = {21, 47, 24, 54, 27, 61};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], expected[i]) << "C[" << i << "]";
  EXPECT_EQ(e.cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_T, 2, 3, 2, &alpha, A, CUDA_R_16F, 2, 0, B,
                                         CUDA_R_16F, 3, 0, &beta, C, CUDA_R_32F, 2, 0, 1, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_NE(Detail().find("bf16 x bf16 -> f32"), std::string::npos) << Detail();
  EXPECT_EQ(e.cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
}

// s8 x s8 -> s32 (CUDA_R_8I, CUBLAS_COMPUTE_32I, int32 alpha and beta) in
// the "TN" form: op(A) = A^T = [[1,2,3,4], [-128 x4]], B's columns [1 x4],
// [-128 x4], [127,-1,0,5]. AB = [[10, -1280, 145], [-512, 65536, -16768]]
// (column-major {10, -512, -1280, 65536, 145, -16768}); then alpha = 2,
// beta = 1 over it gives 3 * AB. lda not a multiple of 4 is NOT_SUPPORTED
// (the int8 kernels' rule).
TEST_F(DriverApiTest, CublasGemmExInt8OperandsS32Result) {
  const Api& e = Emu();
  const int8_t a[8] = {1, 2, 3, 4, -128, -128, -128, -128};
  const int8_t b[12] = {1, 1, 1, 1, -128, -128, -128, -128, 127, -1, 0, 5};
  CUdeviceptr da = Alloc(sizeof(a)), db = Alloc(sizeof(b)), dc = Alloc(6 * sizeof(int32_t));
  ASSERT_EQ(e.cuMemcpyHtoD(da, a, sizeof(a)), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemcpyHtoD(db, b, sizeof(b)), CUDA_SUCCESS);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  int32_t alpha = 1, beta = 0;
  auto* A = reinterpret_cast<const void*>(da);
  auto* B = reinterpret_cast<const void*>(db);
  auto* C = reinterpret_cast<void*>(dc);
  auto gemm = [&](int lda) {
    return e.cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 3, 4, &alpha, A, CUDA_R_8I, lda, 0, B,
                                        CUDA_R_8I, 4, 0, &beta, C, CUDA_R_32I, 2, 0, 1, CUBLAS_COMPUTE_32I,
                                        CUBLAS_GEMM_DEFAULT);
  };
  ASSERT_EQ(gemm(4), CUBLAS_STATUS_SUCCESS) << Detail();
  int32_t out[6];
  ASSERT_EQ(e.cuMemcpyDtoH(out, dc, sizeof(out)), CUDA_SUCCESS);
  const int32_t expected[6] = {10, -512, -1280, 65536, 145, -16768};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], expected[i]) << "C[" << i << "]";
  alpha = 2, beta = 1;
  ASSERT_EQ(gemm(4), CUBLAS_STATUS_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemcpyDtoH(out, dc, sizeof(out)), CUDA_SUCCESS);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], 3 * expected[i]) << "C[" << i << "]";
  EXPECT_EQ(gemm(5), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_NE(Detail().find("multiples of 4"), std::string::npos) << Detail();
  EXPECT_EQ(e.cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
}

TEST_F(DriverApiTest, CublasValidatesArguments) {
  const Api& e = Emu();
  CUdeviceptr d = Alloc(1024);
  auto* p = reinterpret_cast<double*>(d);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  double alpha = 1, beta = 0;
  // lda must be at least max(1, m) for op(A) = A.
  EXPECT_EQ(e.cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &alpha, p, 3, 16, p, 4, 16,
                                        &beta, p, 4, 16, 1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(Detail().find("lda 3"), std::string::npos) << Detail();
  EXPECT_EQ(e.cublasDgemmStridedBatched(h, CUBLAS_OP_CONJG, CUBLAS_OP_N, 4, 4, 4, &alpha, p, 4, 16, p, 4, 16,
                                        &beta, p, 4, 16, 1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(e.cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 4, 4, &alpha, p, 1, 16, p, 4, 16,
                                        &beta, p, 1, 16, 1),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(e.cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_STREQ(e.cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  int version = 0;
  EXPECT_EQ(e.cublasGetVersion_v2(h, &version), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(version, CUBLAS_VERSION);
  EXPECT_EQ(e.cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
}

// A GEMM that writes past its allocation faults like a kernel: the context
// is sticky-failed until the primary context is released.
TEST_F(DriverApiTest, CublasFaultIsStickyUntilTheContextIsDestroyed) {
  const Api& e = Emu();
  CUdeviceptr d = Alloc(16 * sizeof(float));
  // Written, so that only the bad C range is wrong even under initcheck.
  ASSERT_EQ(e.cuMemsetD32(d, 0, 16), CUDA_SUCCESS);
  auto* p = reinterpret_cast<float*>(d);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  float alpha = 1, beta = 0;
  EXPECT_EQ(e.cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &alpha, p, 4, 0, p, 4, 0, &beta,
                                        p, 4, 16, 2),
            CUBLAS_STATUS_EXECUTION_FAILED);
  std::string d1 = Detail();
  EXPECT_EQ(d1.rfind("invalid write of matrix C (batch 1)", 0), 0u) << d1;
  EXPECT_NE(d1.find("past the end of a 64-byte allocation"), std::string::npos) << d1;
  CUdeviceptr q = 0;
  EXPECT_EQ(e.cuMemAlloc(&q, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(e.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_NE(Detail().find("earlier fault"), std::string::npos) << Detail();
  EXPECT_EQ(e.cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);

  // Destroying the context clears the fault.
  ASSERT_EQ(e.cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuCtxSetCurrent(context_), CUDA_SUCCESS);
  EXPECT_EQ(e.cuMemAlloc(&q, 16), CUDA_SUCCESS) << Detail();
}

// The runtime's own view: CudaDriver and CudaBackend on the emulator.
TEST_F(DriverApiTest, RuntimeRunsOnTheEmulator) {
  using kiln::runtime::CudaBackend;
  using kiln::runtime::CudaDriver;
  kiln::StatusOr<std::unique_ptr<CudaDriver>> d = CudaDriver::Load(KILN_CUDA_EMULATOR_PATH);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE((*d)->is_emulator());
  CUdeviceptr p = 0;
  kiln::Status s = (*d)->Check((*d)->cuMemFree(p + 64), "cuMemFree");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cuMemFree failed: CUDA_ERROR_INVALID_VALUE (invalid argument): cuMemFree: ", 0),
            0u)
      << s.message();

  kiln::StatusOr<std::unique_ptr<CudaBackend>> b = CudaBackend::Create(std::move(*d), 0, 2);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ((*b)->name(), "kiln emulator (sm_90, H100-class)");
  EXPECT_EQ((*b)->sm_arch(), 90);
  auto cublas = (*b)->Cublas();
  ASSERT_TRUE(cublas.ok()) << cublas.status().message();
  EXPECT_EQ((*cublas)->library(), KILN_CUDA_EMULATOR_PATH);
  EXPECT_TRUE((*b)->CublasHandle(1).ok());
}

TEST(DriverApiRuntime, BadEmulatorPathIsOneLineError) {
  setenv("KILN_CUDA_EMULATOR", "/nonexistent/libkiln_cuda_emulator.so", 1);
  auto b = kiln::runtime::CreateCudaBackend(1);
  unsetenv("KILN_CUDA_EMULATOR");
  ASSERT_FALSE(b.ok());
  std::string m = b.status().message();
  EXPECT_EQ(m.rfind("cannot load /nonexistent/libkiln_cuda_emulator.so (named by KILN_CUDA_EMULATOR): ", 0), 0u)
      << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

}  // namespace
