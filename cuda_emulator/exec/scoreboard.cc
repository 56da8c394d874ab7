// The scoreboard's per-instruction table; see scoreboard.h.
#include "cuda_emulator/exec/scoreboard.h"

#include <algorithm>

#include "cuda_emulator/model/h100_figures.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::InstructionClass;
using ptx::Opcode;
using ptx::Operand;
using ptx::Type;
namespace fig = model::h100;

bool Is64BitInteger(Type t) { return t == Type::kB64 || t == Type::kU64 || t == Type::kS64; }

// 64-bit integer arithmetic runs as two 32-bit instructions; moves and
// conversions do not (they rename or extend).
bool IsWideInteger(const Instruction& in) {
  if (in.cls != InstructionClass::kInteger || !Is64BitInteger(in.type)) return false;
  switch (in.opcode) {
    case Opcode::kMov: case Opcode::kCvta: case Opcode::kCvt:
      return false;
    default:
      return true;
  }
}

// The halves of a 64-bit bitwise operation are independent.
bool IsBitwise(Opcode op) {
  switch (op) {
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kNot:
    case Opcode::kCnot: case Opcode::kLop3: case Opcode::kSelp:
      return true;
    default:
      return false;
  }
}

uint16_t Latency(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::kLd: case Opcode::kAtom:
      return 0;  // where the access goes decides
    case Opcode::kShfl: case Opcode::kVote: case Opcode::kRedux: case Opcode::kMatch:
    case Opcode::kActivemask:
      return fig::kWarpSyncLatency;
    default:
      break;
  }
  switch (in.cls) {
    case InstructionClass::kFp64: return fig::kFp64Latency;
    case InstructionClass::kSpecial: return fig::kSpecialLatency;
    default: break;
  }
  if (IsWideInteger(in) && !IsBitwise(in.opcode)) return fig::kWideIntegerLatency;
  return fig::kAluLatency;
}

class Builder {
 public:
  Builder(const ptx::Kernel& k, IssueInfo* out) : kernel_(k), out_(out) {}

  void Source(uint32_t reg) {
    if (reg >= kernel_.num_registers) return;  // special registers are always ready
    for (int i = 0; i < out_->num_src; ++i)
      if (out_->src[i] == reg) return;
    if (out_->num_src < IssueInfo::kMaxSources) out_->src[out_->num_src++] = reg;
  }
  void Destination(uint32_t reg) {
    if (out_->num_dst < IssueInfo::kMaxDestinations) out_->dst[out_->num_dst++] = reg;
  }
  void SourceOperand(const Operand& o) {
    switch (o.kind) {
      case Operand::Kind::kRegister: Source(o.reg); break;
      case Operand::Kind::kAddress:
        if (!o.symbol_base) Source(o.reg);
        break;
      case Operand::Kind::kVector:
        for (int i = 0; i < o.vector_size; ++i)
          if (o.vector[i] != ~0u) Source(o.vector[i]);
        break;
      default: break;
    }
  }
  void DestinationOperand(const Operand& o) {
    if (o.kind == Operand::Kind::kRegister) Destination(o.reg);
    if (o.kind == Operand::Kind::kVector) {
      for (int i = 0; i < o.vector_size; ++i)
        if (o.vector[i] != ~0u) Destination(o.vector[i]);
    }
  }

 private:
  const ptx::Kernel& kernel_;
  IssueInfo* out_;
};

}  // namespace

std::vector<IssueInfo> BuildIssueTable(const ptx::Kernel& kernel) {
  std::vector<IssueInfo> table(kernel.code.size());
  for (size_t i = 0; i < kernel.code.size(); ++i) {
    const Instruction& in = kernel.code[i];
    IssueInfo& info = table[i];
    Builder b(kernel, &info);
    if (in.guard >= 0) b.Source(static_cast<uint32_t>(in.guard));
    for (int s = 0; s < in.num_src; ++s) b.SourceOperand(in.src[s]);
    for (int d = 0; d < in.num_dst; ++d) b.DestinationOperand(in.dst[d]);
    bool param = in.opcode == Opcode::kLd && in.mod.space == ptx::Space::kParam;
    info.slots = param ? 0 : IsWideInteger(in) ? 2 : 1;
    info.latency = Latency(in);
  }
  return table;
}

}  // namespace kiln::emu
