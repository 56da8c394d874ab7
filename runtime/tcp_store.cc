// The TCP key-value store (see tcp_store.h).
//
// Requests: one byte (S set, G get, H has), a 4-byte key length and the
// key; a set adds a 4-byte value length and the value. Answers: S one byte;
// H one byte (found); G one byte (found) and, when found, a 4-byte length
// and the value. Lengths are little-endian as the hosts are.
#include "runtime/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <stdexcept>
#include <thread>

namespace kiln::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMaxKey = 1 << 16;
constexpr uint32_t kMaxValue = 1 << 26;
// How often the server's threads look whether the store is shutting down.
constexpr int kPollMs = 100;

std::string ErrnoText() { return std::strerror(errno); }

class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

void SetTimeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Whole reads and writes; false on a closed connection, an error or a
// socket timeout.
bool SendAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}
bool RecvAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}
bool SendBytes(int fd, const void* data, uint32_t n) { return SendAll(fd, &n, 4) && SendAll(fd, data, n); }
bool RecvBytes(int fd, std::vector<char>* out, uint32_t limit) {
  uint32_t n = 0;
  if (!RecvAll(fd, &n, 4) || n > limit) return false;
  out->resize(n);
  return RecvAll(fd, out->data(), n);
}

struct AddrInfoList {
  struct Free {
    void operator()(addrinfo* a) const { freeaddrinfo(a); }
  };
  std::unique_ptr<addrinfo, Free> list;
};

StatusOr<AddrInfoList> Resolve(const HostPort& address, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* list = nullptr;
  const int rc = getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &list);
  AddrInfoList out;
  out.list.reset(list);
  if (rc != 0) return Error("cannot resolve the coordinator " + address.ToString() + ": " + gai_strerror(rc));
  return out;
}

// Serves a MemoryKeyValueStore to connections on one listening socket, a
// thread per connection.
class TcpServingStore : public ServedKeyValueStore {
 public:
  TcpServingStore(Socket listener, std::chrono::milliseconds timeout)
      : ServedKeyValueStore(timeout), memory_(timeout), listener_(std::move(listener)) {
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~TcpServingStore() override {
    stop_ = true;
    acceptor_.join();
    for (std::thread& t : connections_) t.join();
  }
  void set(const std::string& key, const std::vector<char>& data) override { memory_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return memory_.get(key); }
  using KeyValueStore::wait;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    memory_.wait(keys, timeout);
  }
  bool Has(const std::string& key) override { return memory_.Has(key); }
  int64_t clients_connected() const override { return connected_; }
  int64_t clients_closed() const override { return closed_; }

 private:
  void Accept() {
    while (!stop_) {
      pollfd p{listener_.fd(), POLLIN, 0};
      if (::poll(&p, 1, kPollMs) <= 0) continue;
      const int fd = ::accept(listener_.fd(), nullptr, nullptr);
      if (fd < 0) continue;
      SetTimeouts(fd, timeout());
      ++connected_;
      connections_.emplace_back([this, fd] {
        Serve(Socket(fd));
        ++closed_;
      });
    }
  }
  // Answers one connection's requests until it closes, breaks the
  // protocol or the store shuts down.
  void Serve(Socket s) {
    const int fd = s.fd();
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, kPollMs);
      if (ready == 0) continue;
      char op = 0;
      std::vector<char> key, value;
      if (ready < 0 || !RecvAll(fd, &op, 1) || !RecvBytes(fd, &key, kMaxKey)) return;
      const std::string k(key.begin(), key.end());
      if (op == 'S') {
        if (!RecvBytes(fd, &value, kMaxValue)) return;
        memory_.set(k, value);
        const char ok = 1;
        if (!SendAll(fd, &ok, 1)) return;
      } else if (op == 'H') {
        const char found = memory_.Has(k) ? 1 : 0;
        if (!SendAll(fd, &found, 1)) return;
      } else if (op == 'G') {
        const char found = memory_.TryGet(k, &value) ? 1 : 0;
        if (!SendAll(fd, &found, 1)) return;
        if (found && !SendBytes(fd, value.data(), static_cast<uint32_t>(value.size()))) return;
      } else {
        return;
      }
    }
  }

  MemoryKeyValueStore memory_;
  Socket listener_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> connected_{0}, closed_{0};
  std::thread acceptor_;
  std::list<std::thread> connections_;  // touched by the acceptor alone until it is joined
};

// A connection to the serving process's store; one request at a time.
class TcpClientStore : public KeyValueStore {
 public:
  TcpClientStore(Socket s, std::string address, std::chrono::milliseconds timeout)
      : KeyValueStore(timeout), socket_(std::move(s)), address_(std::move(address)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    if (data.size() > kMaxValue) throw std::runtime_error("store value too large");
    std::lock_guard<std::mutex> lock(mutex_);
    const int fd = socket_.fd();
    char ok = 0;
    if (!SendAll(fd, "S", 1) || !SendBytes(fd, key.data(), static_cast<uint32_t>(key.size())) ||
        !SendBytes(fd, data.data(), static_cast<uint32_t>(data.size())) || !RecvAll(fd, &ok, 1))
      Lost();
  }
  std::vector<char> get(const std::string& key) override {
    wait({key});
    std::vector<char> value;
    if (!Fetch(key, &value)) throw std::runtime_error("store key '" + key + "' vanished");
    return value;
  }
  using KeyValueStore::wait;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    const auto deadline = Clock::now() + timeout;
    auto pause = std::chrono::milliseconds(1);
    for (const std::string& key : keys) {
      while (!Has(key)) {
        if (Clock::now() >= deadline) throw std::runtime_error("rendezvous timed out");
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(20));
      }
    }
  }
  bool Has(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int fd = socket_.fd();
    char found = 0;
    if (!SendAll(fd, "H", 1) || !SendBytes(fd, key.data(), static_cast<uint32_t>(key.size())) ||
        !RecvAll(fd, &found, 1))
      Lost();
    return found != 0;
  }

 private:
  bool Fetch(const std::string& key, std::vector<char>* value) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int fd = socket_.fd();
    char found = 0;
    if (!SendAll(fd, "G", 1) || !SendBytes(fd, key.data(), static_cast<uint32_t>(key.size())) ||
        !RecvAll(fd, &found, 1) || (found && !RecvBytes(fd, value, kMaxValue)))
      Lost();
    return found != 0;
  }
  [[noreturn]] void Lost() {
    throw std::runtime_error("lost the connection to the coordinator store at " + address_);
  }

  Socket socket_;
  std::string address_;
  std::mutex mutex_;
};

}  // namespace

std::string HostPort::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

StatusOr<HostPort> ParseHostPort(const std::string& text) {
  const size_t colon = text.rfind(':');
  auto bad = [&] { return Error("--coordinator '" + text + "' is not HOST:PORT or file:DIR"); };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return bad();
  HostPort out;
  out.host = text.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return bad();
  out.port = std::stoi(port);
  if (out.port < 1 || out.port > 65535) return bad();
  return out;
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

StatusOr<std::shared_ptr<ServedKeyValueStore>> ServeTcpKeyValueStore(const HostPort& address,
                                                                     std::chrono::milliseconds timeout) {
  KILN_ASSIGN_OR_RETURN(AddrInfoList addrs, Resolve(address, /*passive=*/true));
  std::string last = "no address";
  for (addrinfo* a = addrs.list.get(); a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd() < 0) {
      last = ErrnoText();
      continue;
    }
    const int one = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(s.fd(), 128) != 0) {
      last = ErrnoText();
      continue;
    }
    return std::shared_ptr<ServedKeyValueStore>(std::make_shared<TcpServingStore>(std::move(s), timeout));
  }
  return Error("cannot serve the coordinator store on " + address.ToString() + ": " + last);
}

StatusOr<std::shared_ptr<KeyValueStore>> ConnectTcpKeyValueStore(const HostPort& address,
                                                                 std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string last = "no address";
  while (true) {
    KILN_ASSIGN_OR_RETURN(AddrInfoList addrs, Resolve(address, /*passive=*/false));
    for (addrinfo* a = addrs.list.get(); a; a = a->ai_next) {
      Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (s.fd() < 0) {
        last = ErrnoText();
        continue;
      }
      SetTimeouts(s.fd(), timeout);
      if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0)
        return std::shared_ptr<KeyValueStore>(
            std::make_shared<TcpClientStore>(std::move(s), address.ToString(), timeout));
      last = ErrnoText();
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int64_t ms = timeout.count();
  return Error("the coordinator at " + address.ToString() + " (process 0) did not answer within " +
               (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms") + ": " + last);
}

}  // namespace kiln::runtime
