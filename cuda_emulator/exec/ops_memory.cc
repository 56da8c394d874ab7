// Memory instructions: ld/ldu, st, atom and red on the global, shared,
// local, param, const and generic spaces.
//
// Every lane's access is checked before it happens (memcheck): a global
// access must lie inside a live allocation, a shared one inside the
// block's static + dynamic shared memory, a local one inside the thread's
// local frame, and every access must be aligned to its size. Shared
// accesses feed the race checker. Global requests are counted with the
// distinct 32-byte sectors they touch, shared requests with the wavefronts
// their bank conflicts need. Each access also tells the timing model's
// scoreboard its latency (WarpState::memory_latency): a global load that
// the warp's modeled L1 holds, that an earlier access of the launch brought
// into L2, or that reads a sector for the first time (DRAM).
#include <algorithm>

#include "cuda_emulator/exec/float_math.h"
#include "cuda_emulator/exec/sector_tracker.h"
#include "cuda_emulator/exec/shared_race_checker.h"
#include "cuda_emulator/exec/warp_state.h"
#include "cuda_emulator/model/h100_figures.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::Opcode;
using ptx::Space;
using ptx::Type;
namespace fig = model::h100;

enum class Access { kLoad, kStore, kAtomic };

const char* AccessName(Access a) {
  return a == Access::kLoad ? "load" : a == Access::kStore ? "store" : "atomic";
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The space an access really goes to (generic addresses carry it).
Space Resolve(Space space, uint64_t& address) {
  if (space != Space::kGeneric) {
    if (space == Space::kShared || space == Space::kLocal) address &= kWindowMask;
    return space == Space::kConst ? Space::kGlobal : space;
  }
  uint64_t window = address & ~kWindowMask;
  if (window == kSharedWindow) {
    address &= kWindowMask;
    return Space::kShared;
  }
  if (window == kLocalWindow) {
    address &= kWindowMask;
    return Space::kLocal;
  }
  return Space::kGlobal;
}

// One lane's access: the host pointer, or nullptr after recording the
// error. `alloc` receives the global allocation.
uint8_t* Translate(WarpState& w, Space space, uint64_t address, uint32_t size, int lane,
                   Access kind, Space* resolved, Allocation** alloc) {
  *resolved = Resolve(space, address);
  // Built only when an access fails: this runs for every lane's access.
  auto what = [&] {
    return std::string("invalid ") + std::string(ptx::SpaceName(*resolved)) + " " +
           AccessName(kind) + " of " + std::to_string(size) + " bytes at ";
  };
  if (address % size != 0 && *resolved != Space::kParam) {
    w.Fail(lane, "misaligned " + std::string(ptx::SpaceName(*resolved)) + " " + AccessName(kind) +
                     " of " + std::to_string(size) + " bytes at " + Hex(address));
    return nullptr;
  }
  switch (*resolved) {
    case Space::kParam: {
      const std::vector<uint8_t>& p = w.launch->params;
      if (address > p.size() || size > p.size() - address) {
        w.Fail(lane, what() + "param offset " + Hex(address),
               "the kernel has " + std::to_string(p.size()) + " bytes of parameters");
        return nullptr;
      }
      return const_cast<uint8_t*>(p.data()) + address;
    }
    case Space::kShared: {
      uint32_t n = w.launch->shared_bytes;
      if (address > n || size > n - address) {
        w.Fail(lane, what() + "shared offset " + Hex(address),
               "the block has " + std::to_string(n) + " bytes of shared memory (" +
                   std::to_string(w.kernel->static_shared_bytes) + " static + " +
                   std::to_string(w.launch->config.dynamic_shared_bytes) + " dynamic)");
        return nullptr;
      }
      return w.block->shared + address;
    }
    case Space::kLocal: {
      uint32_t n = w.kernel->local_bytes;
      if (address > n || size > n - address) {
        w.Fail(lane, what() + "local offset " + Hex(address),
               "the thread has " + std::to_string(n) + " bytes of local memory");
        return nullptr;
      }
      return w.local + static_cast<size_t>(lane) * n + address;
    }
    default: {
      Allocation* a = w.worker->last_allocation;
      if (!a || !a->Contains(address, size)) {
        a = w.launch->memory->Find(address, size);
        if (!a) {
          w.Fail(lane, what() + Hex(address), w.launch->memory->Describe(address, size));
          return nullptr;
        }
        w.worker->last_allocation = a;
      }
      *alloc = a;
      return reinterpret_cast<uint8_t*>(address);
    }
  }
}

// Counts one warp-level global request: distinct sectors now, unique
// sectors of the launch through the tracker. Returns a load's latency.
struct RequestCounter {
  uint64_t sectors[32];
  Allocation* allocs[32];
  int n = 0;
  void Add(uint64_t address, Allocation* a) {
    sectors[n] = address >> 5;
    allocs[n] = a;
    ++n;
  }
  uint32_t Finish(WarpState& w, Access kind, uint64_t bytes) {
    if (n == 0) return 0;
    KilnEmuCounters& c = w.counters();
    // Unique sectors over the launch; a load of a sector no access of the
    // launch read or wrote before comes from DRAM.
    bool first_read = false;
    for (int i = 0; i < n; ++i) {
      Allocation* a = allocs[i];
      WorkerState& ws = *w.worker;
      if (ws.sector_alloc != a) {
        ws.sector_alloc = a;
        ws.sector_maps = w.launch->sectors->For(a);
      }
      uint64_t index = sectors[i] - (a->base >> 5);
      const SectorTrackerBitmaps& maps = *ws.sector_maps;
      auto* bits = kind == Access::kLoad ? maps.load.get() : kind == Access::kStore ? maps.store.get() : maps.atomic.get();
      if (SectorTracker::Mark(bits, index)) {
        if (kind == Access::kLoad && !SectorTracker::IsMarked(maps.store.get(), index)) first_read = true;
        (kind == Access::kLoad    ? c.global_unique_load_sectors
         : kind == Access::kStore ? c.global_unique_store_sectors
                                  : c.global_unique_atomic_sectors)++;
      }
    }
    if (kind == Access::kAtomic) {
      c.global_atomic_lanes += n;
      return fig::kL2HitLatency;  // performed at the L2
    }
    std::sort(sectors, sectors + n);
    uint64_t distinct = std::unique(sectors, sectors + n) - sectors;
    if (kind == Access::kStore) {
      c.global_store_requests++;
      c.global_store_sectors += distinct;
      c.global_store_bytes += bytes;
      return 0;
    }
    c.global_load_requests++;
    c.global_load_sectors += distinct;
    c.global_load_bytes += bytes;
    uint64_t hits = 0;
    for (uint64_t i = 0; i < distinct; ++i) hits += w.l1.Access(sectors[i]);
    c.global_load_l1_hit_sectors += hits;
    return hits == distinct ? fig::kL1HitLatency : first_read ? fig::kDramLatency : fig::kL2HitLatency;
  }
};

// Bank conflicts of one shared request: the most distinct 4-byte words any
// bank serves (a word read by several lanes is broadcast).
struct SharedCounter {
  uint32_t words[128];
  int n = 0;
  void Add(uint64_t offset, uint32_t size) {
    for (uint32_t b = 0; b < std::max<uint32_t>(size, 4) && n < 128; b += 4)
      words[n++] = static_cast<uint32_t>((offset + b) >> 2);
  }
  // Returns the request's latency.
  uint32_t Finish(WarpState& w, bool store) {
    if (n == 0) return 0;
    KilnEmuCounters& c = w.counters();
    std::sort(words, words + n);
    int distinct = static_cast<int>(std::unique(words, words + n) - words);
    uint32_t per_bank[32] = {};
    uint32_t worst = 0;
    for (int i = 0; i < distinct; ++i) worst = std::max(worst, ++per_bank[words[i] & 31]);
    (store ? c.shared_store_requests : c.shared_load_requests)++;
    c.shared_wavefronts += worst;
    c.shared_bank_conflicts += worst - 1;
    return fig::kSharedLatency + worst - 1;
  }
};

uint32_t ElementBytes(Type t) { return static_cast<uint32_t>(std::max(8, ptx::TypeBits(t)) / 8); }

uint64_t LoadValue(const uint8_t* p, Type t) {
  switch (t) {
    case Type::kS8: return static_cast<uint64_t>(static_cast<int64_t>(*reinterpret_cast<const int8_t*>(p)));
    case Type::kS16: { int16_t v; std::memcpy(&v, p, 2); return static_cast<uint64_t>(int64_t(v)); }
    case Type::kS32: { int32_t v; std::memcpy(&v, p, 4); return static_cast<uint64_t>(int64_t(v)); }
    default: {
      uint64_t v = 0;
      std::memcpy(&v, p, ElementBytes(t));
      return v;
    }
  }
}

// Checks and counts every lane of a memory instruction; `body(lane, ptr)`
// performs the access. False when a lane failed.
template <typename Body>
bool ForEachAccess(WarpState& w, const Instruction& in, const ptx::Operand& address_op,
                   uint32_t size, Access kind, uint32_t mask, Body&& body) {
  Src base = address_op.symbol_base ? Src{&address_op.imm, 0} : w.S(address_op);
  uint64_t offset = address_op.symbol_base ? 0 : address_op.imm;
  RequestCounter global;
  SharedCounter shared;
  bool any_shared = false, any_local = false, any_param = false;
  bool store = kind != Access::kLoad;
  bool ok = true;
  const CheckOptions& checks = w.launch->checks;
  ForEachLane(mask, [&](int l) {
    if (!ok) return;
    uint64_t address = base[l] + offset;
    Space resolved;
    Allocation* alloc = nullptr;
    uint8_t* p = Translate(w, in.mod.space, address, size, l, kind, &resolved, &alloc);
    if (!p) {
      ok = false;
      return;
    }
    if (resolved == Space::kGlobal) {
      uint64_t a = reinterpret_cast<uint64_t>(p);
      if (checks.uninitialized && kind != Access::kStore) {
        int64_t at = alloc->FirstUninitialized(a, size);
        if (at >= 0) {
          ok = w.Fail(l, "uninitialized global " + std::string(AccessName(kind)) + " of " +
                             std::to_string(size) + " bytes at " + Hex(a),
                      "byte " + Hex(static_cast<uint64_t>(at)) + " was never written");
          return;
        }
      }
      global.Add(a, alloc);
      if (store && checks.uninitialized) alloc->MarkInitialized(a, size);
    } else if (resolved == Space::kShared) {
      any_shared = true;
      uint64_t off = static_cast<uint64_t>(p - w.block->shared);
      if (kind != Access::kAtomic) shared.Add(off, size);
      if (w.block->race && kind != Access::kAtomic) {
        std::string hazard = w.block->race->Access(static_cast<uint32_t>(off), size,
                                                   w.LinearThread(l), store);
        if (!hazard.empty()) {
          ok = w.Fail(l, "shared-memory " + hazard);
          return;
        }
      }
    } else if (resolved == Space::kLocal) {
      any_local = true;
    } else {
      any_param = true;
    }
    body(l, p);
  });
  if (!ok) return false;
  uint32_t latency = global.Finish(w, kind, uint64_t(size) * global.n);
  if (any_shared) latency = std::max(latency, kind == Access::kAtomic ? fig::kSharedLatency : shared.Finish(w, store));
  if (any_local) {
    w.counters().local_requests++;
    latency = std::max(latency, fig::kL1HitLatency);
  }
  if (any_param) latency = std::max(latency, fig::kParamLatency);
  w.memory_latency = latency;
  return true;
}

bool Ld(WarpState& w, const Instruction& in, uint32_t mask) {
  uint32_t elem = ElementBytes(in.type), n = in.mod.vector;
  const ptx::Operand& d = in.dst[0];
  return ForEachAccess(w, in, in.src[0], elem * n, Access::kLoad, mask, [&](int l, uint8_t* p) {
    if (d.kind == ptx::Operand::Kind::kVector) {
      for (uint32_t i = 0; i < n; ++i)
        if (d.vector[i] != ~0u) w.Reg(d.vector[i])[l] = LoadValue(p + i * elem, in.type);
    } else {
      w.Reg(d.reg)[l] = LoadValue(p, in.type);
    }
  });
}

bool St(WarpState& w, const Instruction& in, uint32_t mask) {
  uint32_t elem = ElementBytes(in.type), n = in.mod.vector;
  const ptx::Operand& v = in.src[1];
  Src scalar = v.kind == ptx::Operand::Kind::kVector ? Src{&v.imm, 0} : w.S(v);
  return ForEachAccess(w, in, in.src[0], elem * n, Access::kStore, mask, [&](int l, uint8_t* p) {
    if (v.kind == ptx::Operand::Kind::kVector) {
      for (uint32_t i = 0; i < n; ++i) {
        uint64_t x = (v.vector_imm_mask >> i) & 1 ? v.vector_imm[i] : w.Reg(v.vector[i])[l];
        std::memcpy(p + i * elem, &x, elem);
      }
    } else {
      uint64_t x = scalar[l];
      std::memcpy(p, &x, elem);
    }
  });
}

// ---- Atomics -----------------------------------------------------------------------

// Applies `update(old) -> new` atomically to the value at p; returns old.
template <typename T, typename F>
T AtomicUpdate(uint8_t* p, F update) {
  using Raw = std::conditional_t<sizeof(T) == 8, uint64_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;
  Raw* r = reinterpret_cast<Raw*>(p);
  Raw old = __atomic_load_n(r, __ATOMIC_RELAXED);
  for (;;) {
    T next = update(std::bit_cast<T>(old));
    Raw want = std::bit_cast<Raw>(next);
    if (__atomic_compare_exchange_n(r, &old, want, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return std::bit_cast<T>(old);
  }
}

template <typename T>
T AtomicApply(ptx::AtomOp op, T old, T b, T c) {
  using A = ptx::AtomOp;
  switch (op) {
    case A::kAdd: return T(old + b);
    case A::kMin: return std::min(old, b);
    case A::kMax: return std::max(old, b);
    case A::kExch: return b;
    case A::kCas: return old == b ? c : old;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case A::kAnd: return old & b;
      case A::kOr: return old | b;
      case A::kXor: return old ^ b;
      case A::kInc: return old >= b ? T(0) : T(old + 1);
      case A::kDec: return (old == 0 || old > b) ? b : T(old - 1);
      default: break;
    }
  }
  return old;
}

// atom.add.f32/f64 follow IEEE addition (NaN propagates); min/max on floats
// follow PTX min/max.
template <typename T>
bool Atomic(WarpState& w, const Instruction& in, uint32_t mask) {
  bool is_red = in.opcode == Opcode::kRed;
  const ptx::Operand& addr = in.src[0];
  Src b = w.S(in.src[1]);
  Src c = (!is_red && in.num_src > 2) ? w.S(in.src[2]) : b;
  uint64_t* d = is_red ? nullptr : w.Reg(in.dst[0].reg);
  ptx::AtomOp op = in.mod.atom;
  KilnEmuCounters& counters = w.counters();
  counters.atomics++;
  counters.atomic_lanes += std::popcount(mask);
  return ForEachAccess(w, in, addr, sizeof(T), Access::kAtomic, mask, [&](int l, uint8_t* p) {
    T bv = As<T>(b[l]), cv = As<T>(c[l]);
    T old = AtomicUpdate<T>(p, [&](T o) { return AtomicApply<T>(op, o, bv, cv); });
    if (d) d[l] = Bits<T>(old);
  });
}

// atom.add.noftz.{f16,bf16}: the sum of two narrow values is exact in
// double and rounds once to nearest even.
template <bool kBf16>
bool AtomicHalfAdd(WarpState& w, const Instruction& in, uint32_t mask) {
  bool is_red = in.opcode == Opcode::kRed;
  Src b = w.S(in.src[1]);
  uint64_t* d = is_red ? nullptr : w.Reg(in.dst[0].reg);
  w.counters().atomics++;
  w.counters().atomic_lanes += std::popcount(mask);
  auto value = [](uint16_t h) { return kBf16 ? double(BF16ToF32(h)) : double(F16ToF32(h)); };
  return ForEachAccess(w, in, in.src[0], 2, Access::kAtomic, mask, [&](int l, uint8_t* p) {
    uint16_t bv = uint16_t(b[l]);
    uint16_t old = AtomicUpdate<uint16_t>(p, [&](uint16_t o) {
      double sum = value(o) + value(bv);
      return kBf16 ? DoubleToBF16(sum, ptx::Rounding::kRn) : DoubleToF16(sum, ptx::Rounding::kRn);
    });
    if (d) d[l] = old;
  });
}

}  // namespace

ptx::Handler MemoryHandler(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::kLd:
      if (in.type == Type::kPred || in.type == Type::kB128) return nullptr;
      if (in.mod.vector > 1 && in.dst[0].kind != ptx::Operand::Kind::kVector) return nullptr;
      if (in.src[0].kind != ptx::Operand::Kind::kAddress) return nullptr;
      return &Ld;
    case Opcode::kSt:
      if (in.type == Type::kPred || in.type == Type::kB128) return nullptr;
      if (in.mod.vector > 1 && in.src[1].kind != ptx::Operand::Kind::kVector) return nullptr;
      return &St;
    case Opcode::kAtom:
    case Opcode::kRed: {
      const ptx::Operand& a = in.src[0];
      if (a.kind != ptx::Operand::Kind::kAddress) return nullptr;
      if (in.mod.space == Space::kLocal || in.mod.space == Space::kParam) return nullptr;
      ptx::AtomOp op = in.mod.atom;
      bool bitwise = op == ptx::AtomOp::kAnd || op == ptx::AtomOp::kOr || op == ptx::AtomOp::kXor;
      switch (in.type) {
        case Type::kB32: return bitwise || op == ptx::AtomOp::kExch || op == ptx::AtomOp::kCas ? &Atomic<uint32_t> : nullptr;
        case Type::kB64: return bitwise || op == ptx::AtomOp::kExch || op == ptx::AtomOp::kCas ? &Atomic<uint64_t> : nullptr;
        case Type::kU32: return bitwise ? nullptr : &Atomic<uint32_t>;
        case Type::kS32: return bitwise || op == ptx::AtomOp::kInc || op == ptx::AtomOp::kDec ? nullptr : &Atomic<int32_t>;
        case Type::kU64: return bitwise || op == ptx::AtomOp::kInc || op == ptx::AtomOp::kDec ? nullptr : &Atomic<uint64_t>;
        case Type::kS64: return op == ptx::AtomOp::kAdd || op == ptx::AtomOp::kMin || op == ptx::AtomOp::kMax ? &Atomic<int64_t> : nullptr;
        case Type::kF32: return op == ptx::AtomOp::kAdd || op == ptx::AtomOp::kExch || op == ptx::AtomOp::kMin || op == ptx::AtomOp::kMax ? &Atomic<float> : nullptr;
        case Type::kF64: return op == ptx::AtomOp::kAdd ? &Atomic<double> : nullptr;
        case Type::kF16: return op == ptx::AtomOp::kAdd ? &AtomicHalfAdd<false> : nullptr;
        case Type::kBF16: return op == ptx::AtomOp::kAdd ? &AtomicHalfAdd<true> : nullptr;
        default: return nullptr;
      }
    }
    default: return nullptr;
  }
}

}  // namespace kiln::emu
