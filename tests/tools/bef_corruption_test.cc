// Corrupted .bef files executed by bef-run: a small module with a constant,
// compiled by bef-compile for host (x86-64-v2 alone) and CUDA (so the file
// holds a host shared object, a cubin, PTX and constant data), is damaged
// one byte
// region at a time (header, tables, each kernel image section, the
// constant, the HLO text) by flipping bytes at a stride, and every damaged
// copy runs through bef-run on the host as a subprocess. Each run must end
// in a correct result or a clean error (non-zero exit, one stderr line
// "bef-run: error: ..."); a signal, a hang, a wrong result or a messy error
// fails the test, and damage inside a checksummed section (kernel images,
// constants) must be reported as a checksum mismatch naming that section.
// The counts are printed per region. (Before .bef format 3 added checksums,
// the same loop gave 7 signals and 29 wrong results in 540 runs.)
//
// bef-compile and bef-run come from $KILN_BEF_COMPILE / $KILN_BEF_RUN (set
// by CTest) or the build tree next to this binary; without them the test
// is skipped, saying so. The expected result is worked out by hand.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "serialization/artifact.h"
#include "serialization/bef_generated.h"

namespace kiln::bef {
namespace {

namespace fs = std::filesystem;

// p * c + c with c = 1..8 and p = 8..1: c * (p + 1) = 9 16 21 24 25 24 21 16.
constexpr char kModule[] = R"(HloModule corrupt

ENTRY main {
  p = f32[8] parameter(0)
  c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  m = f32[8] multiply(p, c)
  ROOT r = f32[8] add(m, c)
}
)";
constexpr char kInput[] = "--input=8xf32=8 7 6 5 4 3 2 1";
constexpr char kExpected[] = "--expected_output=8xf32=9 16 21 24 25 24 21 16";

std::string FindTool(const char* env, const std::string& relative) {
  if (const char* path = std::getenv(env)) return path;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return "";
  // build/tests/X -> build/tools/...
  const fs::path candidate = exe.parent_path().parent_path() / relative;
  return fs::exists(candidate) ? candidate.string() : "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

struct RunResult {
  int exit_code = -1;  // -1: did not exit
  int signal = 0;      // the signal that ended it, 0 if none
  std::string out, err;
};

// Runs `argv` with stdout/stderr captured, no core dumps, 4 GiB of address
// space and a 20 s alarm (a hang ends with SIGALRM).
RunResult RunProcess(const std::vector<std::string>& argv, const std::string& dir) {
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const pid_t pid = fork();
  if (pid == 0) {
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0) _exit(126);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const rlimit address_space{rlim_t{4} << 30, rlim_t{4} << 30};
    setrlimit(RLIMIT_AS, &address_space);
    alarm(20);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  RunResult r;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

enum class Outcome { kCorrect, kCleanError, kWrongResult, kMessyError, kSignal, kHang };

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kCorrect: return "correct result";
    case Outcome::kCleanError: return "clean error";
    case Outcome::kWrongResult: return "wrong result";
    case Outcome::kMessyError: return "messy error";
    case Outcome::kSignal: return "signal";
    case Outcome::kHang: return "hang";
  }
  return "?";
}

Outcome Classify(const RunResult& r) {
  if (r.signal == SIGALRM) return Outcome::kHang;
  if (r.signal != 0) return Outcome::kSignal;
  if (r.exit_code == 0 && r.out.find("[SUCCESS]") != std::string::npos) return Outcome::kCorrect;
  if (r.out.find("[FAILED]") != std::string::npos) return Outcome::kWrongResult;
  const bool one_line = !r.err.empty() && r.err.find('\n') == r.err.size() - 1;
  if (r.exit_code > 0 && one_line && r.err.rfind("bef-run: error: ", 0) == 0) return Outcome::kCleanError;
  return Outcome::kMessyError;
}

// A byte range of the file and the positions flipped in it.
struct Region {
  std::string name;  // as the loader names a checksummed section
  bool checksummed = false;  // has its own checksum: the error must name it
  std::vector<size_t> positions;
};

// At most `count` positions spread evenly over `all`.
std::vector<size_t> Stride(const std::vector<size_t>& all, size_t count) {
  if (all.size() <= count) return all;
  std::vector<size_t> picked;
  for (size_t i = 0; i < count; ++i) picked.push_back(all[i * all.size() / count]);
  return picked;
}

std::vector<size_t> Range(size_t begin, size_t end) {
  std::vector<size_t> v;
  for (size_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

// The regions of `bytes`, found with the generated FlatBuffers API (not the
// loader under test): the header (root offset, identifier, the root
// table's vtable and fields), each kernel image section, each constant,
// the HLO text, and everything else ("tables").
std::vector<Region> FindRegions(const std::vector<uint8_t>& bytes) {
  const uint8_t* base = bytes.data();
  const auto root = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(base);
  const uint8_t* vtable = base + root - flatbuffers::ReadScalar<flatbuffers::soffset_t>(base + root);
  const size_t root_end = root + flatbuffers::ReadScalar<uint16_t>(vtable + 2);
  std::vector<Region> regions;
  regions.push_back({"header", false, Range(0, root_end)});  // small: every byte
  std::vector<bool> claimed(bytes.size(), false);
  for (size_t i = 0; i < root_end; ++i) claimed[i] = true;
  auto add = [&](std::string name, bool checksummed, const void* data, size_t size) {
    const size_t begin = static_cast<const uint8_t*>(data) - base;
    regions.push_back({std::move(name), checksummed, Stride(Range(begin, begin + size), 64)});
    for (size_t i = begin; i < begin + size; ++i) claimed[i] = true;
  };
  const fb::BefFile* file = fb::GetBefFile(base);
  for (const fb::KernelImage* image : *file->kernel_images()) {
    std::string target = "kernel image '" + image->target()->str() + "'";
    if (image->cpu_level()) target += " for '" + image->cpu_level()->str() + "'";
    if (image->shared_object()) {
      add("host " + target, true, image->shared_object()->data(), image->shared_object()->size());
    }
    if (image->cubins()) {
      for (const fb::Cubin* c : *image->cubins()) {
        add("cubin sm_" + std::to_string(c->sm_arch()) + " of " + target, true, c->image()->data(),
            c->image()->size());
      }
    }
    if (image->ptx()) add("PTX of " + target, true, image->ptx()->data(), image->ptx()->size());
  }
  for (flatbuffers::uoffset_t i = 0; i < file->constants()->size(); ++i) {
    const fb::Constant* c = file->constants()->Get(i);
    add("constant " + std::to_string(i) + " ('" + c->name()->str() + "')", true, c->data()->data(),
        c->data()->size());
  }
  add("HLO text", false, file->hlo_text()->data(), file->hlo_text()->size());

  std::vector<size_t> rest;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!claimed[i]) rest.push_back(i);
  }
  regions.push_back({"tables", false, Stride(rest, 160)});
  return regions;
}

class BefCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    compile_ = FindTool("KILN_BEF_COMPILE", "tools/bef-compile/bef-compile");
    run_ = FindTool("KILN_BEF_RUN", "tools/bef-run/bef-run");
    if (compile_.empty() || run_.empty()) {
      GTEST_SKIP() << "bef-compile or bef-run not built (set KILN_BEF_COMPILE and KILN_BEF_RUN)";
    }
    dir_ = ::testing::TempDir() + "/bef_corruption_test_" + std::to_string(getpid());
    fs::create_directories(dir_);
    std::ofstream(dir_ + "/m.hlo") << kModule;
    const RunResult compiled =
        RunProcess({compile_, dir_ + "/m.hlo", "-o", dir_ + "/m.bef", "--targets=host,cuda", "--host-cpu=x86-64-v2", "--no-cache"}, dir_);
    ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
    const std::string text = ReadFile(dir_ + "/m.bef");
    pristine_.assign(text.begin(), text.end());
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  Outcome Execute(const std::vector<uint8_t>& bytes, RunResult* result) {
    const std::string path = dir_ + "/damaged.bef";
    WriteFile(path, bytes);
    *result = RunProcess({run_, path, "--device=host", kInput, kExpected}, dir_);
    return Classify(*result);
  }

  std::string compile_, run_, dir_;
  std::vector<uint8_t> pristine_;
};

// Outcome counts of one region.
using Counts = std::map<Outcome, int>;

std::string FormatCounts(const Counts& counts) {
  std::string s;
  for (const auto& [outcome, n] : counts) {
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + OutcomeName(outcome);
  }
  return s;
}

TEST_F(BefCorruption, EveryRegionFlippedAndExecuted) {
  RunResult r;
  ASSERT_EQ(Execute(pristine_, &r), Outcome::kCorrect) << r.out << r.err;
  const std::vector<Region> regions = FindRegions(pristine_);
  // Sanity of the module: one host and one CUDA image, one constant.
  std::vector<std::string> names;
  for (const Region& region : regions) names.push_back(region.name);
  const std::vector<std::string> expected_names = {
      "header", "host kernel image 'host-x86_64' for 'x86-64-v2'", "cubin sm_90 of kernel image 'cuda'",
      "PTX of kernel image 'cuda'", "constant 0 ('c')", "HLO text", "tables"};
  ASSERT_EQ(names, expected_names);
  const std::string path = dir_ + "/damaged.bef";

  constexpr uint8_t kMasks[] = {0xff, 0x01, 0x80, 0x10, 0x55};
  Counts total;
  int runs = 0;
  for (const Region& region : regions) {
    ASSERT_FALSE(region.positions.empty()) << region.name;
    Counts counts;
    for (size_t i = 0; i < region.positions.size(); ++i) {
      const size_t position = region.positions[i];
      std::vector<uint8_t> damaged = pristine_;
      damaged[position] ^= kMasks[i % std::size(kMasks)];
      const Outcome outcome = Execute(damaged, &r);
      ++counts[outcome];
      ++total[outcome];
      ++runs;
      EXPECT_TRUE(outcome == Outcome::kCorrect || outcome == Outcome::kCleanError)
          << region.name << ": byte " << position << " of " << pristine_.size() << " ^ 0x" << std::hex
          << int{kMasks[i % std::size(kMasks)]} << std::dec << " -> " << OutcomeName(outcome)
          << (r.signal ? " (" + std::string(strsignal(r.signal)) + ")" : "") << "; stdout: " << r.out
          << "; stderr: " << r.err;
      // Damage inside a checksummed section is reported as exactly that.
      if (region.checksummed) {
        EXPECT_EQ(r.err, "bef-run: error: " + path + ": corrupt .bef file: checksum mismatch in " +
                             region.name + "\n");
      }
    }
    std::printf("  %-36s %3zu flips: %s\n", region.name.c_str(), region.positions.size(),
                FormatCounts(counts).c_str());
  }
  std::printf("corrupted copies of a %zu-byte .bef executed by bef-run: %d runs: %s\n",
              pristine_.size(), runs, FormatCounts(total).c_str());
}

}  // namespace
}  // namespace kiln::bef
