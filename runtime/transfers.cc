// Device::Allocate, TransferToDevice and TransferToHost: the allocator and
// the explicit, asynchronous transfers of the runtime's HAL
// (docs/runtime_hal.md). The destination is allocated on the caller's
// thread, so it can be handed to Execute at once; the copy runs on the
// stream's worker in queue order and completes the transfer's Event.
#include <chrono>
#include <cstring>

#include "runtime/backend.h"
#include "runtime/stream.h"

namespace kiln::runtime {
namespace {

Status CheckTransfer(const Device& device, const Buffer& source, int stream, const char* what) {
  if (stream < 0 || stream >= device.num_streams()) {
    return Error(std::string(what) + ": no stream " + std::to_string(stream) + " (device has " +
                 std::to_string(device.num_streams()) + ")");
  }
  if (source.is_null()) return Error(std::string(what) + ": null source buffer");
  if (source.device() && source.device() != &device) {
    return Error(std::string(what) + ": the source lives on another device");
  }
  return Status::Ok();
}

// Enqueues `copy` on `stream`; the Event yields `destination` once it ran.
Device::Transfer Enqueue(Stream& queue, Buffer source, Buffer destination,
                         std::function<Status(const Buffer&, const Buffer&)> copy) {
  auto state = std::make_shared<Event::State>();
  queue.Enqueue([state, source = std::move(source), destination, copy = std::move(copy)]() mutable {
    auto begin = std::chrono::steady_clock::now();
    Status s = copy(source, destination);
    source = Buffer();  // released before the caller wakes
    if (!s.ok()) {
      state->Complete(s);
      return;
    }
    ExecutionResult result;
    result.outputs.push_back(destination);
    result.profile.total = std::chrono::steady_clock::now() - begin;
    state->Complete(std::move(result));
  });
  return Device::Transfer{std::move(destination), Event(state)};
}

}  // namespace

StatusOr<Buffer> Device::Allocate(const Shape& shape, MemorySpace space, int64_t min_bytes) const {
  if (space == MemorySpace::kHost) return Buffer::AllocateUninitialized(shape, min_bytes);
  if (!shape.IsArray()) return Error("Device::Allocate: not an array shape: " + shape.ToString());
  int64_t bytes = std::max(shape.ByteSize(), min_bytes);
  return backend_->Allocate(shape, bytes, space);
}

StatusOr<Device::Transfer> Device::TransferToDevice(const Buffer& source, int stream) const {
  KILN_RETURN_IF_ERROR(CheckTransfer(*this, source, stream, "TransferToDevice"));
  if (!source.host_accessible()) return Error("TransferToDevice: the source is already device memory");
  KILN_ASSIGN_OR_RETURN(Buffer destination, Allocate(source.shape(), MemorySpace::kDevice, source.size()));
  int64_t bytes = source.size();
  Backend* backend = backend_.get();
  return Enqueue(*streams_[static_cast<size_t>(stream)], source, std::move(destination),
                 [backend, bytes, stream](const Buffer& from, const Buffer& to) {
                   return backend->CopyToDevice(from, to, bytes, stream);
                 });
}

StatusOr<Device::Transfer> Device::TransferToHost(const Buffer& source, int stream) const {
  KILN_RETURN_IF_ERROR(CheckTransfer(*this, source, stream, "TransferToHost"));
  KILN_ASSIGN_OR_RETURN(Buffer destination, Buffer::AllocateUninitialized(source.shape(), source.size()));
  int64_t bytes = source.size();
  Backend* backend = backend_.get();
  return Enqueue(*streams_[static_cast<size_t>(stream)], source, std::move(destination),
                 [backend, bytes, stream](const Buffer& from, const Buffer& to) {
                   if (from.host_accessible()) {
                     std::memcpy(to.data(), from.data(), static_cast<size_t>(bytes));
                     return Status::Ok();
                   }
                   return backend->CopyToHost(from, to, bytes, stream);
                 });
}

}  // namespace kiln::runtime
