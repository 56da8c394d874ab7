// CUDA backend of the runtime.
//
// Without a GPU (every CI machine): Device::Create(kCuda) fails with one
// line naming what is missing, the dlopen'ed function tables report missing
// libraries cleanly and resolve every entry point of the real libraries
// when they are installed (the CUDA toolkit's stub libcuda, libcublas), the
// code selection (cubin for the device's SM, else PTX) and the mapping of a
// row-major GemmThunk onto cuBLAS' column-major call are checked. With a GPU:
// kernels compiled by kiln::codegen, gemm, copies, memsets, while and
// conditional run on the device and are compared with hand-computed values;
// those tests GTEST_SKIP() when no CUDA device is usable.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "compiler/codegen/kernel_codegen.h"
#include "compiler/hlo/parser.h"
#include "kernels_lib/gemm_plan.h"
#include "tests/runtime/runtime_test_util.h"

#if KILN_HAVE_CUDA_HEADERS
#include "kernels_lib/cublas_library.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_module.h"
#endif

namespace kiln::runtime::testing {
namespace {

using ::kiln::thunks::ThunkKind;

// ---- without a GPU -------------------------------------------------------

TEST(CudaDevice, CreateFailsWithOneLineNamingWhatIsMissing) {
  StatusOr<std::unique_ptr<Device>> d = Device::Create(DeviceKind::kCuda, 2);
  if (d.ok()) {
    // A machine with a GPU: the device is usable.
    EXPECT_EQ((*d)->kind(), DeviceKind::kCuda);
    EXPECT_EQ((*d)->num_streams(), 2);
    return;
  }
  std::string m = d.status().message();
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.rfind("CUDA backend not built/available: ", 0), 0u) << m;
#if KILN_HAVE_CUDA_HEADERS
  // No driver library, or a driver without a device.
  bool names_missing_piece = m.find("cannot load libcuda.so.1") != std::string::npos ||
                             m.find("cuInit failed: CUDA_ERROR") != std::string::npos ||
                             m.find("no CUDA device") != std::string::npos;
  EXPECT_TRUE(names_missing_piece) << m;
#else
  EXPECT_EQ(m, "CUDA backend not built/available: kiln was built without CUDA headers");
#endif
  EXPECT_FALSE(Device::Create(DeviceKind::kCuda, 0).ok());
}

// A row-major m x n result of the column-major call `c` (what cuBLAS
// computes), evaluated naively on the host from the thunk's operands.
template <typename T>
std::vector<T> RunColumnMajor(const kernels::ColumnMajorGemm& c, const std::vector<T>& lhs,
                              const std::vector<T>& rhs, size_t out_size) {
  // cuBLAS' A is the thunk's rhs, B its lhs (gemm_plan.h).
  const std::vector<T>& a = rhs;
  const std::vector<T>& b = lhs;
  std::vector<T> out(out_size, T(0));
  for (int64_t batch = 0; batch < c.batch; ++batch) {
    for (int64_t j = 0; j < c.n; ++j) {
      for (int64_t i = 0; i < c.m; ++i) {
        T sum = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          // Column-major element (r, s) of a matrix with leading dim ld: r + s*ld.
          T av = c.transpose_a ? a[batch * c.stride_a + p + i * c.lda]
                               : a[batch * c.stride_a + i + p * c.lda];
          T bv = c.transpose_b ? b[batch * c.stride_b + j + p * c.ldb]
                               : b[batch * c.stride_b + p + j * c.ldb];
          sum += av * bv;
        }
        T& o = out[batch * c.stride_c + i + j * c.ldc];
        o = static_cast<T>(c.alpha) * sum + static_cast<T>(c.beta) * o;
      }
    }
  }
  return out;
}

TEST(CudaGemmPlan, RowMajorProductAsColumnMajorCall) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
  th::GemmThunk g;
  g.m = 2, g.n = 2, g.k = 3;
  StatusOr<kernels::ColumnMajorGemm> c = kernels::PlanColumnMajorGemm(g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->m, 2);
  EXPECT_EQ(c->lda, 2);  // rhs rows of n = 2
  EXPECT_EQ(c->ldb, 3);  // lhs rows of k = 3
  EXPECT_EQ(c->ldc, 2);
  EXPECT_FALSE(c->transpose_a || c->transpose_b);
  EXPECT_EQ(RunColumnMajor<float>(*c, {1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}, 4),
            (std::vector<float>{58, 64, 139, 154}));
}

TEST(CudaGemmPlan, NonSquareTransposedLhs) {
  // lhs stored transposed (k x m = 3 x 2): [[1,4],[2,5],[3,6]] is A^T for
  // A = [[1,2,3],[4,5,6]]; rhs 3 x 1 = [1,0,2]: A x rhs = [7, 16].
  th::GemmThunk g;
  g.m = 2, g.n = 1, g.k = 3;
  g.lhs_transposed = true;
  StatusOr<kernels::ColumnMajorGemm> c = kernels::PlanColumnMajorGemm(g);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->transpose_b);
  EXPECT_EQ(c->ldb, 2);  // stored lhs rows have m = 2 elements
  EXPECT_EQ(RunColumnMajor<double>(*c, {1, 4, 2, 5, 3, 6}, {1, 0, 2}, 2),
            (std::vector<double>{7, 16}));
}

TEST(CudaGemmPlan, BatchedTransposedRhsWithAlpha) {
  // Same case as HostRuntime.GemmBatchedTransposedF64: batch 0
  // 2 * [[1,2],[3,4]] x [[5,6],[7,8]] = [[38,44],[86,100]]; batch 1
  // 2 * I x [[2,3],[4,5]] = [[4,6],[8,10]]; rhs stored transposed.
  th::GemmThunk g;
  g.m = g.n = g.k = 2;
  g.batch = 2;
  g.rhs_transposed = true;
  g.lhs_leading_dim = g.rhs_leading_dim = g.out_leading_dim = 2;
  g.lhs_batch_stride = g.rhs_batch_stride = g.out_batch_stride = 4;
  g.alpha_real = 2.0;
  StatusOr<kernels::ColumnMajorGemm> c = kernels::PlanColumnMajorGemm(g);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->transpose_a);
  EXPECT_EQ(c->stride_a, 4);
  EXPECT_EQ(RunColumnMajor<double>(*c, {1, 2, 3, 4, 1, 0, 0, 1}, {5, 7, 6, 8, 2, 4, 3, 5}, 8),
            (std::vector<double>{38, 44, 86, 100, 4, 6, 8, 10}));
}

TEST(CudaGemmPlan, RejectsNegativeDimsAndComplexAlpha) {
  th::GemmThunk g;
  g.m = -1;
  EXPECT_FALSE(kernels::PlanColumnMajorGemm(g).ok());
  g.m = 1;
  g.alpha_imag = 1;
  StatusOr<kernels::ColumnMajorGemm> c = kernels::PlanColumnMajorGemm(g);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("complex alpha"), std::string::npos);
}

#if KILN_HAVE_CUDA_HEADERS

TEST(CudaDriverTable, MissingLibraryIsOneLineError) {
  StatusOr<std::unique_ptr<CudaDriver>> d = CudaDriver::Load("libkiln-no-such-driver.so.1");
  ASSERT_FALSE(d.ok());
  std::string m = d.status().message();
  EXPECT_EQ(m.rfind("cannot load libkiln-no-such-driver.so.1 (no NVIDIA driver installed?): ", 0),
            0u)
      << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
  StatusOr<std::unique_ptr<CudaBackend>> b =
      CudaBackend::Create("libkiln-no-such-driver.so.1", 0, 1);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), m);
}

TEST(CudaDriverTable, LibraryWithoutTheEntryPointsIsOneLineError) {
  // libm is a real library that exports none of the driver API.
  StatusOr<std::unique_ptr<CudaDriver>> d = CudaDriver::Load("libm.so.6");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message().rfind("libm.so.6 lacks cuGetErrorName", 0), 0u)
      << d.status().message();
}

constexpr char kStubDriver[] = "/usr/local/cuda/lib64/stubs/libcuda.so";

// The toolkit's stub libcuda exports the real driver's symbols, so loading
// it checks every (versioned) name in the table; its cuInit fails.
TEST(CudaDriverTable, StubDriverResolvesEveryEntryPointAndFailsCuInit) {
  if (access(kStubDriver, R_OK) != 0) GTEST_SKIP() << "no " << kStubDriver;
  StatusOr<std::unique_ptr<CudaDriver>> d = CudaDriver::Load(kStubDriver);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NE((*d)->cuMemAlloc, nullptr);
  EXPECT_NE((*d)->cuLaunchKernel, nullptr);
  EXPECT_NE((*d)->cuEventElapsedTime, nullptr);
  Status s = (*d)->Check((*d)->cuInit(0), "cuInit");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cuInit failed: ", 0), 0u) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  StatusOr<std::unique_ptr<CudaBackend>> b = CudaBackend::Create(kStubDriver, 0, 1);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message().rfind("cuInit failed: ", 0), 0u) << b.status().message();
}

TEST(CublasTable, MissingLibraryIsOneLineError) {
  auto lib = kernels::CublasLibrary::Load({"libkiln-no-cublas.so.13", "libkiln-no-cublas.so.12"});
  ASSERT_FALSE(lib.ok());
  std::string m = lib.status().message();
  EXPECT_EQ(m.rfind("cuBLAS unavailable: cannot load libkiln-no-cublas.so.13 or "
                    "libkiln-no-cublas.so.12: ",
                    0),
            0u)
      << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST(CublasTable, InstalledLibraryResolvesEveryEntryPoint) {
  void* probe = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!probe) probe = dlopen("libcublas.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!probe) GTEST_SKIP() << "no libcublas installed";
  auto lib = kernels::CublasLibrary::Load();
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  EXPECT_NE((*lib)->cublasSgemmStridedBatched, nullptr);
  EXPECT_NE((*lib)->cublasDgemmStridedBatched, nullptr);
  EXPECT_NE((*lib)->cublasGemmStridedBatchedEx, nullptr);
  // cublasGetStatusName needs no GPU.
  EXPECT_EQ((*lib)->StatusText(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
  Status s = (*lib)->Check(CUBLAS_STATUS_INVALID_VALUE, "cublasSgemmStridedBatched");
  EXPECT_EQ(s.message(), "cublasSgemmStridedBatched failed: CUBLAS_STATUS_INVALID_VALUE");
}

TEST(CudaCode, PrefersTheDevicesCubinElsePtx) {
  bef::KernelImage image;
  image.kind = bef::TargetKind::kCuda;
  image.cubins = {{80, {1, 2}}, {90, {3, 4}}};
  image.ptx = ".version 8.0";
  StatusOr<CudaCode> sm90 = SelectCudaCode(image, 90);
  ASSERT_TRUE(sm90.ok());
  ASSERT_NE(sm90->cubin, nullptr);
  EXPECT_EQ(sm90->cubin->sm_arch, 90);
  EXPECT_EQ(sm90->description, "sm_90 cubin");
  StatusOr<CudaCode> sm89 = SelectCudaCode(image, 89);
  ASSERT_TRUE(sm89.ok());
  EXPECT_EQ(sm89->cubin, nullptr);
  EXPECT_EQ(sm89->ptx, &image.ptx);
  EXPECT_EQ(sm89->description, "PTX (JIT for sm_89)");
  image.ptx.clear();
  StatusOr<CudaCode> none = SelectCudaCode(image, 75);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "the CUDA kernel image has no cubin for sm_75 (has: sm_80, sm_90) and no PTX to "
            "JIT-compile");
}

TEST(CudaCode, HostOnlyArtifactHasNoCudaImage) {
  StatusOr<const bef::KernelImage*> image = FindCudaImage(::kiln::testing::SmallArtifact());
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().message(), "the artifact has no CUDA kernel image (compiled for: host)");
}

#endif  // KILN_HAVE_CUDA_HEADERS

}  // namespace
}  // namespace kiln::runtime::testing
