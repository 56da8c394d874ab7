// HLO -> kernel IR. Each kernel becomes one func.func whose arguments are
// static-shape memrefs (parameters in number order, then the result) and
// whose body is a one-dimensional scf.parallel over the result's elements in
// row-major order; each iteration computes one element "elementally", as
// XLA's loop emitter does: the value of an instruction at a multi-index is
// built from its operands' values at the indices the op maps it to
// (broadcast drops dimensions, transpose permutes, reshape re-linearizes,
// slice scales and offsets, concatenate branches on the position, reduce
// loops over the reduced dimensions). Values already computed for the same
// (instruction, index) in an enclosing region are reused, so a DAG is not
// recomputed along each path.
//
// The flat parallel loop is what both lowerings rely on: the host turns it
// into a sequential loop, the CUDA lowering maps it to one thread per element.
#include <algorithm>
#include <cctype>
#include <map>

#include "compiler/codegen/kernel_module.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/hlo/module.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::codegen::internal {

void KernelModuleDeleter::operator()(KernelModule* module) const { delete module; }

void LoadKernelDialects(mlir::MLIRContext& context) {
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                      mlir::memref::MemRefDialect, mlir::scf::SCFDialect>();
}

std::string PrintKernelModule(const KernelModule& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.module.get().print(os);
  return text;
}

namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;
using Index = std::vector<Value>;

mlir::MemRefType BufferType(mlir::MLIRContext* ctx, const Shape& shape) {
  return mlir::MemRefType::get(shape.dims(), StorageType(ctx, shape.element_type()));
}

// Array constants become private memref.globals, created once per
// instruction.
class ConstantPool {
 public:
  ConstantPool(mlir::ModuleOp module, std::string prefix)
      : module_(module), prefix_(std::move(prefix)) {}

  mlir::memref::GlobalOp Get(const HloInstruction& inst) {
    auto it = globals_.find(&inst);
    if (it != globals_.end()) return it->second;
    mlir::MLIRContext* ctx = module_.getContext();
    mlir::OpBuilder b(ctx);
    b.setInsertionPointToStart(module_.getBody());
    const Literal& lit = inst.literal();
    mlir::MemRefType type = BufferType(ctx, inst.shape());
    auto tensor = mlir::RankedTensorType::get(inst.shape().dims(), type.getElementType());
    // Literal storage is dense, row-major and little-endian, as
    // DenseElementsAttr's raw buffer (pred is one byte, stored as i8).
    auto data = mlir::DenseElementsAttr::getFromRawBuffer(
        tensor, llvm::ArrayRef<char>(reinterpret_cast<const char*>(lit.raw()), lit.raw_size()));
    // Not a C identifier a caller could give another kernel ("__" prefix).
    std::string name = "__kiln_const_" + prefix_ + "_" + std::to_string(globals_.size());
    auto global = mlir::memref::GlobalOp::create(
        b, b.getUnknownLoc(), b.getStringAttr(name), b.getStringAttr("private"),
        mlir::TypeAttr::get(type), data, b.getUnitAttr(), /*alignment=*/nullptr);
    globals_[&inst] = global;
    return global;
  }

 private:
  mlir::ModuleOp module_;
  std::string prefix_;
  std::map<const HloInstruction*, mlir::memref::GlobalOp> globals_;
};

// Emits the value of instructions of one computation at given indices.
// Parameters are either memrefs (the kernel's buffers) or scalar values
// (the accumulator and element of a reduce's to_apply).
class ElementalEmitter {
 public:
  ElementalEmitter(mlir::OpBuilder& b, mlir::Location loc, ConstantPool& pool,
                   std::vector<Value> params, bool scalar_params)
      : b_(b), loc_(loc), ops_(b, loc), pool_(pool), params_(std::move(params)),
        scalar_params_(scalar_params) {
    scopes_.emplace_back();
  }

  StatusOr<Value> Emit(const HloInstruction* inst, const Index& index) {
    std::vector<const void*> key = Key(inst, index);
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(key);
      if (it != scope->end()) return it->second;
    }
    KILN_ASSIGN_OR_RETURN(Value v, EmitUncached(*inst, index));
    scopes_.back()[key] = v;
    return v;
  }

 private:
  using Scope = std::map<std::vector<const void*>, Value>;

  static std::vector<const void*> Key(const HloInstruction* inst, const Index& index) {
    std::vector<const void*> key{inst};
    for (Value v : index) key.push_back(v.getAsOpaquePointer());
    return key;
  }

  // Values created inside a nested region must not be reused outside it.
  struct ScopeGuard {
    explicit ScopeGuard(std::vector<Scope>& s) : scopes(s) { scopes.emplace_back(); }
    ~ScopeGuard() { scopes.pop_back(); }
    std::vector<Scope>& scopes;
  };

  Value Add(Value a, Value c) { return mlir::arith::AddIOp::create(b_, loc_, a, c); }
  Value Mul(Value a, Value c) { return mlir::arith::MulIOp::create(b_, loc_, a, c); }
  Value Const(int64_t v) { return ops_.IndexConstant(v); }

  StatusOr<Value> EmitUncached(const HloInstruction& inst, const Index& index);
  StatusOr<Value> EmitParameter(const HloInstruction& inst, const Index& index);
  StatusOr<Value> EmitConstant(const HloInstruction& inst, const Index& index);
  StatusOr<Value> EmitReshape(const HloInstruction& inst, const Index& index);
  StatusOr<Value> EmitConcatenate(const HloInstruction& inst, const Index& index, int64_t k,
                                  int64_t offset);
  StatusOr<Value> EmitReduce(const HloInstruction& inst, const Index& index);
  StatusOr<Value> EmitReduceLoops(const HloInstruction& inst, const std::vector<int64_t>& reduced,
                                  size_t level, Index& operand_index, Value acc);

  mlir::OpBuilder& b_;
  mlir::Location loc_;
  ScalarOps ops_;
  ConstantPool& pool_;
  std::vector<Value> params_;
  bool scalar_params_;
  std::vector<Scope> scopes_;
};

StatusOr<Value> ElementalEmitter::EmitUncached(const HloInstruction& inst, const Index& index) {
  auto operand = [&](int64_t i, const Index& idx) { return Emit(inst.operand(i), idx); };
  ElementType t = inst.shape().element_type();
  switch (inst.opcode()) {
    case HloOpcode::kParameter:
      return EmitParameter(inst, index);
    case HloOpcode::kConstant:
      return EmitConstant(inst, index);
    case HloOpcode::kIota: {
      int64_t dim = inst.GetInt("iota_dimension", 0);
      if (dim < 0 || dim >= inst.shape().rank())
        return Error(inst.DebugName() + ": iota_dimension out of range");
      Value i = mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), index[dim]);
      return ops_.Convert(inst, i, ElementType::kS64, t);
    }
    case HloOpcode::kCopy:
      return operand(0, index);
    case HloOpcode::kBroadcast: {
      std::vector<int64_t> dims = inst.dimensions();
      Index idx;
      for (int64_t d : dims) idx.push_back(index[d]);
      return operand(0, idx);
    }
    case HloOpcode::kReshape:
      return EmitReshape(inst, index);
    case HloOpcode::kTranspose: {
      std::vector<int64_t> perm = inst.dimensions();
      Index idx(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) idx[perm[i]] = index[i];
      return operand(0, idx);
    }
    case HloOpcode::kSlice: {
      const auto* slice = inst.GetAttribute<std::vector<hlo::SliceDim>>("slice");
      if (!slice || static_cast<int64_t>(slice->size()) != inst.shape().rank())
        return Error(inst.DebugName() + ": slice needs one slice={...} entry per dimension");
      Index idx;
      for (size_t d = 0; d < slice->size(); ++d)
        idx.push_back(Add(Const((*slice)[d].start), Mul(index[d], Const((*slice)[d].stride))));
      return operand(0, idx);
    }
    case HloOpcode::kReverse: {
      Index idx = index;
      for (int64_t d : inst.dimensions())
        idx[d] = mlir::arith::SubIOp::create(b_, loc_, Const(inst.shape().dim(d) - 1), index[d]);
      return operand(0, idx);
    }
    case HloOpcode::kConcatenate:
      return EmitConcatenate(inst, index, 0, 0);
    case HloOpcode::kConvert: {
      KILN_ASSIGN_OR_RETURN(Value v, operand(0, index));
      return ops_.Convert(inst, v, inst.operand(0)->shape().element_type(), t);
    }
    case HloOpcode::kCompare: {
      KILN_ASSIGN_OR_RETURN(Value a, operand(0, index));
      KILN_ASSIGN_OR_RETURN(Value c, operand(1, index));
      return ops_.Compare(inst, a, c);
    }
    case HloOpcode::kSelect: {
      Index pred_index = inst.operand(0)->shape().IsScalar() ? Index{} : index;
      KILN_ASSIGN_OR_RETURN(Value p, operand(0, pred_index));
      KILN_ASSIGN_OR_RETURN(Value x, operand(1, index));
      KILN_ASSIGN_OR_RETURN(Value y, operand(2, index));
      return ops_.Select(p, x, y);
    }
    case HloOpcode::kClamp: {
      Index lo_index = inst.operand(0)->shape().IsScalar() ? Index{} : index;
      Index hi_index = inst.operand(2)->shape().IsScalar() ? Index{} : index;
      KILN_ASSIGN_OR_RETURN(Value lo, operand(0, lo_index));
      KILN_ASSIGN_OR_RETURN(Value x, operand(1, index));
      KILN_ASSIGN_OR_RETURN(Value hi, operand(2, hi_index));
      return ops_.Clamp(t, lo, x, hi);
    }
    case HloOpcode::kReduce:
      return EmitReduce(inst, index);
    default:
      break;
  }
  if (hlo::IsElementwiseUnary(inst.opcode()) && inst.operand_count() == 1) {
    KILN_ASSIGN_OR_RETURN(Value x, operand(0, index));
    return ops_.Unary(inst, x);
  }
  if (hlo::IsElementwiseBinary(inst.opcode()) && inst.operand_count() == 2) {
    KILN_ASSIGN_OR_RETURN(Value a, operand(0, index));
    KILN_ASSIGN_OR_RETURN(Value c, operand(1, index));
    return ops_.Binary(inst, a, c);
  }
  return Error(inst.DebugName() + ": codegen does not support " +
               std::string(hlo::OpcodeName(inst.opcode())) + " in loop kernels");
}

StatusOr<Value> ElementalEmitter::EmitParameter(const HloInstruction& inst, const Index& index) {
  int64_t n = inst.parameter_number();
  if (n < 0 || n >= static_cast<int64_t>(params_.size()))
    return Error(inst.DebugName() + ": parameter number out of range");
  if (scalar_params_) return params_[n];
  Value stored = mlir::memref::LoadOp::create(b_, loc_, params_[n], index);
  return ops_.FromStorage(stored, inst.shape().element_type());
}

StatusOr<Value> ElementalEmitter::EmitConstant(const HloInstruction& inst, const Index& index) {
  if (!inst.has_literal()) return Error(inst.DebugName() + ": constant has no value");
  if (inst.literal_elided())
    return Error(inst.DebugName() + ": constant's data was elided ({...}); cannot compile it");
  if (inst.shape().ElementCount() == 1) return ops_.Constant(inst.literal(), 0);
  mlir::memref::GlobalOp global = pool_.Get(inst);
  Value buffer = mlir::memref::GetGlobalOp::create(b_, loc_, global.getType(), global.getSymName());
  Value stored = mlir::memref::LoadOp::create(b_, loc_, buffer, index);
  return ops_.FromStorage(stored, inst.shape().element_type());
}

// Row-major linear position in the result, re-split by the operand's dims.
StatusOr<Value> ElementalEmitter::EmitReshape(const HloInstruction& inst, const Index& index) {
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  if (in.dims() == out.dims()) return Emit(inst.operand(0), index);
  Value linear = Const(0);
  for (int64_t d = 0; d < out.rank(); ++d) linear = Add(Mul(linear, Const(out.dim(d))), index[d]);
  Index idx(in.rank());
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    if (d == 0) {
      idx[d] = linear;
      break;
    }
    Value size = Const(in.dim(d));
    idx[d] = mlir::arith::RemUIOp::create(b_, loc_, linear, size);
    linear = mlir::arith::DivUIOp::create(b_, loc_, linear, size);
  }
  return Emit(inst.operand(0), idx);
}

// Operand k covers positions [offset, offset + size_k) of the concatenated
// dimension; earlier operands are tested first, each in its own scf.if.
StatusOr<Value> ElementalEmitter::EmitConcatenate(const HloInstruction& inst, const Index& index,
                                                  int64_t k, int64_t offset) {
  std::vector<int64_t> dims = inst.dimensions();
  if (dims.size() != 1) return Error(inst.DebugName() + ": concatenate needs dimensions={d}");
  int64_t d = dims[0];
  const HloInstruction* op = inst.operand(k);
  auto emit_operand = [&]() -> StatusOr<Value> {
    Index idx = index;
    idx[d] = mlir::arith::SubIOp::create(b_, loc_, index[d], Const(offset));
    return Emit(op, idx);
  };
  if (k + 1 == inst.operand_count()) return emit_operand();
  int64_t end = offset + op->shape().dim(d);
  Value in_k = mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ult, index[d],
                                           Const(end));
  mlir::Type type = ValueType(b_.getContext(), inst.shape().element_type());
  auto if_op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange{type}, in_k, /*withElseRegion=*/true);
  mlir::OpBuilder::InsertionGuard guard(b_);
  {
    ScopeGuard scope(scopes_);
    b_.setInsertionPointToStart(if_op.thenBlock());
    KILN_ASSIGN_OR_RETURN(Value v, emit_operand());
    mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange{v});
  }
  {
    ScopeGuard scope(scopes_);
    b_.setInsertionPointToStart(if_op.elseBlock());
    KILN_ASSIGN_OR_RETURN(Value v, EmitConcatenate(inst, index, k + 1, end));
    mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange{v});
  }
  return if_op.getResult(0);
}

// reduce(operand, init) with a scalar to_apply: for one result element,
// folds the operand's elements over the reduced dimensions in row-major
// order, starting from init.
StatusOr<Value> ElementalEmitter::EmitReduce(const HloInstruction& inst, const Index& index) {
  if (inst.operand_count() != 2 || !inst.shape().IsArray())
    return Error(inst.DebugName() + ": codegen supports only single-output reduce");
  if (!inst.to_apply()) return Error(inst.DebugName() + ": reduce needs to_apply");
  std::vector<int64_t> reduced = inst.dimensions();
  std::sort(reduced.begin(), reduced.end());
  const Shape& in = inst.operand(0)->shape();
  // Kept dimensions take the result index in order.
  Index operand_index(in.rank());
  size_t next = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (std::binary_search(reduced.begin(), reduced.end(), d)) continue;
    if (next >= index.size()) return Error(inst.DebugName() + ": reduce result rank mismatch");
    operand_index[d] = index[next++];
  }
  KILN_ASSIGN_OR_RETURN(Value init, Emit(inst.operand(1), Index{}));
  return EmitReduceLoops(inst, reduced, 0, operand_index, init);
}

StatusOr<Value> ElementalEmitter::EmitReduceLoops(const HloInstruction& inst,
                                                  const std::vector<int64_t>& reduced,
                                                  size_t level, Index& operand_index, Value acc) {
  if (level == reduced.size()) {
    KILN_ASSIGN_OR_RETURN(Value element, Emit(inst.operand(0), operand_index));
    const hlo::HloComputation& fn = *inst.to_apply();
    if (fn.parameter_count() != 2 || !fn.root())
      return Error(inst.DebugName() + ": reduce's to_apply must take two scalars");
    ElementalEmitter reducer(b_, loc_, pool_, {acc, element}, /*scalar_params=*/true);
    return reducer.Emit(fn.root(), Index{});
  }
  int64_t d = reduced[level];
  auto loop = mlir::scf::ForOp::create(b_, loc_, Const(0), Const(inst.operand(0)->shape().dim(d)),
                                       Const(1), mlir::ValueRange{acc});
  mlir::OpBuilder::InsertionGuard guard(b_);
  ScopeGuard scope(scopes_);
  b_.setInsertionPointToStart(loop.getBody());
  operand_index[d] = loop.getInductionVar();
  KILN_ASSIGN_OR_RETURN(Value next,
                        EmitReduceLoops(inst, reduced, level + 1, operand_index, loop.getRegionIterArgs()[0]));
  mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange{next});
  return loop.getResult(0);
}

// Every instruction must have an array shape of a supported element type.
Status CheckComputation(const hlo::HloComputation& comp) {
  if (!comp.root()) return Error("computation " + comp.name() + " has no root");
  for (const HloInstruction* inst : comp.instructions()) {
    const Shape& s = inst->shape();
    // A multi-output kernel's root is a tuple of its outputs.
    if (inst == comp.root() && inst->opcode() == HloOpcode::kTuple) continue;
    if (!s.IsArray())
      return Error(inst->DebugName() + ": codegen needs array shapes, got " + s.ToString(false));
    if (s.is_dynamic())
      return Error(inst->DebugName() + ": codegen does not support dynamic shapes");
    if (!IsSupportedElementType(s.element_type()))
      return Error(inst->DebugName() + ": codegen does not support element type " +
                   std::string(ElementTypeName(s.element_type())));
    for (const hlo::HloComputation* called : inst->called_computations())
      KILN_RETURN_IF_ERROR(CheckComputation(*called));
  }
  for (int64_t i = 0; i < comp.parameter_count(); ++i)
    if (!comp.parameter(i)) return Error("computation " + comp.name() + " has a gap in its parameters");
  return Status::Ok();
}

bool IsCIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

StatusOr<KernelInfo> EmitKernel(mlir::ModuleOp module, const KernelSpec& spec) {
  const hlo::HloComputation& comp = *spec.computation;
  KILN_RETURN_IF_ERROR(CheckComputation(comp).WithContext("kernel " + spec.name));
  mlir::MLIRContext* ctx = module.getContext();
  mlir::OpBuilder b(ctx);
  mlir::Location loc = mlir::NameLoc::get(b.getStringAttr(spec.name));
  b.setInsertionPointToEnd(module.getBody());

  std::vector<mlir::Type> arg_types;
  for (int64_t i = 0; i < comp.parameter_count(); ++i)
    arg_types.push_back(BufferType(ctx, comp.parameter(i)->shape()));
  // One output per root tuple element (a multi-output kernel: every output
  // has the same dimensions and is computed at the same index), else one.
  std::vector<const HloInstruction*> outputs;
  if (comp.root()->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : comp.root()->operands()) outputs.push_back(op);
  } else {
    outputs.push_back(comp.root());
  }
  if (outputs.empty()) return Error("kernel " + spec.name + " has no outputs");
  const Shape& out_shape = outputs[0]->shape();
  for (const HloInstruction* o : outputs) {
    if (o->shape().dims() != out_shape.dims())
      return Error(o->DebugName() + ": the outputs of a multi-output kernel must have the same dimensions");
    arg_types.push_back(BufferType(ctx, o->shape()));
  }
  auto func = mlir::func::FuncOp::create(b, loc, spec.name, b.getFunctionType(arg_types, {}));
  mlir::Block* entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  std::vector<Value> args(entry->args_begin(), entry->args_end());
  std::vector<Value> outs(args.end() - static_cast<std::ptrdiff_t>(outputs.size()), args.end());
  args.resize(args.size() - outputs.size());
  ConstantPool pool(module, spec.name);
  ElementalEmitter emitter(b, loc, pool, args, /*scalar_params=*/false);
  ScalarOps ops(b, loc);
  int64_t n = out_shape.ElementCount();
  Status status = Status::Ok();
  if (n > 0) {
    Value zero = ops.IndexConstant(0), one = ops.IndexConstant(1), count = ops.IndexConstant(n);
    mlir::scf::ParallelOp::create(
        b, loc, mlir::ValueRange{zero}, mlir::ValueRange{count}, mlir::ValueRange{one},
        [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          // Delinearize the row-major position into the result index.
          Index index(out_shape.rank());
          Value linear = ivs[0];
          for (int64_t d = out_shape.rank() - 1; d >= 0; --d) {
            if (d == 0) {
              index[d] = linear;
              break;
            }
            Value size = ops.IndexConstant(out_shape.dim(d));
            index[d] = mlir::arith::RemUIOp::create(b, loc, linear, size);
            linear = mlir::arith::DivUIOp::create(b, loc, linear, size);
          }
          for (size_t k = 0; k < outputs.size(); ++k) {
            StatusOr<Value> v = emitter.Emit(outputs[k], index);
            if (!v.ok()) {
              status = v.status();
              return;
            }
            Value stored = ops.ToStorage(*v, outputs[k]->shape().element_type());
            mlir::memref::StoreOp::create(b, loc, stored, outs[k], index);
          }
          nested.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
        });
  }
  KILN_RETURN_IF_ERROR(status.WithContext("kernel " + spec.name));
  b.setInsertionPointToEnd(entry);
  mlir::func::ReturnOp::create(b, loc);
  return KernelInfo{spec.name, static_cast<int>(arg_types.size()), n};
}

}  // namespace

StatusOr<KernelModulePtr> EmitKernelModule(const std::vector<KernelSpec>& kernels,
                                           std::vector<KernelInfo>* infos) {
  KernelModulePtr km(new KernelModule);
  km->context.disableMultithreading();
  LoadKernelDialects(km->context);
  km->module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&km->context));
  std::map<std::string, int> seen;
  infos->clear();
  for (const KernelSpec& spec : kernels) {
    if (!spec.computation) return Error("kernel " + spec.name + " has no computation");
    if (!IsCIdentifier(spec.name))
      return Error("kernel name '" + spec.name + "' is not a C identifier");
    if (seen[spec.name]++) return Error("duplicate kernel name '" + spec.name + "'");
    KILN_ASSIGN_OR_RETURN(KernelInfo info, EmitKernel(*km->module, spec));
    infos->push_back(std::move(info));
  }
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&km->context, [&](mlir::Diagnostic& diag) {
    diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(*km->module)))
    return Error("internal error: the emitted kernel IR does not verify: " + diagnostics);
  return km;
}

}  // namespace kiln::codegen::internal
