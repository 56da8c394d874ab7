// Helpers of the compile cache tests: whole-file reads and writes (to damage
// entries) and a private temporary cache directory per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kiln::cache::testing {

inline std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A directory path of the running test's own (not created): never the
// user's cache.
inline std::string TestCacheDir() {
  return ::testing::TempDir() + "/kiln_cache_test_" + std::to_string(getpid()) + "_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

}  // namespace kiln::cache::testing
