// Helpers for the runtime tests: build small artifacts by hand, make and
// read host Buffers.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/sample_artifact.h"

namespace kiln::runtime::testing {

namespace th = ::kiln::thunks;

inline th::BufferSlice S(int32_t allocation, int64_t offset, int64_t size) {
  return th::BufferSlice{allocation, offset, size};
}

inline th::Thunk T(std::string name, th::ThunkBody body) {
  th::Thunk t;
  t.info.profile_name = std::move(name);
  t.body = std::move(body);
  return t;
}

inline th::Allocation ParamAlloc(int64_t size, int64_t number, ShapeIndex index = {}) {
  th::Allocation a;
  a.size = size;
  a.parameter = th::ParameterRef{number, std::move(index)};
  return a;
}
inline th::Allocation OutputAlloc(int64_t size, ShapeIndex index) {
  th::Allocation a;
  a.size = size;
  a.output = std::move(index);
  return a;
}
inline th::Allocation TempAlloc(int64_t size) {
  th::Allocation a;
  a.size = size;
  return a;
}

using ::kiln::testing::HostArtifact;

// Serializes and reloads, as a runtime reading a .bef file would.
inline bef::Artifact RoundTrip(const bef::Artifact& a) {
  StatusOr<std::vector<uint8_t>> bytes = bef::SerializeArtifact(a);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  if (!bytes.ok()) return a;
  StatusOr<bef::Artifact> loaded = bef::LoadArtifact(*bytes);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? std::move(*loaded) : a;
}

template <typename T>
Buffer MakeBuffer(ElementType type, std::vector<int64_t> dims, const std::vector<T>& values) {
  StatusOr<Buffer> b = Buffer::Allocate(Shape(type, std::move(dims)));
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(b->size(), static_cast<int64_t>(values.size() * sizeof(T)));
  std::memcpy(b->data(), values.data(), values.size() * sizeof(T));
  return *b;
}

template <typename T>
std::vector<T> Read(const Buffer& b) {
  std::vector<T> out(static_cast<size_t>(b.size()) / sizeof(T));
  if (!b.host_accessible() && !b.device()) {
    ADD_FAILURE() << "a device buffer without a device";
    return out;
  }
  if (!b.host_accessible()) {  // an output left on the device: download it
    StatusOr<Device::Transfer> t = b.device()->TransferToHost(b);
    StatusOr<ExecutionResult> done = t.ok() ? t->done.Wait() : StatusOr<ExecutionResult>(t.status());
    EXPECT_TRUE(done.ok()) << done.status().message();
    if (!done.ok()) return out;
    std::memcpy(out.data(), t->buffer.data(), out.size() * sizeof(T));
    return out;
  }
  std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
  return out;
}

inline std::unique_ptr<Device> HostDevice(int streams = 1) {
  StatusOr<std::unique_ptr<Device>> d = Device::Create(DeviceKind::kHost, streams);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? std::move(*d) : nullptr;
}

inline std::unique_ptr<LoadedExecutable> MustLoad(Device& device, const bef::Artifact& a) {
  StatusOr<std::unique_ptr<LoadedExecutable>> e = LoadedExecutable::Load(device, a);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? std::move(*e) : nullptr;
}

}  // namespace kiln::runtime::testing
