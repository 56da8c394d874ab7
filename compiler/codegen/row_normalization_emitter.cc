// The row-normalization emitter (see row_normalization_emitter.h for the
// kernel shapes).
//
// Launch-dimension heuristic (recorded on each CUDA kernel's launch), as
// the row reduction emitter's: V = 16 bytes of the narrowest element-level
// parameter or output (at most 8 elements), halved until it divides K;
// C = K / V; T = the power of two >= C / 4 (about 4 vector loads per
// thread), in [1, 1024], doubled while below C and the launch has fewer
// than 132 x 256 threads (A * T); I = C / T rounded up (K <= 16384 keeps
// I * V <= 32 elements per thread). T <= 32: blocks of 256 threads holding
// 256 / T rows; T > 32: one block of T threads per row.
#include "compiler/codegen/row_normalization_emitter.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/codegen/tiled_kernel_ir.h"
#include "compiler/hlo/opcode.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/row_normalization.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;
using passes::RowLevel;

constexpr int64_t kWarp = 32;
constexpr int64_t kLoadsPerThread = 4;
constexpr int64_t kPackedBlockThreads = 256;
constexpr int64_t kMaxBlockThreads = 1024;
// Threads a launch should have at least (one block of 256 per SM of the
// H100's 132) before a thread takes several vectors of its row.
constexpr int64_t kMinThreads = 132 * 256;

int64_t PowerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<int64_t> NonUnit(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims)
    if (d != 1) out.push_back(d);
  return out;
}

struct Plan {
  passes::RowNormalization rn;
  // Per row-dependent instruction: the last stage whose reduces it needs.
  std::unordered_map<const HloInstruction*, int64_t> stage_of;
  std::vector<int64_t> row_dims;      // A's dimensions larger than 1
  std::vector<int64_t> element_dims;  // K's dimensions larger than 1
  int64_t vector = 1;                 // V
  int64_t vectors = 1;                // C = K / V
  int64_t threads = 1;                // T
  int64_t iterations = 1;             // I
  bool packed = true;
  int64_t warps = 1;
  int64_t rows_per_block = 1;
  int64_t blocks = 1;
};

std::optional<Plan> MakePlan(const hlo::HloComputation& comp) {
  std::optional<passes::RowNormalization> rn = passes::AnalyzeRowNormalization(comp);
  if (!rn) return std::nullopt;
  Plan p;
  p.rn = std::move(*rn);
  const passes::RowShape& row = p.rn.row;
  for (const HloInstruction* inst : p.rn.row_dependent) {
    int64_t s = 0;
    for (const HloInstruction* op : inst->operands()) {
      auto it = p.stage_of.find(op);
      if (it != p.stage_of.end()) s = std::max(s, it->second);
    }
    if (inst->opcode() == HloOpcode::kReduce) {
      for (size_t k = 0; k < p.rn.stages.size(); ++k)
        if (std::find(p.rn.stages[k].begin(), p.rn.stages[k].end(), inst) != p.rn.stages[k].end())
          s = static_cast<int64_t>(k);
    }
    p.stage_of[inst] = s;
  }
  std::vector<int64_t> kept, reduced;
  for (size_t d = 0; d < row.operand_dims.size(); ++d) {
    bool r = std::binary_search(row.reduced_dims.begin(), row.reduced_dims.end(), static_cast<int64_t>(d));
    (r ? reduced : kept).push_back(row.operand_dims[d]);
  }
  p.row_dims = NonUnit(kept);
  p.element_dims = NonUnit(reduced);
  // V from the narrowest element-level parameter or output.
  int bytes = 4;
  bool any = false;
  auto consider = [&](const Shape& s) {
    if (passes::LevelOf(s, row) != RowLevel::kElement) return;
    int b = std::max(1, StorageBytes(s.element_type()));
    bytes = any ? std::min(bytes, b) : b;
    any = true;
  };
  for (int64_t i = 0; i < comp.parameter_count(); ++i) consider(comp.parameter(i)->shape());
  for (const HloInstruction* out : p.rn.outputs) consider(out->shape());
  const int64_t k = row.row_elements;
  p.vector = std::clamp<int64_t>(16 / bytes, 1, 8);
  while (p.vector > 1 && k % p.vector != 0) p.vector /= 2;
  p.vectors = k / p.vector;
  p.threads = std::clamp<int64_t>(PowerOfTwoAtLeast(CeilDiv(p.vectors, kLoadsPerThread)), 1, kMaxBlockThreads);
  // Few rows: fewer vectors per thread, so the H100 has threads to run.
  while (p.threads < kMaxBlockThreads && p.threads < p.vectors && row.rows * p.threads < kMinThreads)
    p.threads *= 2;
  p.iterations = CeilDiv(p.vectors, p.threads);
  p.packed = p.threads <= kWarp;
  if (p.packed) {
    p.warps = kPackedBlockThreads / kWarp;
    p.rows_per_block = kPackedBlockThreads / p.threads;
  } else {
    p.warps = p.threads / kWarp;
    p.rows_per_block = 1;
  }
  p.blocks = CeilDiv(row.rows, p.rows_per_block);
  return p;
}

// Splits `linear` over `dims` (row-major), the first part undivided.
std::vector<Value> Split(IndexMath& m, Value linear, const std::vector<int64_t>& dims) {
  std::vector<Value> parts(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    parts[i] = i == 0 ? linear : m.Rem(linear, dims[i]);
    if (i > 0) linear = m.Div(linear, dims[i]);
  }
  return parts;
}

class RowNormalizationEmitter {
 public:
  RowNormalizationEmitter(mlir::ModuleOp module, const KernelSpec& spec, Plan plan)
      : module_(module), spec_(spec), comp_(*spec.computation), plan_(std::move(plan)),
        b_(module.getContext()), loc_(mlir::NameLoc::get(b_.getStringAttr(spec.name))),
        pool_(module, spec.name), m_(b_, loc_), ops_(b_, loc_) {}

  StatusOr<KernelInfo> Emit(KernelTarget target) {
    mlir::MLIRContext* ctx = module_.getContext();
    std::vector<Shape> out_shapes;
    for (const HloInstruction* out : plan_.rn.outputs) out_shapes.push_back(out->shape());
    KernelFunction kernel =
        BeginKernelFunction(b_, loc_, module_, spec_.name, comp_.ParameterShapes(), out_shapes);
    mlir::Block* entry = kernel.entry;
    args_ = kernel.params;
    outs_ = kernel.outputs;
    for (const std::vector<const HloInstruction*>& stage : plan_.rn.stages)
      for (const HloInstruction* r : stage) {
        ElementType t = r->operand(0)->shape().element_type();
        bool widened = (t == ElementType::kF16 || t == ElementType::kBF16) && passes::IsScalarAdd(*r->to_apply());
        widened_[r] = widened;
        acc_types_[r] = widened ? b_.getF32Type() : ValueType(ctx, r->operand(1)->shape().element_type());
      }
    const bool cuda = target == KernelTarget::kCuda;
    const int64_t units = cuda ? plan_.blocks : plan_.rn.row.rows;
    Status status = Status::Ok();
    auto loop = mlir::scf::ParallelOp::create(
        b_, loc_, mlir::ValueRange{m_.Const(0)}, mlir::ValueRange{m_.Const(units)}, mlir::ValueRange{m_.Const(1)},
        [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
          b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = cuda ? EmitCudaBlock(ivs[0]) : EmitHostRow(ivs[0]);
          nested.setInsertionPoint(b_.getInsertionBlock(), b_.getInsertionPoint());
        });
    if (cuda) loop->setAttr(kTilesAttr, b_.getUnitAttr());
    KILN_RETURN_IF_ERROR(status.WithContext("kernel " + spec_.name));
    b_.setInsertionPointToEnd(entry);
    mlir::func::ReturnOp::create(b_, loc_);
    const int64_t rows = plan_.rn.row.rows, k = plan_.rn.row.row_elements;
    const Shape& first = plan_.rn.outputs[0]->shape();
    if (cuda) {
      LaunchDims launch{{plan_.blocks, 1, 1}, {kWarp, plan_.warps, 1}, 0};
      return KernelInfo(spec_.name, static_cast<int>(kernel.entry->getNumArguments()), first.ElementCount(), launch);
    }
    KernelInfo info(spec_.name, static_cast<int>(kernel.entry->getNumArguments()), first.ElementCount());
    info.host_split_dim = 0;
    info.host_units = rows;
    info.host_work = rows * k * static_cast<int64_t>(plan_.rn.stages.size() + 1);
    return info;
  }

 private:
  using Values = std::vector<Value>;
  // A stage's reduces (in stage order, so the IR is the same every time)
  // and their accumulated values.
  using Results = std::vector<std::pair<const HloInstruction*, Value>>;

  ElementalEmitter NewEmitter() { return ElementalEmitter(b_, loc_, pool_, args_, /*scalar_params=*/false); }

  // The index of `shape` (element- or row-level) whose dimensions larger
  // than 1 take `parts` in order; unit dimensions take 0.
  Index Place(const Shape& shape, const std::vector<Value>& parts) {
    Index index;
    size_t next = 0;
    for (int64_t d = 0; d < shape.rank(); ++d)
      index.push_back(shape.dim(d) == 1 || next >= parts.size() ? m_.Const(0) : parts[next++]);
    return index;
  }
  Index RowIndex(const Shape& shape) { return Place(shape, row_parts_); }

  // `r`'s reducer applied to (acc, x).
  StatusOr<Value> Combine(const HloInstruction* r, Value acc, Value x) {
    if (widened_.at(r)) return mlir::arith::AddFOp::create(b_, loc_, acc, x).getResult();
    ElementalEmitter e = NewEmitter();
    KILN_ASSIGN_OR_RETURN(Values out, e.ApplyScalar(*r->to_apply(), {acc, x}));
    return out[0];
  }

  // After stage `s`: its reduces' results (narrowed back from f32 where
  // widened) and the row-level values computed from them hold for every
  // index of the row.
  Status BindStage(ElementalEmitter& e, int64_t s, const Results& results) {
    for (const auto& [r, acc] : results) {
      Value v = widened_.at(r) ? ops_.Narrow(acc, r->shape().element_type()) : acc;
      e.SeedEverywhere(r, {v});
    }
    for (const HloInstruction* inst : plan_.rn.row_dependent) {
      if (inst->opcode() == HloOpcode::kReduce || plan_.stage_of.at(inst) != s ||
          passes::LevelOf(inst->shape(), plan_.rn.row) != RowLevel::kRow)
        continue;
      KILN_ASSIGN_OR_RETURN(Values v, e.EmitAll(inst, RowIndex(inst->shape())));
      e.SeedEverywhere(inst, v);
    }
    return Status::Ok();
  }

  // ---- Host: one row per unit.
  Status EmitHostRow(Value row) {
    row_parts_ = Split(m_, row, plan_.row_dims);
    ElementalEmitter e = NewEmitter();
    for (size_t s = 0; s < plan_.rn.stages.size(); ++s) {
      Results results;
      for (const HloInstruction* r : plan_.rn.stages[s]) {
        KILN_ASSIGN_OR_RETURN(Value v, e.Emit(r, RowIndex(r->shape())));
        results.push_back({r, widened_.at(r) ? ops_.Widen(v) : v});  // BindStage narrows it back
      }
      KILN_RETURN_IF_ERROR(BindStage(e, static_cast<int64_t>(s), results));
    }
    bool elements = false;
    for (size_t k = 0; k < plan_.rn.outputs.size(); ++k) {
      const HloInstruction* out = plan_.rn.outputs[k];
      if (plan_.rn.output_levels[k] == RowLevel::kElement) {
        elements = true;
        continue;
      }
      KILN_ASSIGN_OR_RETURN(Value v, e.Emit(out, RowIndex(out->shape())));
      Store(v, k, RowIndex(out->shape()));
    }
    if (!elements) return Status::Ok();
    return e
        .EmitLoopNest({plan_.rn.row.row_elements}, {},
                      [&](const Index& col, const Values&) -> StatusOr<Values> {
                        std::vector<Value> parts = row_parts_;
                        std::vector<Value> cols = Split(m_, col[0], plan_.element_dims);
                        parts.insert(parts.end(), cols.begin(), cols.end());
                        for (size_t k = 0; k < plan_.rn.outputs.size(); ++k) {
                          if (plan_.rn.output_levels[k] != RowLevel::kElement) continue;
                          const Shape& s = plan_.rn.outputs[k]->shape();
                          KILN_ASSIGN_OR_RETURN(Value v, e.Emit(plan_.rn.outputs[k], Place(s, parts)));
                          Store(v, k, Place(s, parts));
                        }
                        return Values{};
                      })
        .status();
  }

  void Store(Value v, size_t k, const Index& index) {
    Value stored = ops_.ToStorage(v, plan_.rn.outputs[k]->shape().element_type());
    mlir::memref::StoreOp::create(b_, loc_, stored, outs_[k], index);
  }

  // ---- CUDA: see the file comment of row_normalization_emitter.h.

  // pred and sub-byte integer accumulators live in shared memory as i8.
  static bool IsSubByte(mlir::Type t) { return t.isInteger() && t.getIntOrFloatBitWidth() < 8; }
  mlir::Type StoredType(mlir::Type t) { return IsSubByte(t) ? b_.getI8Type() : t; }

  Status EmitCudaBlock(Value block) {
    // Per stage and reduce: the warps' results (a block per row) or the
    // rows' results (packed rows), in shared memory.
    std::map<const HloInstruction*, Value> shared;
    if (plan_.threads > 1) {
      int64_t slots = plan_.packed ? plan_.rows_per_block : plan_.warps;
      for (const auto& stage : plan_.rn.stages)
        for (const HloInstruction* r : stage) {
          auto type = mlir::MemRefType::get({slots}, StoredType(acc_types_.at(r)));
          auto alloca = mlir::memref::AllocaOp::create(b_, loc_, type);
          alloca->setAttr(kSharedBufferAttr, b_.getUnitAttr());
          shared[r] = alloca;
        }
    }
    Status status = Status::Ok();
    auto threads = mlir::scf::ParallelOp::create(
        b_, loc_, mlir::ValueRange{m_.Const(0), m_.Const(0)},
        mlir::ValueRange{m_.Const(plan_.warps), m_.Const(kWarp)}, mlir::ValueRange{m_.Const(1), m_.Const(1)},
        [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ids) {
          mlir::OpBuilder::InsertionGuard guard(b_);
          b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = EmitCudaThread(block, ids[0], ids[1], shared);
        });
    threads->setAttr(kThreadsAttr, b_.getUnitAttr());
    return status;
  }

  // Runs `fn` under scf.if `cond` (no results; null: always).
  Status If(Value cond, const std::function<Status()>& fn) {
    if (!cond) return fn();
    auto op = mlir::scf::IfOp::create(b_, loc_, cond, /*withElseRegion=*/false);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(op.thenBlock());
    return fn();
  }
  Value And(Value a, Value c) { return !a ? c : !c ? a : m_.And(a, c); }

  void StoreShared(Value v, Value buffer, Value index) {
    if (IsSubByte(v.getType())) v = mlir::arith::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
    mlir::memref::StoreOp::create(b_, loc_, v, buffer, mlir::ValueRange{index});
  }
  Value LoadShared(mlir::Type type, Value buffer, Value index) {
    Value v = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{index});
    return IsSubByte(type) ? mlir::arith::TruncIOp::create(b_, loc_, type, v).getResult() : v;
  }
  void Barrier() { mlir::func::CallOp::create(b_, loc_, BarrierFunc(module_), mlir::ValueRange{}); }

  Status EmitCudaThread(Value block, Value warp, Value lane, const std::map<const HloInstruction*, Value>& shared) {
    const int64_t rows = plan_.rn.row.rows, vec = plan_.vector, t_count = plan_.threads;
    Value tid = m_.Add(m_.Mul(warp, kWarp), lane);
    Value row = block, t = tid, group = m_.Const(0);
    if (plan_.packed) {
      group = m_.Div(tid, t_count);
      row = m_.Add(m_.Mul(block, plan_.rows_per_block), group);
      t = m_.Rem(tid, t_count);
    }
    // Rows past the last (a ragged packed block) compute the last row again
    // and store nothing.
    Value row_ok;
    if (plan_.packed && rows % plan_.rows_per_block != 0) {
      row_ok = m_.Less(row, rows);
      row = mlir::arith::MinUIOp::create(b_, loc_, row, m_.Const(rows - 1));
    }
    row_parts_ = Split(m_, row, plan_.row_dims);
    // The thread's vectors c = t + i * T; past the row's last vector (only
    // i = I - 1 can be), the last vector again, masked.
    std::vector<Value> valid(plan_.iterations);
    std::vector<std::vector<Value>> element_parts;  // per element: the index parts
    for (int64_t i = 0; i < plan_.iterations; ++i) {
      Value c = m_.Add(t, m_.Const(i * t_count));
      if ((i + 1) * t_count > plan_.vectors) {
        valid[i] = m_.Less(c, plan_.vectors);
        c = mlir::arith::MinUIOp::create(b_, loc_, c, m_.Const(plan_.vectors - 1));
      }
      Value first = m_.Mul(c, vec);
      for (int64_t v = 0; v < vec; ++v) {
        std::vector<Value> parts = row_parts_;
        std::vector<Value> cols = Split(m_, m_.Add(first, m_.Const(v)), plan_.element_dims);
        parts.insert(parts.end(), cols.begin(), cols.end());
        element_parts.push_back(std::move(parts));
      }
    }
    auto element_valid = [&](size_t e) { return valid[e / static_cast<size_t>(vec)]; };
    ElementalEmitter e = NewEmitter();
    for (size_t s = 0; s < plan_.rn.stages.size(); ++s) {
      Results results;
      for (const HloInstruction* r : plan_.rn.stages[s]) {
        KILN_ASSIGN_OR_RETURN(Value init, e.Emit(r->operand(1), Index{}));
        if (widened_.at(r)) init = ops_.Widen(init);
        Value acc = init;
        const Shape& in = r->operand(0)->shape();
        for (size_t el = 0; el < element_parts.size(); ++el) {
          KILN_ASSIGN_OR_RETURN(Value x, e.Emit(r->operand(0), Place(in, element_parts[el])));
          if (widened_.at(r)) x = ops_.Widen(x);
          if (Value ok = element_valid(el)) x = mlir::arith::SelectOp::create(b_, loc_, ok, x, init);
          KILN_ASSIGN_OR_RETURN(acc, Combine(r, acc, x));
        }
        results.push_back({r, acc});
      }
      if (t_count > 1) KILN_RETURN_IF_ERROR(CombineAcrossThreads(results, shared, warp, lane, t, group));
      KILN_RETURN_IF_ERROR(BindStage(e, static_cast<int64_t>(s), results));
    }
    // Outputs: every value first, then the stores (vectorizable runs).
    std::vector<std::vector<Value>> element_values(plan_.rn.outputs.size());
    std::vector<Value> row_values(plan_.rn.outputs.size());
    for (size_t k = 0; k < plan_.rn.outputs.size(); ++k) {
      const HloInstruction* out = plan_.rn.outputs[k];
      if (plan_.rn.output_levels[k] == RowLevel::kRow) {
        KILN_ASSIGN_OR_RETURN(row_values[k], e.Emit(out, RowIndex(out->shape())));
        continue;
      }
      for (const std::vector<Value>& parts : element_parts) {
        KILN_ASSIGN_OR_RETURN(Value v, e.Emit(out, Place(out->shape(), parts)));
        element_values[k].push_back(v);
      }
    }
    for (int64_t i = 0; i < plan_.iterations; ++i) {
      KILN_RETURN_IF_ERROR(If(And(row_ok, valid[i]), [&]() -> Status {
        for (size_t k = 0; k < plan_.rn.outputs.size(); ++k) {
          if (plan_.rn.output_levels[k] != RowLevel::kElement) continue;
          for (int64_t v = 0; v < vec; ++v) {
            size_t el = static_cast<size_t>(i * vec + v);
            Store(element_values[k][el], k, Place(plan_.rn.outputs[k]->shape(), element_parts[el]));
          }
        }
        return Status::Ok();
      }));
    }
    return If(And(row_ok, m_.Equal(t, 0)), [&]() -> Status {
      for (size_t k = 0; k < plan_.rn.outputs.size(); ++k)
        if (plan_.rn.output_levels[k] == RowLevel::kRow)
          Store(row_values[k], k, RowIndex(plan_.rn.outputs[k]->shape()));
      return Status::Ok();
    });
  }

  // Every thread of the row ends up with the row's result in `results`.
  Status CombineAcrossThreads(Results& results,
                              const std::map<const HloInstruction*, Value>& shared, Value warp, Value lane, Value t,
                              Value group) {
    const int64_t width = std::min(plan_.threads, kWarp);
    for (auto& [r, acc] : results)
      for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
        Value other = ShuffleDown(b_, loc_, module_, acc, offset);
        KILN_ASSIGN_OR_RETURN(acc, Combine(r, acc, other));
      }
    Value writer = plan_.packed ? m_.Equal(t, 0) : m_.Equal(lane, 0);
    Value slot = plan_.packed ? group : warp;
    KILN_RETURN_IF_ERROR(If(writer, [&]() -> Status {
      for (const auto& [r, acc] : results) StoreShared(acc, shared.at(r), slot);
      return Status::Ok();
    }));
    Barrier();
    for (auto& [r, acc] : results) {
      mlir::Type type = acc_types_.at(r);
      if (plan_.packed) {
        acc = LoadShared(type, shared.at(r), group);
        continue;
      }
      acc = LoadShared(type, shared.at(r), m_.Const(0));
      for (int64_t w = 1; w < plan_.warps; ++w) {
        KILN_ASSIGN_OR_RETURN(acc, Combine(r, acc, LoadShared(type, shared.at(r), m_.Const(w))));
      }
    }
    return Status::Ok();
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
  std::vector<Value> args_, outs_;
  std::map<const HloInstruction*, bool> widened_;
  // Per reduce: f32 for a widened sum, else the init's value type.
  std::map<const HloInstruction*, mlir::Type> acc_types_;
  std::vector<Value> row_parts_;  // the row's index parts (A's dimensions larger than 1)
};

}  // namespace

bool IsRowNormalizationKernel(const hlo::HloComputation& comp) {
  return passes::AnalyzeRowNormalization(comp).has_value();
}

StatusOr<KernelInfo> EmitRowNormalizationKernel(mlir::ModuleOp module, const KernelSpec& spec, KernelTarget target) {
  std::optional<Plan> plan = MakePlan(*spec.computation);
  if (!plan) return Error("kernel " + spec.name + " is not a row-normalization kernel");
  return RowNormalizationEmitter(module, spec, std::move(*plan)).Emit(target);
}

}  // namespace kiln::codegen::internal
