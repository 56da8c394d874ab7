// The GPU reduction emitter (see reduction_emitter.h for the kernel shapes).
//
// Launch-dimension heuristic (recorded on each kernel's launch):
//   row, vectors per row C = K / V (V = 16 bytes of the operand's type, or
//   the largest power of two dividing K below it):
//     T = the power of two >= C / 4 (about 4 loads per thread), in [1, 1024];
//     T <= 32: blocks of 256 threads holding 256 / T rows;
//     T > 32:  one block of T threads per row.
//   column: W = the power of two >= K / 8, in [1, 16] warps, one block per
//     (kept-major index, 32 columns).
// Each thread unrolls up to 4 iterations, loads first.
#include "compiler/codegen/reduction_emitter.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/codegen/tiled_kernel_ir.h"
#include "compiler/hlo/opcode.h"
#include "compiler/passes/fusible_ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;

constexpr int64_t kWarp = 32;
constexpr int64_t kMaxUnroll = 4;
constexpr int64_t kPackedBlockThreads = 256;
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxColumnWarps = 16;

int64_t PowerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Plan {
  std::vector<const HloInstruction*> heroes;
  passes::ReductionGroups groups;
  bool row = true;
  int64_t vector = 1;          // row: consecutive elements per load
  int64_t threads = 1;         // row: threads per row (T)
  int64_t warps = 1;           // warps per block (W)
  int64_t rows_per_block = 1;  // row
  int64_t blocks = 1;
  int64_t iterations = 1;      // loads (of `vector` elements) per thread
  int64_t unroll = 1;
};

int64_t HeroOutputs(const HloInstruction& hero) { return hero.operand_count() / 2; }

bool SameReduction(const HloInstruction& a, const HloInstruction& b) {
  std::vector<int64_t> da = a.dimensions(), db = b.dimensions();
  std::sort(da.begin(), da.end());
  std::sort(db.begin(), db.end());
  return da == db && a.operand(0)->shape().dims() == b.operand(0)->shape().dims();
}

// Whether some hero is reachable from `from` through operands.
bool ReachesHero(const HloInstruction* from, const std::unordered_set<const HloInstruction*>& heroes) {
  std::vector<const HloInstruction*> stack{from};
  std::unordered_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (heroes.count(x)) return true;
    for (const HloInstruction* op : x->operands()) stack.push_back(op);
  }
  return false;
}

std::optional<Plan> MakePlan(const hlo::HloComputation& comp) {
  Plan p;
  for (const HloInstruction* inst : comp.instructions())
    if (inst->opcode() == HloOpcode::kReduce) p.heroes.push_back(inst);
  if (p.heroes.empty()) return std::nullopt;
  const HloInstruction& first = *p.heroes[0];
  std::optional<passes::ReductionGroups> groups = passes::GroupReduction(first);
  if (!groups || groups->k <= 1) return std::nullopt;
  p.groups = *groups;
  const Shape& out0 = first.shape().IsTuple() ? first.shape().tuple_shape(0) : first.shape();
  std::unordered_set<const HloInstruction*> heroes(p.heroes.begin(), p.heroes.end());
  for (const HloInstruction* h : p.heroes) {
    if (h->operand_count() < 2 || h->operand_count() % 2 != 0 || !h->to_apply() || !SameReduction(first, *h))
      return std::nullopt;
    for (int64_t i = 0; i < h->operand_count(); ++i)
      if (ReachesHero(h->operand(i), heroes)) return std::nullopt;
  }
  // Everything using a hero is evaluated per output element.
  std::unordered_set<const HloInstruction*> after(heroes);
  for (const HloInstruction* inst : comp.PostOrder()) {
    if (heroes.count(inst)) continue;
    bool uses = false;
    for (const HloInstruction* op : inst->operands()) uses |= after.count(op) > 0;
    if (!uses) continue;
    after.insert(inst);
    bool root_tuple = inst == comp.root() && inst->opcode() == HloOpcode::kTuple;
    bool gte = inst->opcode() == HloOpcode::kGetTupleElement;
    if (!root_tuple && !((gte || hlo::IsElementwise(inst->opcode())) && inst->shape().IsArray() &&
                         inst->shape().dims() == out0.dims()))
      return std::nullopt;
  }
  const HloInstruction* root = comp.root();
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
  } else {
    outputs.push_back(root);
  }
  for (const HloInstruction* out : outputs) {
    const Shape& s = out->shape().IsTuple() && out == root && heroes.count(out) ? out->shape().tuple_shape(0)
                                                                                : out->shape();
    if (!s.IsArray() || s.dims() != out0.dims()) return std::nullopt;
    if (out != root && out->shape().IsTuple()) return std::nullopt;
  }
  const int64_t k = p.groups.k;
  p.row = p.groups.m == 1;
  if (p.row) {
    int bytes = std::max(1, StorageBytes(first.operand(0)->shape().element_type()));
    p.vector = std::clamp<int64_t>(16 / bytes, 1, 8);
    while (p.vector > 1 && k % p.vector != 0) p.vector /= 2;
    int64_t vectors = k / p.vector;
    p.threads = std::clamp<int64_t>(PowerOfTwoAtLeast(CeilDiv(vectors, kMaxUnroll)), 1, kMaxBlockThreads);
    if (p.threads <= kWarp) {
      p.warps = kPackedBlockThreads / kWarp;
      p.rows_per_block = kPackedBlockThreads / p.threads;
    } else {
      p.warps = p.threads / kWarp;
      p.rows_per_block = 1;
    }
    p.blocks = CeilDiv(p.groups.a, p.rows_per_block);
    p.iterations = CeilDiv(vectors, p.threads);
  } else {
    p.warps = std::clamp<int64_t>(PowerOfTwoAtLeast(CeilDiv(k, 8)), 1, kMaxColumnWarps);
    p.blocks = p.groups.a * CeilDiv(p.groups.m, kWarp);
    p.iterations = CeilDiv(k, p.warps);
  }
  p.unroll = std::min(p.iterations, kMaxUnroll);
  return p;
}

class GpuReductionEmitter {
 public:
  GpuReductionEmitter(mlir::ModuleOp module, const KernelSpec& spec, Plan plan)
      : module_(module), spec_(spec), comp_(*spec.computation), plan_(std::move(plan)),
        b_(module.getContext()), loc_(mlir::NameLoc::get(b_.getStringAttr(spec.name))),
        pool_(module, spec.name), m_(b_, loc_), ops_(b_, loc_) {}

  StatusOr<KernelInfo> Emit() {
    mlir::MLIRContext* ctx = module_.getContext();
    const HloInstruction* root = comp_.root();
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* op : root->operands()) out_shapes_.push_back(op->shape());
    } else if (root->shape().IsTuple()) {
      for (int64_t i = 0; i < root->shape().tuple_size(); ++i) out_shapes_.push_back(root->shape().tuple_shape(i));
    } else {
      out_shapes_.push_back(root->shape());
    }
    KernelFunction kernel =
        BeginKernelFunction(b_, loc_, module_, spec_.name, comp_.ParameterShapes(), out_shapes_);
    mlir::Block* entry = kernel.entry;
    args_ = kernel.params;
    outs_ = kernel.outputs;
    for (const HloInstruction* h : plan_.heroes) {
      ElementType t = h->operand(0)->shape().element_type();
      widened_.push_back(HeroOutputs(*h) == 1 && (t == ElementType::kF16 || t == ElementType::kBF16) &&
                         passes::IsScalarAdd(*h->to_apply()));
      for (int64_t i = 0; i < HeroOutputs(*h); ++i) {
        ElementType init = h->operand(HeroOutputs(*h) + i)->shape().element_type();
        acc_types_.push_back(widened_.back() ? b_.getF32Type() : ValueType(ctx, init));
      }
    }
    Status status = Status::Ok();
    auto blocks = mlir::scf::ParallelOp::create(
        b_, loc_, mlir::ValueRange{m_.Const(0)}, mlir::ValueRange{m_.Const(plan_.blocks)},
        mlir::ValueRange{m_.Const(1)}, [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
          b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = plan_.row ? EmitRowBlock(ivs[0]) : EmitColumnBlock(ivs[0]);
          nested.setInsertionPoint(b_.getInsertionBlock(), b_.getInsertionPoint());
        });
    blocks->setAttr(kTilesAttr, b_.getUnitAttr());
    KILN_RETURN_IF_ERROR(status.WithContext("kernel " + spec_.name));
    b_.setInsertionPointToEnd(entry);
    mlir::func::ReturnOp::create(b_, loc_);
    LaunchDims launch{{plan_.blocks, 1, 1}, {kWarp, plan_.warps, 1}, 0};
    KernelInfo info(spec_.name, static_cast<int>(kernel.entry->getNumArguments()), out_shapes_[0].ElementCount(), launch);
    return info;
  }

 private:
  using Values = std::vector<Value>;
  using ThreadBody = std::function<Status(Value warp, Value lane)>;

  // scf.parallel (%warp, %lane) {kiln.threads} over the block.
  Status ThreadLoop(const ThreadBody& body) {
    Status status = Status::Ok();
    auto loop = mlir::scf::ParallelOp::create(
        b_, loc_, mlir::ValueRange{m_.Const(0), m_.Const(0)},
        mlir::ValueRange{m_.Const(plan_.warps), m_.Const(kWarp)}, mlir::ValueRange{m_.Const(1), m_.Const(1)},
        [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ids) {
          mlir::OpBuilder::InsertionGuard guard(b_);
          b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = body(ids[0], ids[1]);
        });
    loop->setAttr(kThreadsAttr, b_.getUnitAttr());
    return status;
  }

  // Runs `fn` under scf.if `cond` (no results).
  Status If(Value cond, const std::function<Status()>& fn) {
    auto op = mlir::scf::IfOp::create(b_, loc_, cond, /*withElseRegion=*/false);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(op.thenBlock());
    return fn();
  }

  // scf.if `cond` yielding `fn()` or else `otherwise`.
  StatusOr<Values> IfValues(Value cond, const std::function<StatusOr<Values>()>& fn, const Values& otherwise) {
    std::vector<mlir::Type> types;
    for (Value v : otherwise) types.push_back(v.getType());
    auto op = mlir::scf::IfOp::create(b_, loc_, types, cond, /*withElseRegion=*/true);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(op.thenBlock());
    KILN_ASSIGN_OR_RETURN(Values values, fn());
    mlir::scf::YieldOp::create(b_, loc_, values);
    b_.setInsertionPointToStart(op.elseBlock());
    mlir::scf::YieldOp::create(b_, loc_, otherwise);
    return Values(op.getResults().begin(), op.getResults().end());
  }

  ElementalEmitter NewEmitter() { return ElementalEmitter(b_, loc_, pool_, args_, /*scalar_params=*/false); }

  // The accumulators' initial values, hero after hero.
  StatusOr<Values> Inits() {
    ElementalEmitter e = NewEmitter();
    Values inits;
    for (size_t h = 0; h < plan_.heroes.size(); ++h) {
      const HloInstruction& hero = *plan_.heroes[h];
      for (int64_t i = 0; i < HeroOutputs(hero); ++i) {
        KILN_ASSIGN_OR_RETURN(Value v, e.Emit(hero.operand(HeroOutputs(hero) + i), Index{}));
        inits.push_back(widened_[h] ? ops_.Widen(v) : v);
      }
    }
    return inits;
  }

  // The heroes' input elements at operand index `index`.
  StatusOr<Values> Elements(ElementalEmitter& e, const Index& index) {
    Values values;
    for (size_t h = 0; h < plan_.heroes.size(); ++h) {
      const HloInstruction& hero = *plan_.heroes[h];
      for (int64_t i = 0; i < HeroOutputs(hero); ++i) {
        KILN_ASSIGN_OR_RETURN(Value v, e.Emit(hero.operand(i), index));
        values.push_back(widened_[h] ? ops_.Widen(v) : v);
      }
    }
    return values;
  }

  // Every hero's reducer applied to (acc, x).
  StatusOr<Values> Combine(const Values& acc, const Values& x) {
    ElementalEmitter e = NewEmitter();
    Values out;
    size_t at = 0;
    for (size_t h = 0; h < plan_.heroes.size(); ++h) {
      const HloInstruction& hero = *plan_.heroes[h];
      size_t n = static_cast<size_t>(HeroOutputs(hero));
      if (widened_[h]) {
        out.push_back(mlir::arith::AddFOp::create(b_, loc_, acc[at], x[at]));
      } else {
        Values args(acc.begin() + at, acc.begin() + at + n);
        args.insert(args.end(), x.begin() + at, x.begin() + at + n);
        KILN_ASSIGN_OR_RETURN(Values r, e.ApplyScalar(*hero.to_apply(), args));
        out.insert(out.end(), r.begin(), r.end());
      }
      at += n;
    }
    return out;
  }

  // The thread's fold over its iterations i in [0, plan_.iterations):
  // `at(i)` gives the condition under which iteration i exists (null:
  // always) and the operand indices it reads. Unrolled by plan_.unroll,
  // each group's loads emitted before its combines.
  using Iteration = std::function<std::pair<Value, std::vector<Index>>(Value i)>;
  StatusOr<Values> Accumulate(const Values& inits, const Iteration& at) {
    int64_t unroll = plan_.unroll;
    int64_t outer = CeilDiv(plan_.iterations, unroll);
    bool ragged = plan_.iterations % unroll != 0;
    auto loop = mlir::scf::ForOp::create(b_, loc_, m_.Const(0), m_.Const(outer), m_.Const(1), inits);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    Values acc(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    std::vector<Values> loaded;
    for (int64_t u = 0; u < unroll; ++u) {
      Value i = m_.Add(m_.Mul(loop.getInductionVar(), unroll), m_.Const(u));
      auto [cond, indices] = at(i);
      if (ragged && u > 0) {
        Value exists = m_.Less(i, plan_.iterations);
        cond = cond ? m_.And(cond, exists) : exists;
      }
      auto load = [&, &indices = indices]() -> StatusOr<Values> {
        ElementalEmitter e = NewEmitter();
        Values all;
        for (const Index& index : indices) {
          KILN_ASSIGN_OR_RETURN(Values v, Elements(e, index));
          all.insert(all.end(), v.begin(), v.end());
        }
        return all;
      };
      Values repeated_inits;
      for (size_t k = 0; k < indices.size(); ++k) repeated_inits.insert(repeated_inits.end(), inits.begin(), inits.end());
      if (cond) {
        KILN_ASSIGN_OR_RETURN(Values v, IfValues(cond, load, repeated_inits));
        loaded.push_back(std::move(v));
      } else {
        KILN_ASSIGN_OR_RETURN(Values v, load());
        loaded.push_back(std::move(v));
      }
    }
    for (const Values& group : loaded) {
      for (size_t at = 0; at < group.size(); at += inits.size()) {
        Values x(group.begin() + at, group.begin() + at + inits.size());
        KILN_ASSIGN_OR_RETURN(acc, Combine(acc, x));
      }
    }
    mlir::scf::YieldOp::create(b_, loc_, acc);
    return Values(loop.getResults().begin(), loop.getResults().end());
  }

  // Combines the accumulators of each aligned group of `width` lanes into
  // the group's first lane (a shuffle-down tree).
  StatusOr<Values> WarpTree(Values acc, int64_t width) {
    for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
      Values other;
      for (Value v : acc) other.push_back(ShuffleDown(b_, loc_, module_, v, offset));
      KILN_ASSIGN_OR_RETURN(acc, Combine(acc, other));
    }
    return acc;
  }

  // Shared memory for one value per (warp[, lane]) per accumulator.
  std::vector<Value> SharedPartials(std::vector<int64_t> shape) {
    std::vector<Value> buffers;
    for (mlir::Type t : acc_types_) {
      auto type = mlir::MemRefType::get(shape, StoredType(t));
      auto alloca = mlir::memref::AllocaOp::create(b_, loc_, type);
      alloca->setAttr(kSharedBufferAttr, b_.getUnitAttr());
      buffers.push_back(alloca);
    }
    return buffers;
  }
  // pred and sub-byte integer accumulators live in shared memory as i8.
  static bool IsSubByte(mlir::Type t) { return t.isInteger() && t.getIntOrFloatBitWidth() < 8; }
  mlir::Type StoredType(mlir::Type t) { return IsSubByte(t) ? b_.getI8Type() : t; }
  void StoreShared(Value v, Value buffer, mlir::ValueRange index) {
    if (IsSubByte(v.getType())) v = mlir::arith::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
    mlir::memref::StoreOp::create(b_, loc_, v, buffer, index);
  }
  Value LoadShared(mlir::Type type, Value buffer, mlir::ValueRange index) {
    Value v = mlir::memref::LoadOp::create(b_, loc_, buffer, index);
    return IsSubByte(type) ? mlir::arith::TruncIOp::create(b_, loc_, type, v).getResult() : v;
  }

  // Seeds the heroes' combined values at `out_index` and stores every
  // output there (epilogue included).
  Status StoreOutputs(const Values& acc, const Index& out_index) {
    ElementalEmitter e = NewEmitter();
    size_t at = 0;
    for (size_t h = 0; h < plan_.heroes.size(); ++h) {
      const HloInstruction& hero = *plan_.heroes[h];
      size_t n = static_cast<size_t>(HeroOutputs(hero));
      Values values(acc.begin() + at, acc.begin() + at + n);
      if (widened_[h]) values[0] = ops_.Narrow(values[0], hero.shape().element_type());
      e.Seed(&hero, out_index, values);
      at += n;
    }
    const HloInstruction* root = comp_.root();
    Values values;
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* op : root->operands()) {
        KILN_ASSIGN_OR_RETURN(Value v, e.Emit(op, out_index));
        values.push_back(v);
      }
    } else {
      KILN_ASSIGN_OR_RETURN(values, e.EmitAll(root, out_index));
    }
    for (size_t k = 0; k < values.size(); ++k) {
      Value stored = ops_.ToStorage(values[k], out_shapes_[k].element_type());
      mlir::memref::StoreOp::create(b_, loc_, stored, outs_[k], out_index);
    }
    return Status::Ok();
  }

  const Shape& OperandShape() const { return plan_.heroes[0]->operand(0)->shape(); }

  // Row reduction: see the file comment.
  Status EmitRowBlock(Value block) {
    const int64_t rows = plan_.groups.a, k = plan_.groups.k, vec = plan_.vector, t_count = plan_.threads;
    const int64_t vectors = k / vec;
    const bool packed = t_count <= kWarp;
    std::vector<Value> partials;
    auto row_and_thread = [&](Value warp, Value lane) {
      Value tid = m_.Add(m_.Mul(warp, kWarp), lane);
      if (!packed) return std::pair{block, tid};
      Value row = m_.Add(m_.Mul(block, plan_.rows_per_block), m_.Div(tid, t_count));
      return std::pair{row, m_.Rem(tid, t_count)};
    };
    const bool ragged_rows = packed && rows % plan_.rows_per_block != 0;
    const bool ragged_vectors = vectors % t_count != 0;
    if (!packed) partials = SharedPartials({plan_.warps});
    KILN_RETURN_IF_ERROR(ThreadLoop([&](Value warp, Value lane) -> Status {
      auto [row, t] = row_and_thread(warp, lane);
      Value row_ok = ragged_rows ? m_.Less(row, rows) : Value();
      KILN_ASSIGN_OR_RETURN(Values inits, Inits());
      KILN_ASSIGN_OR_RETURN(Values acc, Accumulate(inits, [&, row = row, t = t](Value i) {
        Value c = m_.Add(t, m_.Mul(i, t_count));
        Value cond = row_ok;
        if (ragged_vectors) cond = cond ? m_.And(cond, m_.Less(c, vectors)) : m_.Less(c, vectors);
        std::vector<Index> indices;
        Value first = m_.Mul(c, vec);
        for (int64_t v = 0; v < vec; ++v)
          indices.push_back(m_.MultiIndex(OperandShape(), {rows, k}, {row, m_.Add(first, m_.Const(v))}));
        return std::pair{cond, indices};
      }));
      KILN_ASSIGN_OR_RETURN(acc, WarpTree(acc, std::min(t_count, kWarp)));
      if (packed) {
        Value first = m_.Equal(t, 0);
        if (row_ok) first = m_.And(first, row_ok);
        return If(first, [&, row = row] {
          return StoreOutputs(acc, m_.MultiIndex(out_shapes_[0], {rows}, {row}));
        });
      }
      return If(m_.Equal(lane, 0), [&] {
        for (size_t j = 0; j < acc.size(); ++j) StoreShared(acc[j], partials[j], mlir::ValueRange{warp});
        return Status::Ok();
      });
    }));
    if (packed) return Status::Ok();
    mlir::func::CallOp::create(b_, loc_, BarrierFunc(module_), mlir::ValueRange{});
    return ThreadLoop([&](Value warp, Value lane) -> Status {
      return If(m_.Equal(warp, 0), [&]() -> Status {
        KILN_ASSIGN_OR_RETURN(Values inits, Inits());
        KILN_ASSIGN_OR_RETURN(Values acc, IfValues(
                                              m_.Less(lane, plan_.warps),
                                              [&]() -> StatusOr<Values> {
                                                Values v;
                                                for (size_t j = 0; j < inits.size(); ++j)
                                                  v.push_back(LoadShared(inits[j].getType(), partials[j],
                                                                         mlir::ValueRange{lane}));
                                                return v;
                                              },
                                              inits));
        KILN_ASSIGN_OR_RETURN(acc, WarpTree(acc, plan_.warps));
        return If(m_.Equal(lane, 0),
                  [&] { return StoreOutputs(acc, m_.MultiIndex(out_shapes_[0], {rows}, {block})); });
      });
    });
  }

  // Column reduction: see the file comment.
  Status EmitColumnBlock(Value block) {
    const int64_t a = plan_.groups.a, k = plan_.groups.k, m = plan_.groups.m;
    const int64_t tiles = CeilDiv(m, kWarp);
    const bool ragged_columns = m % kWarp != 0;
    const bool ragged_rows = k % plan_.warps != 0;
    std::vector<Value> partials = SharedPartials({plan_.warps, kWarp});
    auto position = [&](Value lane) {
      Value a_idx = m_.Div(block, tiles);
      Value m_idx = m_.Add(m_.Mul(m_.Rem(block, tiles), kWarp), lane);
      return std::pair{a_idx, m_idx};
    };
    KILN_RETURN_IF_ERROR(ThreadLoop([&](Value warp, Value lane) -> Status {
      auto [a_idx, m_idx] = position(lane);
      Value col_ok = ragged_columns ? m_.Less(m_idx, m) : Value();
      KILN_ASSIGN_OR_RETURN(Values inits, Inits());
      KILN_ASSIGN_OR_RETURN(Values acc, Accumulate(inits, [&, a_idx = a_idx, m_idx = m_idx](Value i) {
        Value row = m_.Add(warp, m_.Mul(i, plan_.warps));
        Value cond = col_ok;
        if (ragged_rows) cond = cond ? m_.And(cond, m_.Less(row, k)) : m_.Less(row, k);
        std::vector<Index> indices{m_.MultiIndex(OperandShape(), {a, k, m}, {a_idx, row, m_idx})};
        return std::pair{cond, indices};
      }));
      for (size_t j = 0; j < acc.size(); ++j) StoreShared(acc[j], partials[j], mlir::ValueRange{warp, lane});
      return Status::Ok();
    }));
    mlir::func::CallOp::create(b_, loc_, BarrierFunc(module_), mlir::ValueRange{});
    return ThreadLoop([&](Value warp, Value lane) -> Status {
      return If(m_.Equal(warp, 0), [&]() -> Status {
        auto [a_idx, m_idx] = position(lane);
        Values acc;
        for (size_t j = 0; j < acc_types_.size(); ++j)
          acc.push_back(LoadShared(acc_types_[j], partials[j], mlir::ValueRange{m_.Const(0), lane}));
        for (int64_t w = 1; w < plan_.warps; ++w) {
          Values x;
          for (size_t j = 0; j < acc_types_.size(); ++j)
            x.push_back(LoadShared(acc_types_[j], partials[j], mlir::ValueRange{m_.Const(w), lane}));
          KILN_ASSIGN_OR_RETURN(acc, Combine(acc, x));
        }
        auto store = [&, a_idx = a_idx, m_idx = m_idx] {
          return StoreOutputs(acc, m_.MultiIndex(out_shapes_[0], {a, m}, {a_idx, m_idx}));
        };
        return ragged_columns ? If(m_.Less(m_idx, m), store) : store();
      });
    });
  }

  mlir::ModuleOp module_;
  const KernelSpec& spec_;
  const hlo::HloComputation& comp_;
  Plan plan_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  ConstantPool pool_;
  IndexMath m_;
  ScalarOps ops_;
  std::vector<Shape> out_shapes_;
  std::vector<Value> args_, outs_;
  std::vector<bool> widened_;
  // Per accumulator, hero after hero: f32 for a widened sum, else the
  // init's value type.
  std::vector<mlir::Type> acc_types_;
};

}  // namespace

bool IsGpuReductionKernel(const hlo::HloComputation& comp) { return MakePlan(comp).has_value(); }

StatusOr<KernelInfo> EmitGpuReductionKernel(mlir::ModuleOp module, const KernelSpec& spec) {
  std::optional<Plan> plan = MakePlan(*spec.computation);
  if (!plan) return Error("kernel " + spec.name + " is not a GPU reduction kernel");
  return GpuReductionEmitter(module, spec, std::move(*plan)).Emit();
}

}  // namespace kiln::codegen::internal
