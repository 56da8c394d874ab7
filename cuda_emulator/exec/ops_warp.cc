// Warp-level instructions: shfl.sync, vote.sync, redux.sync, activemask.
// The scheduler (launch.cc) has already gathered every lane of the
// membermask at the instruction, so `mask` holds all participating lanes.
#include "cuda_emulator/exec/warp_state.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::Type;

// shfl.sync.mode.b32 d[|p], a, b, c, membermask (PTX ISA pseudo-code: b
// selects the source lane, c packs the clamp value (bits 0-4) and the
// segment mask (bits 8-12)).
bool Shfl(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t values[32];
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  for (int l = 0; l < 32; ++l) values[l] = a[l];
  uint64_t* d = w.Reg(in.dst[0].reg);
  uint64_t* p = in.num_dst > 1 ? w.Reg(in.dst[1].reg) : nullptr;
  ptx::ShflMode mode = in.mod.shfl;
  ForEachLane(mask, [&](int l) {
    int bval = static_cast<int>(b[l] & 31), cval = static_cast<int>(c[l] & 31);
    int seg = static_cast<int>((c[l] >> 8) & 31);
    int max_lane = (l & seg) | (cval & ~seg), min_lane = l & seg;
    int j = l;
    bool pval = false;
    switch (mode) {
      case ptx::ShflMode::kUp: j = l - bval; pval = j >= max_lane; break;
      case ptx::ShflMode::kDown: j = l + bval; pval = j <= max_lane; break;
      case ptx::ShflMode::kBfly: j = l ^ bval; pval = j <= max_lane; break;
      case ptx::ShflMode::kIdx: j = min_lane | (bval & ~seg); pval = j <= max_lane; break;
      case ptx::ShflMode::kNone: break;
    }
    if (!pval) j = l;
    d[l] = values[j] & 0xffffffffu;
    if (p) p[l] = pval;
  });
  return true;
}

bool Vote(WarpState& w, const Instruction& in, uint32_t mask) {
  Src a = w.S(in.src[0]);
  bool negated = in.src[0].negated;
  uint32_t ballot = 0;
  ForEachLane(mask, [&](int l) {
    if (((a[l] & 1) != 0) != negated) ballot |= 1u << l;
  });
  uint64_t* d = w.Reg(in.dst[0].reg);
  uint64_t r = 0;
  switch (in.mod.vote) {
    case ptx::VoteMode::kAll: r = ballot == mask; break;
    case ptx::VoteMode::kAny: r = ballot != 0; break;
    case ptx::VoteMode::kUni: r = ballot == 0 || ballot == mask; break;
    case ptx::VoteMode::kBallot: r = ballot; break;
    case ptx::VoteMode::kNone: break;
  }
  ForEachLane(mask, [&](int l) { d[l] = r; });
  return true;
}

template <typename T>
bool Redux(WarpState& w, const Instruction& in, uint32_t mask) {
  Src a = w.S(in.src[0]);
  bool first = true;
  T acc{};
  ForEachLane(mask, [&](int l) {
    T v = As<T>(a[l]);
    if (first) {
      acc = v;
      first = false;
      return;
    }
    switch (in.mod.atom) {
      case ptx::AtomOp::kAdd: acc = T(acc + v); break;
      case ptx::AtomOp::kMin: acc = std::min(acc, v); break;
      case ptx::AtomOp::kMax: acc = std::max(acc, v); break;
      case ptx::AtomOp::kAnd: acc = acc & v; break;
      case ptx::AtomOp::kOr: acc = acc | v; break;
      case ptx::AtomOp::kXor: acc = acc ^ v; break;
      default: break;
    }
  });
  uint64_t* d = w.Reg(in.dst[0].reg);
  ForEachLane(mask, [&](int l) { d[l] = Bits<T>(acc); });
  return true;
}

bool Activemask(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  ForEachLane(mask, [&](int l) { d[l] = mask; });
  return true;
}

}  // namespace

ptx::Handler WarpHandler(const Instruction& in) {
  switch (in.opcode) {
    case ptx::Opcode::kShfl:
      return in.type == Type::kB32 && in.num_src == 4 ? &Shfl : nullptr;
    case ptx::Opcode::kVote:
      if (in.mod.vote == ptx::VoteMode::kBallot) return in.type == Type::kB32 ? &Vote : nullptr;
      return in.type == Type::kPred ? &Vote : nullptr;
    case ptx::Opcode::kRedux: {
      ptx::AtomOp op = in.mod.atom;
      bool bitwise = op == ptx::AtomOp::kAnd || op == ptx::AtomOp::kOr || op == ptx::AtomOp::kXor;
      if (bitwise) return in.type == Type::kB32 ? &Redux<uint32_t> : nullptr;
      if (op != ptx::AtomOp::kAdd && op != ptx::AtomOp::kMin && op != ptx::AtomOp::kMax) return nullptr;
      return in.type == Type::kU32 ? &Redux<uint32_t> : in.type == Type::kS32 ? &Redux<int32_t> : nullptr;
    }
    case ptx::Opcode::kActivemask:
      return in.type == Type::kB32 ? &Activemask : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace kiln::emu
