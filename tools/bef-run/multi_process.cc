// bef-run's multi-process mode (see multi_process.h).
#include "tools/bef-run/multi_process.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "runtime/collective_store.h"
#include "runtime/tcp_store.h"

namespace kiln::tools {
namespace {

constexpr char kFilePrefix[] = "file:";

bool IsAddress(const std::string& text) {
  unsigned char bytes[16];
  return inet_pton(AF_INET, text.c_str(), bytes) == 1 || inet_pton(AF_INET6, text.c_str(), bytes) == 1;
}

std::string ExitKey(int64_t process) { return "exit/" + std::to_string(process); }

}  // namespace

StatusOr<std::unique_ptr<ProcessGroup>> ProcessGroup::Join(const ProcessGroupOptions& options,
                                                           int64_t total_devices) {
  const int64_t p = options.num_processes;
  if (p < 1 || p > 1024) return Error("--num_processes must be between 1 and 1024, not " + std::to_string(p));
  if (options.process_id < 0 || options.process_id >= p)
    return Error("--process_id must be between 0 and " + std::to_string(p - 1) + ", not " +
                 std::to_string(options.process_id));
  if (options.local_devices < 1 || options.local_devices > 1024)
    return Error("--num_devices must be between 1 and 1024, not " + std::to_string(options.local_devices));
  if (p * options.local_devices != total_devices)
    return Error("the module runs on " + std::to_string(total_devices) + " devices, not --num_processes=" +
                 std::to_string(p) + " x --num_devices=" + std::to_string(options.local_devices));
  if (options.coordinator.empty()) return Error("--num_processes needs --coordinator=HOST:PORT or file:DIR");
  if (!(options.timeout_seconds > 0) || options.timeout_seconds > 86400)
    return Error("--collective_timeout must be between 0 and 86400 seconds");
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1000));

  std::unique_ptr<ProcessGroup> group(new ProcessGroup());
  group->process_id_ = options.process_id;
  group->num_processes_ = p;
  group->local_devices_ = options.local_devices;
  group->first_device_ = options.process_id * options.local_devices;
  runtime::TransportAddress transport;
  if (options.coordinator.rfind(kFilePrefix, 0) == 0) {
    const std::string dir = options.coordinator.substr(std::strlen(kFilePrefix));
    if (dir.empty()) return Error("--coordinator=file:DIR needs a directory");
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      return Error("--coordinator: cannot create " + dir + ": " + std::strerror(errno));
    try {
      group->store_ = std::make_shared<runtime::FileKeyValueStore>(dir, timeout);
    } catch (const std::exception& e) {
      return Error("--coordinator: cannot use " + dir + " as a file store: " + e.what());
    }
  } else {
    KILN_ASSIGN_OR_RETURN(runtime::HostPort address, runtime::ParseHostPort(options.coordinator));
    if (!runtime::IsLoopbackHost(address.host)) transport.hostname.clear();  // this host's name
    if (options.process_id == 0) {
      KILN_ASSIGN_OR_RETURN(group->served_, runtime::ServeTcpKeyValueStore(address, timeout));
      group->store_ = group->served_;
    } else {
      KILN_ASSIGN_OR_RETURN(group->store_, runtime::ConnectTcpKeyValueStore(address, timeout));
    }
  }
  if (!options.interface.empty()) {
    if (IsAddress(options.interface)) transport.hostname = options.interface;
    else transport.interface = options.interface;
  }
  group->rendezvous_ = runtime::CollectiveRendezvous::Shared(total_devices, timeout, group->store_, transport);
  return group;
}

void ProcessGroup::Finish() {
  if (finished_ || !store_) return;
  finished_ = true;
  try {
    store_->set(ExitKey(process_id_), {1});
  } catch (const std::exception&) {
    return;  // the store is gone: nothing left to wait for
  }
  if (!served_) return;
  const auto deadline = std::chrono::steady_clock::now() + served_->timeout();
  while (std::chrono::steady_clock::now() < deadline) {
    int64_t done = 0;
    for (int64_t i = 0; i < num_processes_; ++i) done += served_->Has(ExitKey(i));
    if (done == num_processes_) return;
    // Every other process connected and has gone since (exited or died).
    if (served_->clients_connected() >= num_processes_ - 1 &&
        served_->clients_closed() == served_->clients_connected())
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ProcessGroup::~ProcessGroup() { Finish(); }

}  // namespace kiln::tools
