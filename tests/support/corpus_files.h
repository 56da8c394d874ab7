// The shared HLO corpus (../shared/hlo-corpus relative to the repo root, the
// tests' working directory): every module file, as opcount.py counts them.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::test_support {

inline constexpr const char* kCorpusDir = "../shared/hlo-corpus";

inline bool IsCorpusModule(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  std::string ext = path.extension().string();
  return !name.empty() && name[0] != '.' && ext != ".py" && ext != ".tsv" && name != "OPCOUNT.txt";
}

// Sorted paths of every corpus module; empty if the corpus is absent.
inline std::vector<std::string> CorpusFiles(const std::string& dir = kCorpusDir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec))
    if (entry.is_regular_file() && IsCorpusModule(entry.path())) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kiln::test_support
