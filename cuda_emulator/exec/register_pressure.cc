// Liveness-based register estimate (see register_pressure.h).
#include "cuda_emulator/exec/register_pressure.h"

#include <algorithm>

namespace kiln::emu {
namespace {

using ptx::Opcode;

class BitSet {
 public:
  explicit BitSet(size_t bits = 0) : words_((bits + 63) / 64, 0) {}
  void Set(uint32_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void Clear(uint32_t i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  bool Test(uint32_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  // this |= other; true when it changed.
  bool Merge(const BitSet& other) {
    bool changed = false;
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t merged = words_[w] | other.words_[w];
      changed |= merged != words_[w];
      words_[w] = merged;
    }
    return changed;
  }
  template <typename F>
  void ForEach(F f) const {
    for (size_t w = 0; w < words_.size(); ++w)
      for (uint64_t bits = words_[w]; bits; bits &= bits - 1)
        f(static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
  }

 private:
  std::vector<uint64_t> words_;
};

// Where control may go after instruction i (an inlined .func's return goes
// back past its call, which the call's fall-through edge stands for).
std::vector<uint32_t> Successors(const ptx::Kernel& kernel, size_t i) {
  const ptx::Instruction& in = kernel.code[i];
  std::vector<uint32_t> next;
  bool guarded = in.guard >= 0;
  bool falls_through = i + 1 < kernel.code.size();
  switch (in.opcode) {
    case Opcode::kBra:
      next.push_back(in.target);
      if (guarded && falls_through) next.push_back(static_cast<uint32_t>(i + 1));
      return next;
    case Opcode::kCall:
      if (in.builtin == ptx::Instruction::Builtin::kNone) next.push_back(in.target);
      break;  // a builtin only falls through
    case Opcode::kRet:
    case Opcode::kExit:
    case Opcode::kTrap:
      if (!guarded) return next;
      break;
    default:
      break;
  }
  if (falls_through) next.push_back(static_cast<uint32_t>(i + 1));
  return next;
}

}  // namespace

uint32_t EstimateAllocatedRegisters(const ptx::Kernel& kernel, const std::vector<IssueInfo>& issue) {
  const size_t n = kernel.code.size();
  const uint32_t regs = kernel.num_registers;
  if (n == 0 || regs == 0) return 2;
  auto units = [&](uint32_t r) -> uint32_t { return r < kernel.register_units.size() ? kernel.register_units[r] : 1; };
  std::vector<std::vector<uint32_t>> successors(n);
  for (size_t i = 0; i < n; ++i) successors[i] = Successors(kernel, i);
  std::vector<BitSet> live_in(n, BitSet(regs));
  // Backward dataflow to a fixed point: in = uses + (out - defs), where a
  // predicated instruction's definitions may not happen and kill nothing.
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t k = n; k-- > 0;) {
      BitSet live(regs);
      for (uint32_t s : successors[k])
        if (s < n) live.Merge(live_in[s]);
      const IssueInfo& info = issue[k];
      if (kernel.code[k].guard < 0)
        for (int d = 0; d < info.num_dst; ++d)
          if (info.dst[d] < regs) live.Clear(info.dst[d]);
      for (int s = 0; s < info.num_src; ++s)
        if (info.src[s] < regs) live.Set(info.src[s]);
      changed |= live_in[k].Merge(live);
    }
  }
  // The peak: values live into an instruction, plus its results while its
  // operands are still read.
  uint32_t peak = 0;
  for (size_t k = 0; k < n; ++k) {
    uint32_t total = 0;
    live_in[k].ForEach([&](uint32_t r) { total += units(r); });
    const IssueInfo& info = issue[k];
    for (int d = 0; d < info.num_dst; ++d)
      if (info.dst[d] < regs && !live_in[k].Test(info.dst[d])) total += units(info.dst[d]);
    peak = std::max(peak, total);
  }
  return std::min(peak + 2, std::max<uint32_t>(kernel.declared_registers, 2));
}

}  // namespace kiln::emu
