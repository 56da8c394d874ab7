// ElementalEmitter: emits the value of an HLO instruction at a
// multi-index as MLIR arith/math/memref/scf operations, the way XLA's
// elemental IR emitter does: the value at an index is built from the
// operands' values at the indices the op maps it to. Kernel emitters
// (kernel_emitter.cc and the tiled ones) drive it from their loops.
// Included only by kiln_codegen's MLIR translation units.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/shape.h"
#include "common/status.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln::codegen::internal {

using Index = std::vector<mlir::Value>;

// The memref type of a dense row-major buffer of `shape`.
mlir::MemRefType BufferType(mlir::MLIRContext* ctx, const Shape& shape);

// Array constants become private memref.globals, created once per
// instruction.
class ConstantPool {
 public:
  ConstantPool(mlir::ModuleOp module, std::string prefix)
      : module_(module), prefix_(std::move(prefix)) {}

  // The memref.global holding `inst`'s literal, created on first use.
  mlir::memref::GlobalOp Get(const hlo::HloInstruction& inst);

 private:
  mlir::ModuleOp module_;
  std::string prefix_;
  std::map<const hlo::HloInstruction*, mlir::memref::GlobalOp> globals_;
};

// Emits the value of instructions of one computation at given indices.
// Parameters are either memrefs (the kernel's buffers) or scalar values
// (the accumulator and element of a reduce's to_apply).
class ElementalEmitter {
 public:
  ElementalEmitter(mlir::OpBuilder& b, mlir::Location loc, ConstantPool& pool,
                   std::vector<mlir::Value> params, bool scalar_params)
      : b_(b), loc_(loc), ops_(b, loc), pool_(pool), params_(std::move(params)),
        scalar_params_(scalar_params) {
    scopes_.emplace_back();
  }

  StatusOr<mlir::Value> Emit(const hlo::HloInstruction* inst, const Index& index) {
    std::vector<const void*> key = Key(inst, index);
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(key);
      if (it != scope->end()) return it->second;
    }
    KILN_ASSIGN_OR_RETURN(mlir::Value v, EmitUncached(*inst, index));
    scopes_.back()[key] = v;
    return v;
  }

 private:
  using Scope = std::map<std::vector<const void*>, mlir::Value>;

  static std::vector<const void*> Key(const hlo::HloInstruction* inst, const Index& index) {
    std::vector<const void*> key{inst};
    for (mlir::Value v : index) key.push_back(v.getAsOpaquePointer());
    return key;
  }

  // Values created inside a nested region must not be reused outside it.
  struct ScopeGuard {
    explicit ScopeGuard(std::vector<Scope>& s) : scopes(s) { scopes.emplace_back(); }
    ~ScopeGuard() { scopes.pop_back(); }
    std::vector<Scope>& scopes;
  };

  mlir::Value Add(mlir::Value a, mlir::Value c) { return mlir::arith::AddIOp::create(b_, loc_, a, c); }
  mlir::Value Mul(mlir::Value a, mlir::Value c) { return mlir::arith::MulIOp::create(b_, loc_, a, c); }
  mlir::Value Const(int64_t v) { return ops_.IndexConstant(v); }

  StatusOr<mlir::Value> EmitUncached(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitParameter(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitConstant(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitReshape(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitConcatenate(const hlo::HloInstruction& inst, const Index& index, int64_t k,
                                  int64_t offset);
  StatusOr<mlir::Value> EmitReduce(const hlo::HloInstruction& inst, const Index& index);
  StatusOr<mlir::Value> EmitReduceLoops(const hlo::HloInstruction& inst, const std::vector<int64_t>& reduced,
                                  size_t level, Index& operand_index, mlir::Value acc);

  mlir::OpBuilder& b_;
  mlir::Location loc_;
  ScalarOps ops_;
  ConstantPool& pool_;
  std::vector<mlir::Value> params_;
  bool scalar_params_;
  std::vector<Scope> scopes_;
};

}  // namespace kiln::codegen::internal
