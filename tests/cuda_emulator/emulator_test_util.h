// Helpers for the CUDA emulator's tests: a fixture that owns the emulated
// device memory and a two-thread pool, loads PTX text, moves data in and out
// of device memory and launches kernels with cuLaunchKernel-style parameter
// arrays; plus an "elementwise" kernel builder so that one-instruction tests
// read as a table of (inputs, hand-computed expected result).
//
// Nothing here computes an expected value: the tests write those by hand or
// compute them on the host.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "cuda_emulator/exec/device_memory.h"
#include "cuda_emulator/exec/launch.h"
#include "cuda_emulator/exec/thread_pool.h"
#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu::testing {

// The module header every hand-written kernel starts with.
inline constexpr std::string_view kPtxHeader =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n";

inline uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
inline uint64_t Bits(double d) { return std::bit_cast<uint64_t>(d); }
inline float F32(uint32_t bits) { return std::bit_cast<float>(bits); }
inline double F64(uint64_t bits) { return std::bit_cast<double>(bits); }

// The PTX type whose registers hold a C++ value in the elementwise kernels.
// Integers and halves use bit-size registers, which PTX lets every
// instruction of the same width use.
template <typename T>
constexpr std::string_view RegisterType() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, double>) return "f64";
  else if constexpr (sizeof(T) == 2) return "b16";
  else if constexpr (sizeof(T) == 4) return "b32";
  else {
    static_assert(sizeof(T) == 8, "elementwise values are 2, 4 or 8 bytes");
    return "b64";
  }
}

// PTX for `.visible .entry elementwise(.param .u64 in, .param .u64 out,
// .param .u32 n)`. Thread i (< n) loads a, b, c from in[3i], in[3i+1],
// in[3i+2] into registers %a, %b, %c of `in_type`, runs `body`, which leaves
// its result in %d (of `out_type`), and stores %d to out[i]. Bodies may use
// the scratch registers %p1..%p3 (pred), %t0..%t7 (b32), %td0..%td3 (b64),
// %tf0..%tf3 (f32), %tfd0..%tfd3 (f64) and %th0..%th3 (b16).
inline std::string ElementwisePtx(std::string_view in_type, int in_bytes,
                                  std::string_view out_type, int out_bytes,
                                  std::string_view body) {
  std::string in_t(in_type), out_t(out_type);
  std::string s(kPtxHeader);
  s += ".visible .entry elementwise(.param .u64 in, .param .u64 out, .param .u32 n)\n{\n";
  s += "  .reg .pred %p<4>;\n  .reg .b32 %t<8>;\n  .reg .b64 %td<4>;\n";
  s += "  .reg .f32 %tf<4>;\n  .reg .f64 %tfd<4>;\n  .reg .b16 %th<4>;\n";
  s += "  .reg .b32 %i<4>;\n  .reg .b64 %addr<6>;\n  .reg .pred %done;\n";
  s += "  .reg ." + in_t + " %a, %b, %c;\n  .reg ." + out_t + " %d;\n";
  s += "  mov.u32 %i0, %ctaid.x;\n  mov.u32 %i1, %ntid.x;\n  mov.u32 %i2, %tid.x;\n";
  s += "  mad.lo.s32 %i3, %i0, %i1, %i2;\n";
  s += "  ld.param.u32 %i0, [n];\n  setp.ge.u32 %done, %i3, %i0;\n  @%done bra $done;\n";
  s += "  ld.param.u64 %addr0, [in];\n  ld.param.u64 %addr1, [out];\n";
  s += "  cvta.to.global.u64 %addr0, %addr0;\n  cvta.to.global.u64 %addr1, %addr1;\n";
  s += "  mul.wide.u32 %addr2, %i3, " + std::to_string(3 * in_bytes) + ";\n";
  s += "  add.s64 %addr3, %addr0, %addr2;\n";
  s += "  ld.global." + in_t + " %a, [%addr3];\n";
  s += "  ld.global." + in_t + " %b, [%addr3+" + std::to_string(in_bytes) + "];\n";
  s += "  ld.global." + in_t + " %c, [%addr3+" + std::to_string(2 * in_bytes) + "];\n";
  s += "  mul.wide.u32 %addr4, %i3, " + std::to_string(out_bytes) + ";\n";
  s += "  add.s64 %addr5, %addr1, %addr4;\n";
  s += "  // body\n";
  s += std::string(body) + "\n";
  s += "  st.global." + out_t + " [%addr5], %d;\n";
  s += "$done:\n  ret;\n}\n";
  return s;
}

class EmulatorTest : public ::testing::Test {
 protected:
  EmulatorTest() : pool_(2) {}

  DeviceMemory& memory() { return memory_; }

  // LoadPtx of kPtxHeader + `body`, asserting that it loads.
  void Load(std::string_view body) {
    Status s = LoadPtx(std::string(kPtxHeader) + std::string(body));
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // Parses and decodes `ptx`; its module variables get device memory
  // holding their initializers. The module stays loaded for the test.
  Status LoadPtx(std::string_view ptx) {
    ptx::GlobalPlacer placer = [this](const ptx::GlobalVariable& v) -> StatusOr<uint64_t> {
      uint64_t size = std::max<uint64_t>(v.initializer.size(), 1);
      KILN_ASSIGN_OR_RETURN(uint64_t address, memory_.Allocate(size, MemoryKind::kDevice));
      if (!v.initializer.empty())
        KILN_RETURN_IF_ERROR(
            memory_.CopyToDevice(address, v.initializer.data(), v.initializer.size()));
      return address;
    };
    StatusOr<std::unique_ptr<ptx::Module>> m = ptx::LoadModule(ptx, placer);
    if (!m.ok()) return m.status();
    modules_.push_back(std::move(*m));
    return Status::Ok();
  }

  // The kernel `name` of the most recently loaded module that has one.
  const ptx::Kernel* FindKernel(std::string_view name) const {
    for (auto it = modules_.rbegin(); it != modules_.rend(); ++it)
      if (const ptx::Kernel* k = (*it)->FindKernel(name)) return k;
    return nullptr;
  }

  // The device address of module variable `name` (0 when there is none).
  uint64_t GlobalAddress(std::string_view name) const {
    for (auto it = modules_.rbegin(); it != modules_.rend(); ++it)
      for (const auto& g : (*it)->globals)
        if (g->name == name) return g->address;
    return 0;
  }

  // `bytes` of uninitialized device memory.
  uint64_t Alloc(uint64_t bytes) {
    StatusOr<uint64_t> a = memory_.Allocate(bytes, MemoryKind::kDevice);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return a.ok() ? *a : 0;
  }

  template <typename T>
  uint64_t Upload(const std::vector<T>& values) {
    uint64_t bytes = std::max<uint64_t>(values.size() * sizeof(T), 1);
    uint64_t address = Alloc(bytes);
    if (address == 0 || values.empty()) return address;
    Status s = memory_.CopyToDevice(address, values.data(), values.size() * sizeof(T));
    EXPECT_TRUE(s.ok()) << s.message();
    return address;
  }

  template <typename T>
  std::vector<T> Download(uint64_t address, size_t count) {
    std::vector<T> out(count);
    if (count == 0) return out;
    Status s = memory_.CopyFromDevice(out.data(), address, count * sizeof(T));
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  }

  // Launches `kernel` with `args` as its parameters, in order. Each
  // argument's size must match the PTX signature's (a mismatch is a test
  // bug and an error).
  template <typename... Args>
  StatusOr<KilnEmuCounters> RunKernel(const ptx::Kernel& kernel, Dim3 grid, Dim3 block,
                                      uint32_t dynamic_shared, const Args&... args) {
    constexpr size_t kCount = sizeof...(Args);
    if (kernel.params.size() != kCount)
      return Error("test passes " + std::to_string(kCount) + " arguments to '" + kernel.name +
                   "', which has " + std::to_string(kernel.params.size()));
    const size_t sizes[kCount + 1] = {sizeof(Args)..., 0};
    for (size_t i = 0; i < kCount; ++i)
      if (kernel.params[i].size != sizes[i])
        return Error("test passes " + std::to_string(sizes[i]) + " bytes for parameter '" +
                     kernel.params[i].name + "' of " + std::to_string(kernel.params[i].size));
    void* params[kCount + 1] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
    LaunchConfig config;
    config.grid = grid;
    config.block = block;
    config.dynamic_shared_bytes = dynamic_shared;
    config.params = params;
    config.sample_blocks = sample_blocks_;
    return Launch(kernel, config, memory_, checks_, pool_);
  }

  template <typename... Args>
  StatusOr<KilnEmuCounters> Run(std::string_view kernel_name, Dim3 grid, Dim3 block,
                                uint32_t dynamic_shared, const Args&... args) {
    const ptx::Kernel* k = FindKernel(kernel_name);
    if (!k) return Error("no kernel '" + std::string(kernel_name) + "' was loaded");
    return RunKernel(*k, grid, block, dynamic_shared, args...);
  }

  // Runs `body` (see ElementwisePtx) over `rows` of (a, b, c) and returns
  // %d of each row; an empty vector (and a test failure) when the PTX does
  // not load or the launch fails.
  template <typename TOut, typename TIn>
  std::vector<TOut> Apply(std::string_view body, const std::vector<std::array<TIn, 3>>& rows) {
    return ApplyAs<TOut, TIn>(RegisterType<TIn>(), RegisterType<TOut>(), body, rows);
  }
  // As Apply, with the register types spelled out (e.g. "f16x2" operands
  // held in "b32").
  template <typename TOut, typename TIn>
  std::vector<TOut> ApplyAs(std::string_view in_type, std::string_view out_type,
                            std::string_view body, const std::vector<std::array<TIn, 3>>& rows) {
    std::string text = ElementwisePtx(in_type, sizeof(TIn), out_type, sizeof(TOut), body);
    Status loaded = LoadPtx(text);
    if (!loaded.ok()) {
      ADD_FAILURE() << "elementwise kernel failed to load: " << loaded.message() << "\n" << text;
      return {};
    }
    std::vector<TIn> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    uint64_t in = Upload(flat);
    uint64_t out = Alloc(std::max<size_t>(rows.size(), 1) * sizeof(TOut));
    uint32_t n = static_cast<uint32_t>(rows.size());
    uint32_t block = 128;
    StatusOr<KilnEmuCounters> r =
        Run("elementwise", Dim3{(n + block - 1) / block}, Dim3{block}, 0, in, out, n);
    if (!r.ok()) {
      ADD_FAILURE() << "elementwise kernel failed: " << r.status().message() << "\n" << body;
      return {};
    }
    return Download<TOut>(out, rows.size());
  }

  CheckOptions checks_;
  uint32_t sample_blocks_ = 0;  // LaunchConfig::sample_blocks of every launch

 private:
  DeviceMemory memory_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<ptx::Module>> modules_;
};

// Distance in units in the last place between two finite floats of the same
// sign (their bit patterns are ordered like their values); 2^32 for NaNs.
inline int64_t UlpDistance(float a, float b) {
  if (a != a || b != b) return int64_t{1} << 32;
  auto ordered = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

inline bool IsNaN16(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }
inline bool IsNaNBf16(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0; }
inline bool IsNaN32(uint32_t f) { return (f & 0x7F800000u) == 0x7F800000u && (f & 0x007FFFFFu) != 0; }
inline bool IsNaN64(uint64_t d) {
  return (d & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (d & 0x000FFFFFFFFFFFFFull) != 0;
}

// Compares result bit patterns with expected ones; an expected NaN pattern
// accepts any NaN (PTX leaves most NaN payloads unspecified).
template <typename T, typename IsNaN>
void ExpectSameBits(const std::vector<T>& got, const std::vector<T>& want, IsNaN is_nan,
                    std::string_view what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    if (is_nan(want[i])) {
      EXPECT_TRUE(is_nan(got[i])) << what << " row " << i << ": got 0x" << std::hex
                                  << uint64_t{got[i]} << ", want a NaN";
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " row " << i << ": got 0x" << std::hex
                                 << uint64_t{got[i]} << ", want 0x" << uint64_t{want[i]};
    }
  }
}

// Asserts that a Run(...) succeeded, printing the emulator's error if not.
#define ASSERT_RUN(expr)                               \
  do {                                                 \
    StatusOr<KilnEmuCounters> run_ = (expr);           \
    ASSERT_TRUE(run_.ok()) << run_.status().message(); \
  } while (0)

}  // namespace kiln::emu::testing
