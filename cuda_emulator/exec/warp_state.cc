// WarpState::Fail and handler selection; see warp_state.h.
#include "cuda_emulator/exec/warp_state.h"

#include <cstdio>

namespace kiln::emu {
namespace {

std::string Triple(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

}  // namespace

bool WarpState::Fail(int lane, const std::string& what, const std::string& detail) {
  failed = true;
  LaunchState& ls = *launch;
  const Dim3& b = ls.config.block;
  uint32_t t = LinearThread(lane);
  std::string message = what + " in kernel '" + kernel->name + "' block " +
                        Triple(block->id.x, block->id.y, block->id.z) + " thread " +
                        Triple(t % b.x, (t / b.x) % b.y, t / (b.x * b.y));
  if (current) message += ", PTX line " + std::to_string(current->line) + " (" + current->text + ")";
  if (!detail.empty()) message += ": " + detail;
  std::lock_guard<std::mutex> lock(ls.error_mu);
  if (!ls.failed.exchange(true)) ls.error = message;
  return false;
}

StatusOr<ptx::Handler> SelectHandler(const ptx::Instruction& in) {
  ptx::Handler h = nullptr;
  switch (in.opcode) {
    case ptx::Opcode::kLd: case ptx::Opcode::kSt: case ptx::Opcode::kAtom: case ptx::Opcode::kRed:
      h = MemoryHandler(in);
      break;
    case ptx::Opcode::kMov: case ptx::Opcode::kCvt: case ptx::Opcode::kCvta:
    case ptx::Opcode::kPrmt: case ptx::Opcode::kSetp: case ptx::Opcode::kSet:
    case ptx::Opcode::kSelp: case ptx::Opcode::kSlct:
      h = ConvertHandler(in);
      break;
    case ptx::Opcode::kShfl: case ptx::Opcode::kVote: case ptx::Opcode::kRedux:
    case ptx::Opcode::kActivemask: case ptx::Opcode::kMatch:
      h = WarpHandler(in);
      break;
    default:
      h = ptx::IsFloat(in.type) ? FloatHandler(in) : IntegerHandler(in);
      break;
  }
  if (!h) return Error("unsupported instruction (this opcode/type/modifier combination)");
  return h;
}

}  // namespace kiln::emu
