// CompileCache (compiler/cache/compile_cache.h) on its own: hits, misses,
// damaged entries, LRU eviction, the default directory and concurrent use
// from threads and processes. Every test uses its own temporary directory.
#include "compiler/cache/compile_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "compiler/cache/cache_entry.h"
#include "tests/cache/cache_test_util.h"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> Bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

using testing::ReadFile;
using testing::WriteFile;

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TestCacheDir();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<CompileCache> Open(int64_t max_bytes = kDefaultCacheMaxBytes) {
    StatusOr<std::unique_ptr<CompileCache>> cache = CompileCache::Open(dir_, max_bytes);
    EXPECT_TRUE(cache.ok()) << cache.status().message();
    return cache.ok() ? std::move(*cache) : nullptr;
  }

  int CountEntries() {
    int n = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) n += e.path().extension() == ".kce";
    return n;
  }

  std::string dir_;
};

TEST_F(CompileCacheTest, StoredPayloadComesBackUnderItsKeyOnly) {
  std::unique_ptr<CompileCache> cache = Open();
  EXPECT_FALSE(cache->Lookup("k1").has_value());
  ASSERT_TRUE(cache->Store("k1", Bytes("payload one")).ok());
  ASSERT_TRUE(cache->Store("k2", Bytes("")).ok());
  EXPECT_EQ(cache->Lookup("k1"), Bytes("payload one"));
  EXPECT_EQ(cache->Lookup("k2"), Bytes(""));
  EXPECT_FALSE(cache->Lookup("k3").has_value());
  EXPECT_FALSE(cache->Lookup("k1 ").has_value());
  // A store replaces the entry; a second process (another instance) sees it.
  ASSERT_TRUE(cache->Store("k1", Bytes("payload two")).ok());
  EXPECT_EQ(Open()->Lookup("k1"), Bytes("payload two"));
  EXPECT_EQ(CountEntries(), 2);
}

// Every kind of damage turns the entry into a miss and removes it; the next
// store repairs it.
TEST_F(CompileCacheTest, DamagedEntriesAreMissesAndGetRepaired) {
  std::unique_ptr<CompileCache> cache = Open();
  const std::vector<uint8_t> payload = Bytes("the kernel object code, 40 bytes long...");
  struct Damage {
    const char* what;
    // entry, payload size
    void (*apply)(std::vector<uint8_t>&, size_t);
  };
  const Damage damages[] = {
      {"payload byte flipped", [](std::vector<uint8_t>& e, size_t) { e[e.size() - 3] ^= 0x10; }},
      {"truncated by one byte", [](std::vector<uint8_t>& e, size_t) { e.pop_back(); }},
      {"truncated into the header", [](std::vector<uint8_t>& e, size_t) { e.resize(20); }},
      {"empty file", [](std::vector<uint8_t>& e, size_t) { e.clear(); }},
      {"trailing garbage", [](std::vector<uint8_t>& e, size_t) { e.push_back(0); }},
      {"magic changed", [](std::vector<uint8_t>& e, size_t) { e[0] = 'X'; }},
      {"other format version", [](std::vector<uint8_t>& e, size_t) { e[8] += 1; }},
      {"checksum field changed", [](std::vector<uint8_t>& e, size_t) { e[24] ^= 1; }},
      {"key byte changed", [](std::vector<uint8_t>& e, size_t n) { e[e.size() - n - 1] ^= 1; }},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    ASSERT_TRUE(cache->Store("key", payload).ok());
    const std::string path = cache->EntryPath("key");
    std::vector<uint8_t> entry = ReadFile(path);
    ASSERT_GT(entry.size(), 32 + 3 + payload.size());  // header, build prefix and key, payload
    d.apply(entry, payload.size());
    WriteFile(path, entry);
    EXPECT_FALSE(cache->Lookup("key").has_value());
    EXPECT_FALSE(fs::exists(path));
    ASSERT_TRUE(cache->Store("key", payload).ok());
    EXPECT_EQ(cache->Lookup("key"), payload);
  }
}

TEST_F(CompileCacheTest, EntryFormatRoundTripsAndChecksEverything) {
  const std::vector<uint8_t> payload = Bytes("abc");
  std::vector<uint8_t> entry = EncodeCacheEntry("key", payload);
  ASSERT_EQ(entry.size(), 32u + 3 + 3);  // header, key, payload
  EXPECT_EQ(DecodeCacheEntry(entry, "key"), payload);
  EXPECT_FALSE(DecodeCacheEntry(entry, "kez").has_value());
  EXPECT_FALSE(DecodeCacheEntry(entry, "ke").has_value());
  EXPECT_FALSE(DecodeCacheEntry(std::span<const uint8_t>(entry).first(37), "key").has_value());
}

// Under a bound of three and a half entries, the fourth store evicts the
// least recently used one (b: a was looked up after c was stored).
TEST_F(CompileCacheTest, EvictsLeastRecentlyUsedBeyondTheBound) {
  const std::vector<uint8_t> payload(1000, 7);
  std::unique_ptr<CompileCache> cache = Open();
  ASSERT_TRUE(cache->Store("p", payload).ok());  // every key is one byte: entries of one size
  const int64_t entry_bytes = static_cast<int64_t>(fs::file_size(cache->EntryPath("p")));
  fs::remove(cache->EntryPath("p"));
  cache = Open(entry_bytes * 7 / 2);  // room for three and a half
  ASSERT_TRUE(cache->Store("a", payload).ok());
  ASSERT_TRUE(cache->Store("b", payload).ok());
  ASSERT_TRUE(cache->Store("c", payload).ok());
  ASSERT_TRUE(cache->Lookup("a").has_value());
  ASSERT_TRUE(cache->Store("d", payload).ok());
  EXPECT_FALSE(fs::exists(cache->EntryPath("b")));
  EXPECT_TRUE(cache->Lookup("a").has_value());
  EXPECT_TRUE(cache->Lookup("c").has_value());
  EXPECT_TRUE(cache->Lookup("d").has_value());
  EXPECT_EQ(CountEntries(), 3);
  // An entry bigger than the whole bound is not stored at all.
  ASSERT_TRUE(cache->Store("huge", std::vector<uint8_t>(entry_bytes * 4, 1)).ok());
  EXPECT_FALSE(cache->Lookup("huge").has_value());
  EXPECT_EQ(CountEntries(), 3);
  // Reopening with a smaller bound evicts at once, oldest first: a, then c
  // (they were looked up in the order a, c, d).
  cache = Open(entry_bytes * 3 / 2);
  EXPECT_EQ(CountEntries(), 1);
  EXPECT_TRUE(cache->Lookup("d").has_value());
}

TEST_F(CompileCacheTest, DefaultDirectoryFollowsXdgThenHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(DefaultCacheDir(), "/x/cache/kiln");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultCacheDir(), "/h/.cache/kiln");
  unsetenv("HOME");
  EXPECT_EQ(DefaultCacheDir(), "");
  if (xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (home) setenv("HOME", saved_home.c_str(), 1);
}

TEST_F(CompileCacheTest, UnusableDirectoryOrBoundIsAOneLineError) {
  fs::create_directories(dir_);
  WriteFile(dir_ + "/file", Bytes("x"));
  StatusOr<std::unique_ptr<CompileCache>> under_file = CompileCache::Open(dir_ + "/file/sub", 1000);
  ASSERT_FALSE(under_file.ok());
  EXPECT_NE(under_file.status().message().find("cannot create compile cache directory " + dir_ + "/file/sub"),
            std::string::npos)
      << under_file.status().message();
  StatusOr<std::unique_ptr<CompileCache>> zero = CompileCache::Open(dir_, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "compile cache bound must be positive, not 0");
}

// Writers and readers race on the same keys; a reader sees the whole
// payload of some writer, or a miss, never a mixture.
void Hammer(const std::string& dir, int64_t max_bytes, int worker, int rounds, std::atomic<int>* bad) {
  StatusOr<std::unique_ptr<CompileCache>> cache = CompileCache::Open(dir, max_bytes);
  if (!cache.ok()) {
    ++*bad;
    return;
  }
  for (int i = 0; i < rounds; ++i) {
    std::string key = "key" + std::to_string(i % 5);
    std::vector<uint8_t> payload(2000 + 100 * (i % 5), static_cast<uint8_t>(i % 5));
    if (!(*cache)->Store(key, payload).ok()) ++*bad;
    std::optional<std::vector<uint8_t>> got = (*cache)->Lookup("key" + std::to_string((i + worker) % 5));
    int k = (i + worker) % 5;
    if (got && *got != std::vector<uint8_t>(2000 + 100 * k, static_cast<uint8_t>(k))) ++*bad;
  }
}

TEST_F(CompileCacheTest, ThreadsShareOneDirectory) {
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back(Hammer, dir_, 1 << 20, t, 200, &bad);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(Open()->Lookup("key" + std::to_string(k)), std::vector<uint8_t>(2000 + 100 * k, static_cast<uint8_t>(k)));
}

// Under a bound of about three entries, so that evictions race with
// lookups and stores too.
TEST_F(CompileCacheTest, ProcessesShareOneDirectory) {
  fs::create_directories(dir_);
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::atomic<int> bad{0};
      Hammer(dir_, 8000, p, 200, &bad);
      _exit(bad.load() == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    EXPECT_TRUE(e.path().extension() == ".kce" || e.path().filename() == "lock") << e.path();
}

}  // namespace
}  // namespace kiln::cache
