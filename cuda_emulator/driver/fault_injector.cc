// FaultInjector; see fault_injector.h.
#include "cuda_emulator/driver/fault_injector.h"

#include <cstdlib>

namespace kiln::emu::driver {

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kAllocation: return "alloc";
    case FaultKind::kLaunch: return "launch";
    case FaultKind::kLibrary: return "library";
  }
  return "unknown";
}

void FaultInjector::Arm(FaultKind kind, int64_t after_calls) {
  std::lock_guard<std::mutex> lock(mu_);
  remaining_[static_cast<int>(kind)] = after_calls < 0 ? -1 : after_calls;
}

Status FaultInjector::ArmFromEnvironment() {
  const char* v = std::getenv("KILN_EMU_FAULT");
  if (!v || !*v) return Status::Ok();
  std::string spec(v);
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find(',', begin);
    if (end == std::string::npos) end = spec.size();
    std::string entry = spec.substr(begin, end - begin);
    size_t colon = entry.find(':');
    std::string name = entry.substr(0, colon);
    int kind = -1;
    for (int k = 0; k < kFaultKinds; ++k) {
      if (name == FaultKindName(static_cast<FaultKind>(k))) kind = k;
    }
    char* count_end = nullptr;
    long long n = colon == std::string::npos ? -1 : std::strtoll(entry.c_str() + colon + 1, &count_end, 10);
    if (kind < 0 || n < 0 || *count_end != '\0') {
      return Error("KILN_EMU_FAULT: '" + entry +
                   "' is not <kind>:<calls> with kind alloc, launch or library and calls >= 0");
    }
    Arm(static_cast<FaultKind>(kind), n);
    begin = end + 1;
  }
  return Status::Ok();
}

std::string FaultInjector::Take(FaultKind kind, std::string_view call) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t& remaining = remaining_[static_cast<int>(kind)];
    if (remaining < 0) return "";
    if (remaining-- > 0) return "";
    remaining = -1;
  }
  return std::string(call) + ": injected " + FaultKindName(kind) +
         " failure (kiln emulator fault injection)";
}

}  // namespace kiln::emu::driver
