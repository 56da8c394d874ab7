// The tiled transpose kernel (see transpose_emitter.h for the IR shape).
//
// Every supported transpose is viewed as operand [P, X, Q, Y] -> result
// [P, Y, Q, X], where X and Y are the two swapped groups of the normalized
// transpose and P, Q the batch groups that stay in place:
//   [1,0]:   operand (X, Y)    -> (Y, X)       P = Q = 1
//   [0,2,1]: operand (P, X, Y) -> (P, Y, X)    Q = 1
//   [2,1,0]: operand (X, Q, Y) -> (Y, Q, X)    P = 1
// A tile covers 32 consecutive x and 32 consecutive y for one (p, q). The
// load phase walks the tile with y fastest (the operand's minor dimension:
// coalesced reads), the store phase with x fastest (the result's minor
// dimension: coalesced writes). The operand is any fused elementwise
// expression, evaluated by the ElementalEmitter at the operand index.
//
// The hero need not be the root (passes::FindTiledTransposeHero): an
// epilogue of elementwise ops and group-preserving reshapes may follow it.
// The tile then holds the hero's values, and the store phase evaluates the
// epilogue at the output element it writes, from the hero's value in the
// tile and the epilogue's other operands read at the same group positions
// (coalesced, in output order).
#include "compiler/codegen/transpose_emitter.h"

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/codegen/tiled_kernel_ir.h"
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

// The epilogue from the hero up to the root as a computation over scalars,
// for an ElementalEmitter with scalar parameters (as a reducer is
// applied): parameter 0 is the hero's value, parameter i > 0 the value of
// `operands[i - 1]` (an epilogue operand not using the hero) at the same
// group positions. Every instruction using the hero is elementwise or a
// reshape keeping the hero's groups (passes::FindTiledTransposeHero), so
// each of them is evaluated at the element the store phase writes.
struct Epilogue {
  std::unique_ptr<hlo::HloComputation> comp;
  std::vector<const HloInstruction*> operands;
};

Epilogue CloneEpilogue(const hlo::HloComputation& comp, const HloInstruction* hero) {
  Epilogue e;
  e.comp = std::make_unique<hlo::HloComputation>(comp.name() + ".epilogue");
  std::unordered_map<const HloInstruction*, HloInstruction*> clones;
  auto parameter = [&](const HloInstruction& of, int64_t n) {
    auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, "epilogue_param_" + std::to_string(n),
                                                  of.shape());
    param->set_parameter_number(n);
    return e.comp->AddInstruction(std::move(param));
  };
  clones[hero] = parameter(*hero, 0);
  std::unordered_map<const HloInstruction*, HloInstruction*> params;  // other operand -> parameter
  for (const HloInstruction* inst : comp.PostOrder()) {
    bool uses_hero = false;
    for (const HloInstruction* op : inst->operands()) uses_hero |= clones.count(op) > 0;
    if (!uses_hero || clones.count(inst)) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst->operands()) {
      auto it = clones.find(op);
      if (it != clones.end()) {
        operands.push_back(it->second);
        continue;
      }
      HloInstruction*& param = params[op];
      if (!param) {
        e.operands.push_back(op);
        param = parameter(*op, static_cast<int64_t>(e.operands.size()));
      }
      operands.push_back(param);
    }
    clones[inst] = e.comp->AddInstruction(inst->CloneWithOperands(operands, inst->name()));
  }
  e.comp->set_root(clones.at(comp.root()));
  return e;
}

// The normalized transpose in the [P, X, Q, Y] form, plus which operand
// groups exist (P only for [0,2,1], Q only for [2,1,0]).
struct TransposePlan {
  int64_t p = 1, x = 1, q = 1, y = 1;
  std::vector<int64_t> permutation;   // of the normalized groups
  std::vector<int64_t> operand_groups;  // group sizes, operand order

  int64_t TilesX() const { return (x + kTileSize - 1) / kTileSize; }
  int64_t TilesY() const { return (y + kTileSize - 1) / kTileSize; }
  int64_t NumTiles() const { return p * q * TilesX() * TilesY(); }
};

TransposePlan Plan(const HloInstruction& transpose) {
  passes::NormalizedTranspose t = passes::NormalizeTranspose(transpose);
  TransposePlan plan;
  plan.permutation = t.permutation;
  plan.operand_groups = t.operand_dims;
  const std::vector<int64_t>& g = t.operand_dims;
  if (t.permutation.size() == 2) {
    plan.x = g[0], plan.y = g[1];
  } else if (t.permutation[0] == 0) {  // [0,2,1]
    plan.p = g[0], plan.x = g[1], plan.y = g[2];
  } else {  // [2,1,0]
    plan.x = g[0], plan.q = g[1], plan.y = g[2];
  }
  return plan;
}

// The operand's group positions for tile coordinates (p, x, q, y), in
// operand group order.
std::vector<Value> OperandGroups(const TransposePlan& plan, Value p, Value x, Value q, Value y) {
  if (plan.permutation.size() == 2) return {x, y};
  if (plan.permutation[0] == 0) return {p, x, y};
  return {x, q, y};
}

// One pass of the block over the tile: `scf.parallel (%ty, %tx) = (0, 0)
// to (8, 32) {kiln.threads}`, in which thread (ty, tx) visits tile rows
// row = ty, ty + 8, ty + 16, ty + 24 of column tx, where the tile's row and
// column lie at row_pos = row0 + row < rows and col_pos = col0 + tx < cols.
// It first reads the four values (`read(row, tx, row_pos, col_pos)`, of
// type `type`), then writes them (`write(..., value)`), so that the four
// reads are in flight together rather than each waiting for the previous
// write. When the tiles at the edges are ragged, each read and write is
// guarded by an scf.if. Returns the first error of `read` or `write`.
using TileRead = std::function<StatusOr<Value>(Value row, Value col, Value row_pos, Value col_pos)>;
using TileWrite = std::function<Status(Value row, Value col, Value row_pos, Value col_pos, Value value)>;
Status TilePass(mlir::OpBuilder& b, mlir::Location loc, IndexMath& m, Value row0, int64_t rows, Value col0,
                int64_t cols, mlir::Type type, const TileRead& read, const TileWrite& write) {
  const bool ragged = rows % kTileSize != 0 || cols % kTileSize != 0;
  Status status = Status::Ok();
  auto loop = mlir::scf::ParallelOp::create(
      b, loc, mlir::ValueRange{m.Const(0), m.Const(0)},
      mlir::ValueRange{m.Const(kTileRowsPerPass), m.Const(kTileSize)},
      mlir::ValueRange{m.Const(1), m.Const(1)},
      [&](mlir::OpBuilder& threads, mlir::Location, mlir::ValueRange ids) {
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(threads.getInsertionBlock(), threads.getInsertionPoint());
        Value ty = ids[0], col = ids[1];
        Value col_pos = m.Add(col0, col);
        struct Row {
          Value row, row_pos, in_bounds, value;
        };
        std::vector<Row> pending;
        for (int64_t r = 0; r < kTileSize && status.ok(); r += kTileRowsPerPass) {
          Row x;
          x.row = m.Add(ty, m.Const(r));
          x.row_pos = m.Add(row0, x.row);
          if (!ragged) {
            StatusOr<Value> v = read(x.row, col, x.row_pos, col_pos);
            if (!v.ok()) status = v.status();
            else x.value = *v;
            pending.push_back(x);
            continue;
          }
          x.in_bounds = m.And(m.Less(x.row_pos, rows), m.Less(col_pos, cols));
          auto op = mlir::scf::IfOp::create(b, loc, mlir::TypeRange{type}, x.in_bounds, /*withElseRegion=*/true);
          mlir::OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(op.thenBlock());
          StatusOr<Value> v = read(x.row, col, x.row_pos, col_pos);
          if (!v.ok()) {
            status = v.status();
            break;
          }
          mlir::scf::YieldOp::create(b, loc, mlir::ValueRange{*v});
          b.setInsertionPointToStart(op.elseBlock());
          Value zero = mlir::arith::ConstantOp::create(b, loc, mlir::cast<mlir::TypedAttr>(b.getZeroAttr(type)));
          mlir::scf::YieldOp::create(b, loc, mlir::ValueRange{zero});
          x.value = op.getResult(0);
          pending.push_back(x);
        }
        for (const Row& x : pending) {
          if (!status.ok()) break;
          if (!ragged) {
            status = write(x.row, col, x.row_pos, col_pos, x.value);
            continue;
          }
          auto op = mlir::scf::IfOp::create(b, loc, x.in_bounds, /*withElseRegion=*/false);
          mlir::OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(op.thenBlock());
          status = write(x.row, col, x.row_pos, col_pos, x.value);
        }
      });
  loop->setAttr(kThreadsAttr, b.getUnitAttr());
  return status;
}

}  // namespace

bool IsTiledTransposeKernel(const hlo::HloComputation& comp) {
  const HloInstruction* hero = passes::FindTiledTransposeHero(comp);
  return hero && hero->operand(0)->shape().IsArray();
}

StatusOr<KernelInfo> EmitTiledTransposeKernel(mlir::ModuleOp module, const KernelSpec& spec) {
  const hlo::HloComputation& comp = *spec.computation;
  const HloInstruction* root = comp.root();
  const HloInstruction* hero = passes::FindTiledTransposeHero(comp);
  if (!hero) return Error("kernel " + spec.name + ": no tiled transpose hero");
  const HloInstruction* operand = hero->operand(0);
  const Shape& out_shape = root->shape();
  const ElementType hero_type = hero->shape().element_type();
  TransposePlan plan = Plan(*hero);
  Epilogue epilogue;
  if (hero != root) epilogue = CloneEpilogue(comp, hero);
  mlir::MLIRContext* ctx = module.getContext();
  mlir::OpBuilder b(ctx);
  mlir::Location loc = mlir::NameLoc::get(b.getStringAttr(spec.name));
  mlir::func::FuncOp barrier = BarrierFunc(module);
  b.setInsertionPointToEnd(module.getBody());

  std::vector<mlir::Type> arg_types;
  for (int64_t i = 0; i < comp.parameter_count(); ++i)
    arg_types.push_back(BufferType(ctx, comp.parameter(i)->shape()));
  mlir::MemRefType out_type = BufferType(ctx, out_shape);
  arg_types.push_back(out_type);
  auto func = mlir::func::FuncOp::create(b, loc, spec.name, b.getFunctionType(arg_types, {}));
  mlir::Block* entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  std::vector<Value> args(entry->args_begin(), entry->args_end());
  Value out = args.back();
  args.pop_back();

  ConstantPool pool(module, spec.name);
  IndexMath m(b, loc);
  std::vector<int64_t> result_groups;  // sizes, result order
  for (int64_t g : plan.permutation) result_groups.push_back(plan.operand_groups[g]);

  Status status = Status::Ok();
  auto tiles = mlir::scf::ParallelOp::create(
      b, loc, mlir::ValueRange{m.Const(0)}, mlir::ValueRange{m.Const(plan.NumTiles())},
      mlir::ValueRange{m.Const(1)},
      [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
        b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
        // tile = ((p * Q + q) * tiles_y + tile_y) * tiles_x + tile_x
        Value t = ivs[0];
        Value x0 = m.Mul(m.Rem(t, plan.TilesX()), kTileSize);
        t = m.Div(t, plan.TilesX());
        Value y0 = m.Mul(m.Rem(t, plan.TilesY()), kTileSize);
        t = m.Div(t, plan.TilesY());
        Value q = m.Rem(t, plan.q), p = m.Div(t, plan.q);
        auto tile_type = mlir::MemRefType::get({kTileSize, kTileSize + kTilePadding},
                                               BufferType(ctx, hero->shape()).getElementType());
        auto buffer = mlir::memref::AllocaOp::create(b, loc, tile_type);
        buffer->setAttr(kTileBufferAttr, b.getUnitAttr());
        Value tile = buffer;

        // Load, along the operand's minor group y:
        // tile[row][col] = operand(p, x0 + row, q, y0 + col). Each row
        // gets its own emitter: its values live in its own guarded region.
        auto load = [&](Value, Value, Value x, Value y) -> StatusOr<Value> {
          ElementalEmitter emitter(b, loc, pool, args, /*scalar_params=*/false);
          Index index = m.MultiIndex(operand->shape(), plan.operand_groups,
                                     OperandGroups(plan, p, x, q, y));
          KILN_ASSIGN_OR_RETURN(Value v, emitter.Emit(operand, index));
          return ScalarOps(b, loc).ToStorage(v, hero_type);
        };
        auto fill = [&](Value row, Value col, Value, Value, Value v) -> Status {
          mlir::memref::StoreOp::create(b, loc, v, tile, mlir::ValueRange{row, col});
          return Status::Ok();
        };
        // Store, along the result's minor group x:
        // result(p, y0 + row, q, x0 + col) = epilogue(tile[col][row]).
        auto read_tile = [&](Value row, Value col, Value, Value) -> StatusOr<Value> {
          return Value(mlir::memref::LoadOp::create(b, loc, tile, mlir::ValueRange{col, row}));
        };
        auto store = [&](Value, Value, Value y, Value x, Value v) -> Status {
          ElementalEmitter store_emitter(b, loc, pool, args, /*scalar_params=*/false);
          std::vector<Value> operand_groups = OperandGroups(plan, p, x, q, y);
          std::vector<Value> groups;
          for (int64_t g : plan.permutation) groups.push_back(operand_groups[g]);
          Index index = m.MultiIndex(out_shape, result_groups, groups);
          if (epilogue.comp) {
            ScalarOps ops(b, loc);
            std::vector<Value> values{ops.FromStorage(v, hero_type)};
            // An operand of a reshape-free stretch of the epilogue has that
            // stretch's shape, which splits into the same groups.
            for (const HloInstruction* op : epilogue.operands) {
              Index at = op->shape().dims() == out_shape.dims()
                             ? index
                             : m.MultiIndex(op->shape(), result_groups, groups);
              KILN_ASSIGN_OR_RETURN(Value value, store_emitter.Emit(op, at));
              values.push_back(value);
            }
            ElementalEmitter scalar(b, loc, pool, values, /*scalar_params=*/true);
            KILN_ASSIGN_OR_RETURN(Value result, scalar.Emit(epilogue.comp->root(), index));
            v = ops.ToStorage(result, out_shape.element_type());
          }
          mlir::memref::StoreOp::create(b, loc, v, out, index);
          return Status::Ok();
        };
        mlir::Type stored_type = tile_type.getElementType();
        status = TilePass(b, loc, m, x0, plan.x, y0, plan.y, stored_type, load, fill);
        if (!status.ok()) return;
        // Every thread's loads land in the tile before any thread reads it.
        mlir::func::CallOp::create(b, loc, barrier, mlir::ValueRange{});
        status = TilePass(b, loc, m, y0, plan.y, x0, plan.x, stored_type, read_tile, store);
        nested.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
      });
  tiles->setAttr(kTilesAttr, b.getUnitAttr());
  KILN_RETURN_IF_ERROR(status.WithContext("kernel " + spec.name));
  b.setInsertionPointToEnd(entry);
  mlir::func::ReturnOp::create(b, loc);

  int64_t element_bytes = (BufferType(ctx, hero->shape()).getElementTypeBitWidth() + 7) / 8;
  LaunchDims launch{{plan.NumTiles(), 1, 1},
                    {kTileSize, kTileRowsPerPass, 1},
                    kTileSize * (kTileSize + kTilePadding) * element_bytes};
  KernelInfo info(spec.name, static_cast<int>(arg_types.size()), out_shape.ElementCount(), launch);
  // Host: the tiles are the units (each writes its own output tile).
  info.host_split_dim = 0;
  info.host_units = plan.NumTiles();
  return info;
}

}  // namespace kiln::codegen::internal
