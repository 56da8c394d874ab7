// Device, Stream and Event: the execution machinery shared by every
// backend; see runtime.h. Device::Create fails for kCuda with
// "CUDA backend not built/available: <what is missing>" on one line.
#include "runtime/backend.h"
#include "runtime/stream.h"

namespace kiln::runtime {

std::string_view DeviceKindName(DeviceKind kind) {
  return kind == DeviceKind::kHost ? "host" : "cuda";
}

// ---- Stream ----------------------------------------------------------------

Stream::Stream() : worker_([this] { Loop(); }) {}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void Stream::Enqueue(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_one();
}

bool Stream::TryRunHere(const std::function<void()>& work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ || !queue_.empty()) return false;
    running_ = true;
  }
  work();
  bool queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
    queued = !queue_.empty();
  }
  // Work enqueued while this ran waits for the worker.
  if (queued) cv_.notify_one();
  return true;
}

void Stream::Loop() {
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return (stopping_ && !running_) || (!queue_.empty() && !running_); });
      // Pending work still runs on shutdown so no Event is left unsignalled.
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    work();
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
  }
}

// ---- Event -------------------------------------------------------------------

StatusOr<ExecutionResult> Event::Wait() const {
  if (!state_) return Error("Event::Wait on a null event");
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [this] { return state_->result.has_value(); });
  return *state_->result;
}

bool Event::IsReady() const {
  if (!state_) return false;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->result.has_value();
}

// ---- Device ------------------------------------------------------------------

Device::Device(DeviceKind kind, std::unique_ptr<Backend> backend, int num_streams)
    : kind_(kind), backend_(std::move(backend)) {
  backend_->BindOwner(this);
  for (int i = 0; i < num_streams; ++i) streams_.push_back(std::make_unique<Stream>());
}

// streams_ is declared after backend_, so the workers are drained and joined
// before the backend (CUDA context, streams) goes away.
Device::~Device() = default;

std::string Device::description() const {
  return std::string(DeviceKindName(kind_)) + ": " + backend_->Description();
}

namespace {
Status CheckStreamCount(int num_streams) {
  if (num_streams < 1 || num_streams > 64)
    return Error("Device::Create: num_streams must be in [1, 64], got " + std::to_string(num_streams));
  return Status::Ok();
}
}  // namespace

StatusOr<std::unique_ptr<Device>> Device::CreateCuda(int ordinal, int num_streams) {
  KILN_RETURN_IF_ERROR(CheckStreamCount(num_streams));
  StatusOr<std::unique_ptr<Backend>> cuda = CreateCudaBackend(num_streams, ordinal);
  if (!cuda.ok()) return cuda.status().WithContext("CUDA backend not built/available");
  return std::unique_ptr<Device>(new Device(DeviceKind::kCuda, std::move(*cuda), num_streams));
}

StatusOr<std::unique_ptr<Device>> Device::Create(DeviceKind kind, int num_streams) {
  KILN_RETURN_IF_ERROR(CheckStreamCount(num_streams));
  std::unique_ptr<Backend> backend;
  if (kind == DeviceKind::kCuda) {
    // One line naming what is missing: no CUDA headers at build time, no
    // driver, no device.
    StatusOr<std::unique_ptr<Backend>> cuda = CreateCudaBackend(num_streams);
    if (!cuda.ok()) return cuda.status().WithContext("CUDA backend not built/available");
    backend = std::move(*cuda);
  } else {
    backend = CreateHostBackend();
  }
  return std::unique_ptr<Device>(new Device(kind, std::move(backend), num_streams));
}

}  // namespace kiln::runtime
