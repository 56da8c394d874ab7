// The in-memory and file key-value stores (see collective_store.h).
#include "runtime/collective_store.h"

#include <stdexcept>

namespace kiln::runtime {

void MemoryKeyValueStore::set(const std::string& key, const std::vector<char>& data) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = data;
  }
  changed_.notify_all();
}

std::vector<char> MemoryKeyValueStore::get(const std::string& key) {
  wait({key});
  std::lock_guard<std::mutex> lock(mutex_);
  return values_.at(key);
}

void MemoryKeyValueStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool arrived = changed_.wait_for(lock, timeout, [&] {
    for (const std::string& k : keys)
      if (!values_.count(k)) return false;
    return true;
  });
  if (!arrived) throw std::runtime_error("rendezvous timed out");
}

bool MemoryKeyValueStore::Has(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  return values_.count(key) > 0;
}

bool MemoryKeyValueStore::TryGet(const std::string& key, std::vector<char>* value) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return false;
  *value = it->second;
  return true;
}

// Gloo's FileStore with its protected lookup made public.
class FileKeyValueStore::Files : public gloo::rendezvous::FileStore {
 public:
  using FileStore::FileStore;
  bool Check(const std::string& key) { return check({key}); }
};

FileKeyValueStore::FileKeyValueStore(const std::string& directory, std::chrono::milliseconds timeout)
    : KeyValueStore(timeout), files_(std::make_unique<Files>(directory)) {}

FileKeyValueStore::~FileKeyValueStore() = default;

void FileKeyValueStore::set(const std::string& key, const std::vector<char>& data) { files_->set(key, data); }

std::vector<char> FileKeyValueStore::get(const std::string& key) {
  // FileStore::get waits Gloo's default 30 s for the key; ours first.
  wait({key});
  return files_->get(key);
}

void FileKeyValueStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  files_->wait(keys, timeout);
}

bool FileKeyValueStore::Has(const std::string& key) { return files_->Check(key); }

}  // namespace kiln::runtime
