// Device-resident buffers end to end (docs/runtime_hal.md): weights
// uploaded once and used in place by every execution, outputs left on the
// device until the caller transfers them, donated state updated in place,
// ExecuteWithHostBuffers' timed transfers, and buffers of another device
// refused. Runs on the host and (KILN_E2E_DEVICE=cuda) on the emulated CUDA
// device, where the emulator's own transfer counters check that nothing
// crosses PCIe that should not. Expected values are computed here by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

#include "compiler/driver/compiler.h"
#include "runtime/host_execution.h"
#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/emulator_transfers.h"

namespace kiln::testing {
namespace {

using runtime::Buffer;

// The emulator's transfer counters on the emulated CUDA device.
std::optional<KilnEmuTransferCounters> EmulatorTransfers() {
  if (E2EDeviceKind() != runtime::DeviceKind::kCuda) return std::nullopt;
  return EmulatorTransferCounters();
}

// Bytes moved between two readings.
struct Moved {
  uint64_t to_device = 0, to_host = 0, on_device = 0;
};
Moved Between(const KilnEmuTransferCounters& a, const KilnEmuTransferCounters& b) {
  return {b.host_to_device_bytes - a.host_to_device_bytes, b.device_to_host_bytes - a.device_to_host_bytes,
          b.device_to_device_bytes - a.device_to_device_bytes};
}

// f32[64] or, for 64 * 64 values, f32[64,64].
Buffer F32(const std::vector<float>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  Shape shape = n == 64 * 64 ? Shape(ElementType::kF32, {64, 64}) : Shape(ElementType::kF32, {n});
  StatusOr<Buffer> b = Buffer::Allocate(shape);
  EXPECT_TRUE(b.ok());
  std::memcpy(b->data(), values.data(), values.size() * sizeof(float));
  return *b;
}

constexpr int64_t kN = 64;

// out[i] = sum_j w[i, j] * x[j]: small integers, exact in f32.
constexpr const char* kMatVec = R"(
HloModule matvec
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  w = f32[64,64] parameter(0)
  x = f32[64] parameter(1)
  bx = f32[64,64] broadcast(x), dimensions={1}
  m = f32[64,64] multiply(w, bx)
  zero = f32[] constant(0)
  ROOT r = f32[64] reduce(m, zero), dimensions={1}, to_apply=add
})";

// state += delta, the state donated.
constexpr const char* kStep = R"(
HloModule step, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY main {
  s = f32[64] parameter(0)
  d = f32[64] parameter(1)
  ROOT n = f32[64] add(s, d)
})";

std::vector<float> Weights() {
  std::vector<float> w(kN * kN);
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < kN; ++j) w[i * kN + j] = static_cast<float>((i + 2 * j) % 5) - 2;
  return w;
}

std::vector<float> Input(int seed) {
  std::vector<float> x(kN);
  for (int64_t j = 0; j < kN; ++j) x[j] = static_cast<float>((j * 7 + seed) % 9) - 4;
  return x;
}

std::vector<float> MatVec(const std::vector<float>& w, const std::vector<float>& x) {
  std::vector<float> out(kN, 0);
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < kN; ++j) out[i] += w[i * kN + j] * x[j];
  return out;
}

class ResidentBuffersE2ETest : public E2EDeviceTest {
 protected:
  std::unique_ptr<runtime::LoadedExecutable> Load(const std::string& text) {
    auto module = hlo::ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return nullptr;
    compiler::CompileOptions options;
    options.host = E2EDeviceKind() == runtime::DeviceKind::kHost;
    options.cuda = !options.host;
    auto artifact = compiler::CompileModule(**module, options);
    EXPECT_TRUE(artifact.ok()) << artifact.status().message();
    if (!artifact.ok()) return nullptr;
    auto exe = runtime::LoadedExecutable::Load(*device_, *artifact);
    EXPECT_TRUE(exe.ok()) << exe.status().message();
    return exe.ok() ? std::move(*exe) : nullptr;
  }

  Buffer Upload(const Buffer& host) {
    StatusOr<runtime::Device::Transfer> t = device_->TransferToDevice(host);
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (!t.ok()) return Buffer();
    StatusOr<runtime::ExecutionResult> done = t->done.Wait();
    EXPECT_TRUE(done.ok()) << done.status().message();
    return t->buffer;
  }

  std::vector<float> Download(const Buffer& b) {
    StatusOr<runtime::Device::Transfer> t = device_->TransferToHost(b);
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (!t.ok()) return {};
    StatusOr<runtime::ExecutionResult> done = t->done.Wait();
    EXPECT_TRUE(done.ok()) << done.status().message();
    if (!done.ok()) return {};
    std::vector<float> out(static_cast<size_t>(b.size()) / sizeof(float));
    std::memcpy(out.data(), t->buffer.data(), out.size() * sizeof(float));
    return out;
  }

  bool cuda() const { return E2EDeviceKind() == runtime::DeviceKind::kCuda; }
};

TEST_F(ResidentBuffersE2ETest, WeightsUploadedOnceServeEveryExecution) {
  auto exe = Load(kMatVec);
  ASSERT_NE(exe, nullptr);
  const std::vector<float> w = Weights();
  Buffer weights = Upload(F32(w));
  ASSERT_FALSE(weights.is_null());
  EXPECT_EQ(weights.memory_space(), runtime::MemorySpace::kDevice);
  EXPECT_EQ(weights.device(), device_.get());
  EXPECT_EQ(weights.host_accessible(), !cuda());
  for (int seed = 0; seed < 3; ++seed) {
    std::optional<KilnEmuTransferCounters> before = EmulatorTransfers();
    // The input from host memory, the weights from the device.
    StatusOr<runtime::ExecutionResult> r = exe->ExecuteSync({weights, F32(Input(seed))});
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::optional<KilnEmuTransferCounters> after = EmulatorTransfers();
    ASSERT_EQ(r->outputs.size(), 1u);
    EXPECT_EQ(r->outputs[0].host_accessible(), !cuda()) << "the output should stay where it was computed";
    if (before && after) {
      Moved m = Between(*before, *after);
      EXPECT_EQ(m.to_device, uint64_t{kN * 4}) << "only the input should be uploaded, not the weights";
      EXPECT_EQ(m.to_host, 0u) << "the output should stay on the device";
    }
    EXPECT_EQ(Download(r->outputs[0]), MatVec(w, Input(seed)));
  }
  // Both inputs already on the device: nothing crosses at all.
  Buffer x = Upload(F32(Input(7)));
  std::optional<KilnEmuTransferCounters> before = EmulatorTransfers();
  StatusOr<runtime::ExecutionResult> r = exe->ExecuteSync({weights, x});
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::optional<KilnEmuTransferCounters> after = EmulatorTransfers();
  if (before && after) {
    Moved m = Between(*before, *after);
    EXPECT_EQ(m.to_device + m.to_host + m.on_device, 0u) << "arguments on the device are used in place";
  }
  EXPECT_EQ(Download(r->outputs[0]), MatVec(w, Input(7)));
  EXPECT_EQ(Download(weights), w) << "a read-only argument keeps its value";
}

TEST_F(ResidentBuffersE2ETest, DonatedStateIsUpdatedInPlaceOnTheDevice) {
  auto exe = Load(kStep);
  ASSERT_NE(exe, nullptr);
  std::vector<float> s0(kN), d(kN);
  for (int64_t i = 0; i < kN; ++i) {
    s0[i] = static_cast<float>(i);
    d[i] = static_cast<float>(i % 4) + 0.5f;
  }
  Buffer state = Upload(F32(s0));
  Buffer delta = Upload(F32(d));
  runtime::ExecuteOptions options;
  options.donate = {true, false};
  for (int step = 0; step < 3; ++step) {
    std::optional<KilnEmuTransferCounters> before = EmulatorTransfers();
    StatusOr<runtime::ExecutionResult> r = exe->ExecuteSync({state, delta}, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::optional<KilnEmuTransferCounters> after = EmulatorTransfers();
    ASSERT_EQ(r->outputs.size(), 1u);
    EXPECT_TRUE(r->outputs[0].SharesMemoryWith(state)) << "the donated state should become the output";
    if (before && after) {
      Moved m = Between(*before, *after);
      EXPECT_EQ(m.to_device + m.to_host + m.on_device, 0u) << "an update in place copies nothing";
    }
    state = r->outputs[0];
  }
  std::vector<float> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = s0[i] + 3 * d[i];
  EXPECT_EQ(Download(state), want);
}

TEST_F(ResidentBuffersE2ETest, UndonatedDeviceArgumentKeepsItsValue) {
  std::string text = kStep;
  text.replace(text.find("must-alias"), 10, "may-alias");
  auto exe = Load(text);
  ASSERT_NE(exe, nullptr);
  std::vector<float> s0(kN, 2.0f), d(kN, 0.25f);
  Buffer state = Upload(F32(s0));
  StatusOr<runtime::ExecutionResult> r = exe->ExecuteSync({state, Upload(F32(d))});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->outputs[0].SharesMemoryWith(state));
  EXPECT_EQ(Download(r->outputs[0]), std::vector<float>(kN, 2.25f));
  EXPECT_EQ(Download(state), s0) << "an undonated argument the program writes is copied first";
}

TEST_F(ResidentBuffersE2ETest, HostHelperUploadsExecutesAndDownloads) {
  auto exe = Load(kMatVec);
  ASSERT_NE(exe, nullptr);
  const std::vector<float> w = Weights();
  runtime::HostExecutionTimes times;
  std::optional<KilnEmuTransferCounters> before = EmulatorTransfers();
  StatusOr<runtime::ExecutionResult> r = runtime::ExecuteWithHostBuffers(*exe, {F32(w), F32(Input(3))}, {}, &times);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::optional<KilnEmuTransferCounters> after = EmulatorTransfers();
  ASSERT_EQ(r->outputs.size(), 1u);
  ASSERT_TRUE(r->outputs[0].host_accessible());
  std::vector<float> got(kN);
  std::memcpy(got.data(), r->outputs[0].data(), kN * sizeof(float));
  EXPECT_EQ(got, MatVec(w, Input(3)));
  const uint64_t in_bytes = (kN * kN + kN) * 4, out_bytes = kN * 4;
  EXPECT_EQ(times.bytes_uploaded, cuda() ? static_cast<int64_t>(in_bytes) : 0);
  EXPECT_EQ(times.bytes_downloaded, cuda() ? static_cast<int64_t>(out_bytes) : 0);
  EXPECT_GT(times.execute.count(), 0);
  if (before && after) {
    Moved m = Between(*before, *after);
    EXPECT_EQ(m.to_device, in_bytes);
    EXPECT_EQ(m.to_host, out_bytes);
  }
}

TEST_F(ResidentBuffersE2ETest, HostOutputsOptionDownloadsBeforeTheEvent) {
  auto exe = Load(kMatVec);
  ASSERT_NE(exe, nullptr);
  runtime::ExecuteOptions options;
  options.host_outputs = true;
  StatusOr<runtime::ExecutionResult> r = exe->ExecuteSync({Upload(F32(Weights())), F32(Input(1))}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->outputs[0].host_accessible());
  std::vector<float> got(kN);
  std::memcpy(got.data(), r->outputs[0].data(), kN * sizeof(float));
  EXPECT_EQ(got, MatVec(Weights(), Input(1)));
}

TEST_F(ResidentBuffersE2ETest, BufferOfAnotherDeviceIsAOneLineError) {
  auto exe = Load(kMatVec);
  ASSERT_NE(exe, nullptr);
  auto other = runtime::Device::Create(E2EDeviceKind());
  ASSERT_TRUE(other.ok()) << other.status().message();
  StatusOr<runtime::Device::Transfer> t = (*other)->TransferToDevice(F32(Weights()));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(t->done.Wait().ok());
  StatusOr<runtime::Event> e = exe->Execute({t->buffer, F32(Input(0))});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "Execute: argument 0 (parameter 0) lives on another device");
  // A transfer of it through this device is refused the same way.
  StatusOr<runtime::Device::Transfer> back = device_->TransferToHost(t->buffer);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(), "TransferToHost: the source lives on another device");
}

}  // namespace
}  // namespace kiln::testing
