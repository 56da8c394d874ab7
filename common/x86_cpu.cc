// x86-64 levels and cpuid feature checks; see x86_cpu.h.
#include "common/x86_cpu.h"

#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace kiln {
namespace {

// Where cpuid reports a feature: leaf, subleaf, register, bit.
enum class Reg { kEax, kEbx, kEcx, kEdx };
// What the OS must have enabled in XCR0 for the feature's registers.
enum class OsState { kNone, kAvx, kAvx512 };

struct FeatureBit {
  const char* name;
  uint32_t leaf, subleaf;
  Reg reg;
  int bit;
  OsState state;
};

// Names as LLVM's target features and GCC's __builtin_cpu_supports spell
// them; bits from the Intel SDM, vol. 2A, CPUID.
constexpr FeatureBit kFeatures[] = {
    {"sse3", 1, 0, Reg::kEcx, 0, OsState::kNone},
    {"pclmul", 1, 0, Reg::kEcx, 1, OsState::kNone},
    {"ssse3", 1, 0, Reg::kEcx, 9, OsState::kNone},
    {"fma", 1, 0, Reg::kEcx, 12, OsState::kAvx},
    {"cx16", 1, 0, Reg::kEcx, 13, OsState::kNone},
    {"sse4.1", 1, 0, Reg::kEcx, 19, OsState::kNone},
    {"sse4.2", 1, 0, Reg::kEcx, 20, OsState::kNone},
    {"crc32", 1, 0, Reg::kEcx, 20, OsState::kNone},
    {"movbe", 1, 0, Reg::kEcx, 22, OsState::kNone},
    {"popcnt", 1, 0, Reg::kEcx, 23, OsState::kNone},
    {"aes", 1, 0, Reg::kEcx, 25, OsState::kNone},
    {"xsave", 1, 0, Reg::kEcx, 26, OsState::kNone},
    {"avx", 1, 0, Reg::kEcx, 28, OsState::kAvx},
    {"f16c", 1, 0, Reg::kEcx, 29, OsState::kAvx},
    {"rdrnd", 1, 0, Reg::kEcx, 30, OsState::kNone},
    {"sahf", 0x80000001, 0, Reg::kEcx, 0, OsState::kNone},
    {"lzcnt", 0x80000001, 0, Reg::kEcx, 5, OsState::kNone},
    {"prfchw", 0x80000001, 0, Reg::kEcx, 8, OsState::kNone},
    {"bmi", 7, 0, Reg::kEbx, 3, OsState::kNone},
    {"avx2", 7, 0, Reg::kEbx, 5, OsState::kAvx},
    {"bmi2", 7, 0, Reg::kEbx, 8, OsState::kNone},
    {"avx512f", 7, 0, Reg::kEbx, 16, OsState::kAvx512},
    {"avx512dq", 7, 0, Reg::kEbx, 17, OsState::kAvx512},
    {"rdseed", 7, 0, Reg::kEbx, 18, OsState::kNone},
    {"adx", 7, 0, Reg::kEbx, 19, OsState::kNone},
    {"avx512ifma", 7, 0, Reg::kEbx, 21, OsState::kAvx512},
    {"avx512cd", 7, 0, Reg::kEbx, 28, OsState::kAvx512},
    {"sha", 7, 0, Reg::kEbx, 29, OsState::kNone},
    {"avx512bw", 7, 0, Reg::kEbx, 30, OsState::kAvx512},
    {"avx512vl", 7, 0, Reg::kEbx, 31, OsState::kAvx512},
    {"avx512vbmi", 7, 0, Reg::kEcx, 1, OsState::kAvx512},
    {"avx512vbmi2", 7, 0, Reg::kEcx, 6, OsState::kAvx512},
    {"gfni", 7, 0, Reg::kEcx, 8, OsState::kNone},
    {"vaes", 7, 0, Reg::kEcx, 9, OsState::kAvx},
    {"vpclmulqdq", 7, 0, Reg::kEcx, 10, OsState::kAvx},
    {"avx512vnni", 7, 0, Reg::kEcx, 11, OsState::kAvx512},
    {"avx512bitalg", 7, 0, Reg::kEcx, 12, OsState::kAvx512},
    {"avx512vpopcntdq", 7, 0, Reg::kEcx, 14, OsState::kAvx512},
    {"avx512fp16", 7, 0, Reg::kEdx, 23, OsState::kAvx512},
    {"avxvnni", 7, 1, Reg::kEax, 4, OsState::kAvx},
    {"avx512bf16", 7, 1, Reg::kEax, 5, OsState::kAvx512},
};

#if defined(__x86_64__)
// XCR0 bits the OS sets when it saves the registers on context switches:
// SSE and AVX (bits 1, 2); AVX-512's opmask and upper ZMM state (5, 6, 7).
constexpr uint64_t kAvxState = 0x6, kAvx512State = 0xe6;

uint64_t EnabledRegisterState() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  if (!(ecx & (1u << 27))) return 0;  // OSXSAVE: xgetbv is available
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool Supported(const FeatureBit& f) {
  unsigned regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &regs[0], &regs[1], &regs[2], &regs[3])) return false;
  if (!(regs[static_cast<int>(f.reg)] & (1u << f.bit))) return false;
  static const uint64_t state = EnabledRegisterState();
  if (f.state == OsState::kAvx) return (state & kAvxState) == kAvxState;
  if (f.state == OsState::kAvx512) return (state & kAvx512State) == kAvx512State;
  return true;
}
#else
bool Supported(const FeatureBit&) { return false; }
#endif

}  // namespace

const std::vector<std::string>& DefaultX86Levels() {
  static const std::vector<std::string> levels = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  return levels;
}

// The levels as LLVM defines them (llvm/lib/Target/X86/X86.td), each
// including the one below.
std::optional<std::vector<std::string>> X86LevelFeatures(std::string_view level) {
  std::vector<std::string> features = {"cx16", "sahf", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2", "crc32"};
  if (level == "x86-64-v2") return features;
  for (const char* f : {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"})
    features.push_back(f);
  if (level == "x86-64-v3") return features;
  for (const char* f : {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}) features.push_back(f);
  if (level == "x86-64-v4") return features;
  return std::nullopt;
}

const std::vector<std::string>& KnownX86Features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const FeatureBit& f : kFeatures) v.push_back(f.name);
    return v;
  }();
  return names;
}

bool HostCpuHasFeature(std::string_view feature) {
  for (const FeatureBit& f : kFeatures)
    if (feature == f.name) return Supported(f);
  return false;
}

bool HostCpuHasFeatures(const std::vector<std::string>& features) {
  for (const std::string& f : features)
    if (!HostCpuHasFeature(f)) return false;
  return true;
}

std::string HostX86Level() {
  std::string best;
  for (const std::string& level : DefaultX86Levels())
    if (HostCpuHasFeatures(*X86LevelFeatures(level))) best = level;
  return best;
}

std::string ForcedHostCpuLevel() {
  const char* env = std::getenv("KILN_HOST_CPU_LEVEL");
  return env ? std::string(env) : std::string();
}

}  // namespace kiln
