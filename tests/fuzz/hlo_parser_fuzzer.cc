// libFuzzer entry point for the HLO text parser.
//
// Any input must either parse or be rejected with a positioned error
// ("fuzz.hlo:<line>:<col>: error: ..."); crashes, sanitizer reports, hangs
// and unbounded allocations are bugs. A malformed error message traps so the
// fuzzer reports it too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/hlo/parser.h"

namespace {

bool IsPositionedError(std::string_view message) {
  constexpr std::string_view kFile = "fuzz.hlo";
  if (message.substr(0, kFile.size()) != kFile) return false;
  size_t i = kFile.size();
  for (int field = 0; field < 2; ++field) {
    if (i >= message.size() || message[i] != ':') return false;
    size_t start = ++i;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9') ++i;
    if (i == start) return false;
  }
  return message.substr(i, 9) == ": error: ";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = kiln::hlo::ParseHloModule(text, "fuzz.hlo");
  if (!module.ok() && !IsPositionedError(module.status().message())) __builtin_trap();
  return 0;
}
