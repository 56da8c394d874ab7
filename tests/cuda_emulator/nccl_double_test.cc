// The emulator's NCCL double, reached as the runtime reaches it: the
// emulator library opened by kernels::NcclLibrary, one runtime::CudaBackend
// per emulated device. Collectives across devices with hand-computed
// results (one thread driving every rank in a group, and one thread per
// rank meeting through a unique id), the documented rank-order reduction,
// grouped sends and receives, argument checks, memcheck on a buffer of the
// wrong device, a peer that never arrives (a bounded error, not a hang),
// the modeled NVLink time, and the one-line error when libnccl is missing.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/float_formats.h"
#include "kernels_lib/nccl_library.h"
#include "runtime/cuda_backend.h"

namespace kiln {
namespace {

class NcclDoubleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int d = 0; d < kDevices; ++d) {
      auto backend = runtime::CudaBackend::Create(KILN_CUDA_EMULATOR_PATH, d, 1);
      ASSERT_TRUE(backend.ok()) << backend.status().message();
      backends_.push_back(std::move(*backend));
    }
    auto nccl = kernels::NcclLibrary::Load({KILN_CUDA_EMULATOR_PATH});
    ASSERT_TRUE(nccl.ok()) << nccl.status().message();
    nccl_ = std::move(*nccl);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) nccl_->ncclCommDestroy(c);
    for (auto& [device, p] : allocations_) {
      (void)backends_[device]->MakeCurrent();
      backends_[device]->driver().cuMemFree(p);
    }
  }

  const runtime::CudaDriver& Driver() const { return backends_[0]->driver(); }
  cudaStream_t Stream(int device) const { return reinterpret_cast<cudaStream_t>(backends_[device]->stream(0)); }

  // Device memory of `device` holding `values`.
  template <typename T>
  void* Upload(int device, const std::vector<T>& values) {
    EXPECT_TRUE(backends_[device]->MakeCurrent().ok());
    CUdeviceptr p = 0;
    EXPECT_EQ(Driver().cuMemAlloc(&p, std::max<size_t>(values.size() * sizeof(T), 1)), CUDA_SUCCESS);
    if (!values.empty()) EXPECT_EQ(Driver().cuMemcpyHtoD(p, values.data(), values.size() * sizeof(T)), CUDA_SUCCESS);
    allocations_.emplace_back(device, p);
    return reinterpret_cast<void*>(p);
  }
  template <typename T>
  std::vector<T> Download(int device, const void* p, size_t count) {
    EXPECT_TRUE(backends_[device]->MakeCurrent().ok());
    std::vector<T> out(count);
    EXPECT_EQ(Driver().cuMemcpyDtoHAsync(out.data(), reinterpret_cast<CUdeviceptr>(p), count * sizeof(T),
                                         backends_[device]->stream(0)),
              CUDA_SUCCESS);
    EXPECT_EQ(Driver().cuStreamSynchronize(backends_[device]->stream(0)), CUDA_SUCCESS);
    return out;
  }
  // Communicators for devices 0..n-1, from one thread.
  void InitAll(int n) {
    comms_.assign(static_cast<size_t>(n), nullptr);
    ASSERT_EQ(nccl_->ncclCommInitAll(comms_.data(), n, nullptr), ncclSuccess);
  }

  static constexpr int kDevices = 4;
  std::vector<std::unique_ptr<runtime::CudaBackend>> backends_;
  std::unique_ptr<kernels::NcclLibrary> nccl_;
  std::vector<ncclComm_t> comms_;
  std::vector<std::pair<int, CUdeviceptr>> allocations_;
};

TEST_F(NcclDoubleTest, AllReducesOverFourDevicesFromOneThread) {
  InitAll(4);
  // Rank r holds r*10 + i: the sum is 60 + 4i, the max 30 + i, the min i.
  std::vector<void*> in, sum, max, min;
  for (int r = 0; r < 4; ++r) {
    std::vector<float> v(5);
    for (int i = 0; i < 5; ++i) v[i] = static_cast<float>(r * 10 + i);
    in.push_back(Upload(r, v));
    sum.push_back(Upload(r, std::vector<float>(5)));
    max.push_back(Upload(r, std::vector<float>(5)));
    min.push_back(Upload(r, std::vector<float>(5)));
  }
  ASSERT_EQ(nccl_->ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(nccl_->ncclAllReduce(in[r], sum[r], 5, ncclFloat32, ncclSum, comms_[r], Stream(r)), ncclSuccess);
    ASSERT_EQ(nccl_->ncclAllReduce(in[r], max[r], 5, ncclFloat32, ncclMax, comms_[r], Stream(r)), ncclSuccess);
    ASSERT_EQ(nccl_->ncclAllReduce(in[r], min[r], 5, ncclFloat32, ncclMin, comms_[r], Stream(r)), ncclSuccess);
  }
  ASSERT_EQ(nccl_->ncclGroupEnd(), ncclSuccess) << nccl_->ResultText(ncclInternalError);
  for (int r = 0; r < 4; ++r) {
    std::vector<float> s = Download<float>(r, sum[r], 5), hi = Download<float>(r, max[r], 5),
                       lo = Download<float>(r, min[r], 5);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(s[i], 60.0f + 4 * i) << "rank " << r;
      EXPECT_EQ(hi[i], 30.0f + i);
      EXPECT_EQ(lo[i], static_cast<float>(i));
    }
  }
}

TEST_F(NcclDoubleTest, RanksOnThreadsMeetThroughAUniqueId) {
  ncclUniqueId id;
  ASSERT_EQ(nccl_->ncclGetUniqueId(&id), ncclSuccess);
  constexpr int n = 3;
  // All-gather of s32 pairs, reduce-scatter of s32 (rank r holds r+1 in
  // every element: block sums are 6), broadcast from rank 2, and a bf16
  // sum in rank order: 1 + 2^-8 rounds to 1 (ties to even), twice, so the
  // result is 1, not the exact 1 + 2^-7.
  std::vector<void*> gather_in(n), gathered(n), scatter_in(n), scattered(n), bcast(n), narrow(n);
  const uint16_t one = static_cast<uint16_t>(EncodeNarrowFloat(ElementType::kBF16, 1.0));
  const uint16_t tiny = static_cast<uint16_t>(EncodeNarrowFloat(ElementType::kBF16, std::ldexp(1.0, -8)));
  for (int r = 0; r < n; ++r) {
    gather_in[r] = Upload(r, std::vector<int32_t>{r, 100 + r});
    gathered[r] = Upload(r, std::vector<int32_t>(2 * n));
    scatter_in[r] = Upload(r, std::vector<int32_t>(2 * n, r + 1));
    scattered[r] = Upload(r, std::vector<int32_t>(2));
    bcast[r] = Upload(r, std::vector<int64_t>{r * 1000, -r});
    narrow[r] = Upload(r, std::vector<uint16_t>{r == 0 ? one : tiny});
  }
  std::vector<ncclComm_t> comms(n, nullptr);
  std::vector<ncclResult_t> results(n, ncclInternalError);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      if (!backends_[r]->MakeCurrent().ok()) return;
      ncclResult_t s = nccl_->ncclCommInitRank(&comms[r], n, id, r);
      if (s == ncclSuccess) s = nccl_->ncclAllGather(gather_in[r], gathered[r], 2, ncclInt32, comms[r], Stream(r));
      if (s == ncclSuccess)
        s = nccl_->ncclReduceScatter(scatter_in[r], scattered[r], 2, ncclInt32, ncclSum, comms[r], Stream(r));
      if (s == ncclSuccess) s = nccl_->ncclBroadcast(bcast[r], bcast[r], 2, ncclInt64, 2, comms[r], Stream(r));
      if (s == ncclSuccess) s = nccl_->ncclAllReduce(narrow[r], narrow[r], 1, ncclBfloat16, ncclSum, comms[r], Stream(r));
      results[r] = s;
    });
  }
  for (std::thread& t : threads) t.join();
  for (ncclComm_t c : comms)
    if (c) comms_.push_back(c);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[r], ncclSuccess) << "rank " << r;
    EXPECT_EQ(Download<int32_t>(r, gathered[r], 2 * n), (std::vector<int32_t>{0, 100, 1, 101, 2, 102}));
    EXPECT_EQ(Download<int32_t>(r, scattered[r], 2), (std::vector<int32_t>{6, 6}));
    EXPECT_EQ(Download<int64_t>(r, bcast[r], 2), (std::vector<int64_t>{2000, -2}));
    EXPECT_EQ(Download<uint16_t>(r, narrow[r], 1)[0], one) << "rank-order bf16 sum";
  }
}

TEST_F(NcclDoubleTest, GroupedSendsAndReceivesAroundARing) {
  InitAll(4);
  std::vector<void*> send(4), recv(4);
  for (int r = 0; r < 4; ++r) {
    send[r] = Upload(r, std::vector<double>{r + 0.5, -r * 2.0});
    recv[r] = Upload(r, std::vector<double>(2));
  }
  ASSERT_EQ(nccl_->ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(nccl_->ncclRecv(recv[r], 2, ncclFloat64, (r + 3) % 4, comms_[r], Stream(r)), ncclSuccess);
    ASSERT_EQ(nccl_->ncclSend(send[r], 2, ncclFloat64, (r + 1) % 4, comms_[r], Stream(r)), ncclSuccess);
  }
  ASSERT_EQ(nccl_->ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    const int from = (r + 3) % 4;
    EXPECT_EQ(Download<double>(r, recv[r], 2), (std::vector<double>{from + 0.5, -from * 2.0})) << "rank " << r;
  }
}

TEST_F(NcclDoubleTest, ArgumentChecksNameTheProblem) {
  InitAll(2);
  void* a = Upload(0, std::vector<float>(4));
  ASSERT_TRUE(backends_[0]->MakeCurrent().ok());
  ncclResult_t s = nccl_->ncclBroadcast(a, a, 4, ncclFloat32, 5, comms_[0], Stream(0));
  EXPECT_EQ(s, ncclInvalidArgument);
  EXPECT_NE(nccl_->ResultText(s).find("root 5 outside the 2 ranks"), std::string::npos) << nccl_->ResultText(s);
  s = nccl_->ncclAllReduce(a, a, 4, static_cast<ncclDataType_t>(99), ncclSum, comms_[0], Stream(0));
  EXPECT_EQ(s, ncclInvalidArgument);
  EXPECT_NE(nccl_->ResultText(s).find("unknown data type 99"), std::string::npos) << nccl_->ResultText(s);
  s = nccl_->ncclGroupEnd();
  EXPECT_EQ(s, ncclInvalidUsage);
  EXPECT_NE(nccl_->ResultText(s).find("without ncclGroupStart"), std::string::npos);
  // Ranks that disagree on the count fail together, naming the rank.
  void* b = Upload(1, std::vector<float>(4));
  ASSERT_EQ(nccl_->ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(nccl_->ncclAllReduce(a, a, 4, ncclFloat32, ncclSum, comms_[0], Stream(0)), ncclSuccess);
  ASSERT_EQ(nccl_->ncclAllReduce(b, b, 3, ncclFloat32, ncclSum, comms_[1], Stream(1)), ncclSuccess);
  s = nccl_->ncclGroupEnd();
  EXPECT_EQ(s, ncclInvalidUsage);
  EXPECT_NE(nccl_->ResultText(s).find("rank 1's collective differs from rank 0's"), std::string::npos)
      << nccl_->ResultText(s);
}

TEST_F(NcclDoubleTest, ABufferOfAnotherDeviceIsAMemcheckFault) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The fault makes the shared context sticky-failed: in a child process.
  EXPECT_EXIT(
      {
        InitAll(2);
        void* on_device_1 = Upload(1, std::vector<float>(4));
        (void)backends_[0]->MakeCurrent();
        ncclResult_t s = nccl_->ncclAllReduce(on_device_1, on_device_1, 4, ncclFloat32, ncclSum, comms_[0], Stream(0));
        const std::string text = nccl_->ResultText(s);
        const bool ok = s == ncclUnhandledCudaError &&
                        text.find("invalid read of sendbuff by ncclAllReduce: the buffer is device 1's memory, the "
                                  "communicator's rank is on device 0") != std::string::npos;
        if (!ok) std::fprintf(stderr, "%s\n", text.c_str());
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(NcclDoubleTest, APeerThatNeverArrivesIsABoundedError) {
  setenv("KILN_EMU_NCCL_TIMEOUT", "1", 1);
  InitAll(2);
  unsetenv("KILN_EMU_NCCL_TIMEOUT");
  void* a = Upload(0, std::vector<float>(4, 1.0f));
  ASSERT_TRUE(backends_[0]->MakeCurrent().ok());
  const auto start = std::chrono::steady_clock::now();
  ncclResult_t s = nccl_->ncclAllReduce(a, a, 4, ncclFloat32, ncclSum, comms_[0], Stream(0));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s, ncclRemoteError);
  EXPECT_NE(nccl_->ResultText(s).find("ncclAllReduce on rank 0 of 2: ranks 1 did not arrive within 1"),
            std::string::npos)
      << nccl_->ResultText(s);
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 10);
  ncclResult_t async = ncclSuccess;
  ASSERT_EQ(nccl_->ncclCommGetAsyncError(comms_[0], &async), ncclSuccess);
  EXPECT_EQ(async, ncclRemoteError);
}

// 16 MiB of f32 summed over 4 devices: bus bytes 2 (n-1)/n x 16 MiB at
// 450 GB/s, plus a 4 us launch and 1 us per each of the 2 (n-1) ring steps.
TEST_F(NcclDoubleTest, ModeledTimeIsTheNvlinkBusBandwidth) {
  InitAll(4);
  constexpr size_t kCount = 4 << 20;
  std::vector<void*> data;
  for (int r = 0; r < 4; ++r) data.push_back(Upload(r, std::vector<float>(kCount, 1.0f)));
  ASSERT_TRUE(backends_[0]->MakeCurrent().ok());
  CUevent begin = nullptr, end = nullptr;
  ASSERT_EQ(Driver().cuEventCreate(&begin, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(Driver().cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  // Rank 0's stream starts from where the others' clocks are.
  ASSERT_EQ(nccl_->ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r)
    ASSERT_EQ(nccl_->ncclAllReduce(data[r], data[r], kCount, ncclFloat32, ncclSum, comms_[r], Stream(r)), ncclSuccess);
  ASSERT_EQ(nccl_->ncclGroupEnd(), ncclSuccess);
  ASSERT_EQ(Driver().cuEventRecord(begin, backends_[0]->stream(0)), CUDA_SUCCESS);
  ASSERT_EQ(nccl_->ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r)
    ASSERT_EQ(nccl_->ncclAllReduce(data[r], data[r], kCount, ncclFloat32, ncclSum, comms_[r], Stream(r)), ncclSuccess);
  ASSERT_EQ(nccl_->ncclGroupEnd(), ncclSuccess);
  ASSERT_EQ(Driver().cuEventRecord(end, backends_[0]->stream(0)), CUDA_SUCCESS);
  float ms = 0;
  ASSERT_EQ(Driver().cuEventElapsedTime(&ms, begin, end), CUDA_SUCCESS);
  const double expected_us = 2.0 * 3 / 4 * kCount * 4 / 450e9 * 1e6 + 4 + 6;
  EXPECT_NEAR(ms * 1000.0, expected_us, 0.05) << "modeled";
  EXPECT_EQ(Download<float>(0, data[0], 1)[0], 16.0f);  // 1 summed twice over 4 ranks
  Driver().cuEventDestroy(begin);
  Driver().cuEventDestroy(end);
}

TEST(NcclLibrary, AMissingLibraryIsOneLineNamingIt) {
  auto lib = kernels::NcclLibrary::Load({"libnccl_not_installed.so.2"});
  ASSERT_FALSE(lib.ok());
  const std::string message = lib.status().message();
  EXPECT_EQ(message.rfind("NCCL unavailable: cannot load libnccl_not_installed.so.2: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace kiln
