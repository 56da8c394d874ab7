// HostCpu: the x86-64 levels host kernels are compiled for, and "native",
// the compiling machine's CPU as LLVM and cpuid both see it. See
// kernel_codegen.h.
#include <algorithm>

#include "common/x86_cpu.h"
#include "compiler/codegen/kernel_codegen.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

namespace kiln::codegen {
namespace {

HostCpu LevelCpu(const std::string& level, std::vector<std::string> features) {
  HostCpu cpu;
  cpu.level = level;
  cpu.llvm_cpu = level;
  cpu.features = std::move(features);
  return cpu;
}

// The compiling machine: its highest level, plus every further feature
// kiln's runtime can check (KnownX86Features) that both LLVM and cpuid (with
// the OS's register state) report, tuned for its model. Features the
// runtime cannot check are left off, so the image's feature list is
// exactly what its code may use.
StatusOr<HostCpu> NativeCpu() {
  const std::string level = HostX86Level();
  if (level.empty()) return Error("--host-cpu=native: this machine's CPU is below x86-64-v2");
  HostCpu cpu = LevelCpu(level, *X86LevelFeatures(level));
  cpu.level = "native";
  const llvm::StringMap<bool> llvm_features = llvm::sys::getHostCPUFeatures();
  for (const std::string& f : KnownX86Features()) {
    if (std::find(cpu.features.begin(), cpu.features.end(), f) != cpu.features.end()) continue;
    if (!llvm_features.lookup(f) || !HostCpuHasFeature(f)) continue;
    cpu.features.push_back(f);
    cpu.llvm_features += (cpu.llvm_features.empty() ? "+" : ",+") + f;
  }
  cpu.tune_cpu = llvm::sys::getHostCPUName().str();
  return cpu;
}

}  // namespace

std::string HostCpu::Key() const {
  std::string key = level + "|" + llvm_cpu + "|" + llvm_features + "|" + tune_cpu + "|";
  for (const std::string& f : features) key += f + ",";
  return key;
}

HostCpu BaselineHostCpu() { return LevelCpu("x86-64-v2", *X86LevelFeatures("x86-64-v2")); }

StatusOr<HostCpu> ResolveHostCpu(const std::string& level) {
  if (level == "native") return NativeCpu();
  std::optional<std::vector<std::string>> features = X86LevelFeatures(level);
  if (!features)
    return Error("unknown host CPU level '" + level + "' (x86-64-v2, x86-64-v3, x86-64-v4 or native)");
  return LevelCpu(level, std::move(*features));
}

}  // namespace kiln::codegen
