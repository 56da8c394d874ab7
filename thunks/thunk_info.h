// ThunkInfo: what every thunk records about where it came from.
//
// The runtime's per-HLO profile (XLA's old --xla_hlo_profile, restored by
// kiln) needs, per thunk: a display name, the HLO instructions it implements
// (a fusion's fused instructions included) and the cost model's estimate, so
// measured time can be compared with the roofline without the compiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::thunks {

struct CostEstimate {
  int64_t flops = 0;
  int64_t transcendentals = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  bool operator==(const CostEstimate&) const = default;
};

// One HLO instruction a thunk implements.
struct HloInstructionRef {
  std::string name;     // "add.1"
  std::string opcode;   // "add"
  std::string op_name;  // metadata op_name from the frontend ("jit(f)/add"); may be empty
  bool operator==(const HloInstructionRef&) const = default;
};

struct ThunkInfo {
  std::string profile_name;  // usually the HLO instruction the thunk was emitted for
  std::vector<HloInstructionRef> hlo;
  CostEstimate cost;
  bool operator==(const ThunkInfo&) const = default;
};

}  // namespace kiln::thunks
