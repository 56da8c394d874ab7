// HLO -> kernel IR. Each kernel becomes one func.func whose arguments are
// static-shape memrefs (parameters in number order, then the result) and
// whose body is an scf.parallel over the result's index space (one loop
// dimension per result dimension); each iteration computes one element
// "elementally", as
// XLA's loop emitter does: the value of an instruction at a multi-index is
// built from its operands' values at the indices the op maps it to
// (broadcast drops dimensions, transpose permutes, reshape re-linearizes,
// slice scales and offsets, concatenate branches on the position, reduce
// loops over the reduced dimensions). Values already computed for the same
// (instruction, index) in an enclosing region are reused, so a DAG is not
// recomputed along each path.
//
// In-place kernels (a dynamic-update-slice or scatter root updating
// parameters, in_place_emitter.h) iterate over the update's elements instead
// and store only those; KernelInfo::num_elements is then the update's
// element count (1 for a sequential scatter, whose one iteration loops over
// the updates).
//
// The parallel loop is what both lowerings rely on: the host turns it into a
// nest of sequential loops, whose innermost one walks the minor dimension
// with affine addresses (vectorizable, with values of the outer dimensions
// hoisted out of it); the CUDA lowering flattens it into one thread per
// element. KernelInfo::host_split_dim names the loop dimension the host
// entry's begin/end ranges over (kernel_codegen.h, CompiledKernel::launch).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "compiler/codegen/codegen_session.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/in_place_emitter.h"
#include "compiler/codegen/kernel_module.h"
#include "compiler/codegen/reduction_emitter.h"
#include "compiler/codegen/row_normalization_emitter.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/codegen/sort_emitter.h"
#include "compiler/codegen/transpose_emitter.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/while_loop_kernel_fusion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
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
                      mlir::memref::MemRefDialect, mlir::scf::SCFDialect, mlir::complex::ComplexDialect>();
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


Status CheckArrayShape(const HloInstruction& inst, const Shape& s) {
  if (!s.IsArray())
    return Error(inst.DebugName() + ": codegen needs array shapes, got " + s.ToString(false));
  if (s.is_dynamic()) return Error(inst.DebugName() + ": codegen does not support dynamic shapes");
  if (!IsSupportedElementType(s.element_type()))
    return Error(inst.DebugName() + ": codegen does not support element type " +
                 std::string(ElementTypeName(s.element_type())));
  return Status::Ok();
}

// True if `inst` holds a while loop's state in a kernel (loop_ops.cc): the
// loop, the tuple it starts from, or (`loop_region`: in its condition or
// body) the state parameter and a multi-output fusion's results.
bool IsLoopState(const HloInstruction& inst, bool loop_region) {
  if (inst.opcode() == HloOpcode::kWhile) return true;
  if (loop_region && (inst.opcode() == HloOpcode::kParameter || inst.opcode() == HloOpcode::kFusion)) return true;
  if (inst.opcode() != HloOpcode::kTuple || inst.users().empty()) return false;
  for (const HloInstruction* user : inst.users())
    if (user->opcode() != HloOpcode::kWhile) return false;
  return true;
}

// Every instruction must have an array shape of a supported element type,
// except tuples of such arrays: a multi-output kernel's root tuple, a
// variadic reduce, reduce-window or scatter, and a while loop's state.
Status CheckComputation(const hlo::HloComputation& comp, bool loop_region = false) {
  if (!comp.root()) return Error("computation " + comp.name() + " has no root");
  for (const HloInstruction* inst : comp.instructions()) {
    const Shape& s = inst->shape();
    if (inst == comp.root() && inst->opcode() == HloOpcode::kTuple) continue;
    if (s.IsTuple() && IsLoopState(*inst, loop_region)) {
      for (int64_t i = 0; i < s.tuple_size(); ++i) KILN_RETURN_IF_ERROR(CheckArrayShape(*inst, s.tuple_shape(i)));
      for (const hlo::HloComputation* called : inst->called_computations())
        KILN_RETURN_IF_ERROR(CheckComputation(*called, /*loop_region=*/true));
      continue;
    }
    // Reductions' GPU trees shuffle and stage scalars in shared memory as
    // integers and floats only.
    bool reduces = inst->opcode() == HloOpcode::kReduce || inst->opcode() == HloOpcode::kReduceWindow ||
                   inst->opcode() == HloOpcode::kScatter || inst->opcode() == HloOpcode::kSelectAndScatter;
    if (reduces && !s.IsTuple() && IsComplex(s.element_type()))
      return Error(inst->DebugName() + ": codegen does not support " + std::string(hlo::OpcodeName(inst->opcode())) +
                   " of complex values yet");
    if (reduces && s.IsTuple()) {  // variadic: N arrays
      for (int64_t i = 0; i < s.tuple_size(); ++i) KILN_RETURN_IF_ERROR(CheckArrayShape(*inst, s.tuple_shape(i)));
    } else {
      KILN_RETURN_IF_ERROR(CheckArrayShape(*inst, s));
    }
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

// Applies what the caller knows of the argument buffers (KernelSpec): an
// output passed exactly a parameter's buffer of the same type is written
// through the parameter (its own argument stays unused), and every argument
// that no other argument can write through is marked llvm.noalias.
void ApplyAliasing(const KernelArgumentAliasing& aliasing, mlir::func::FuncOp func, std::vector<Value>& params,
                   std::vector<Value>& outs) {
  size_t n = params.size() + outs.size();
  if (aliasing.same_buffer.size() != n || aliasing.disjoint.size() != n) return;
  std::vector<bool> paired(n, false), redirected(n, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t j = aliasing.same_buffer[i];
    if (j < 0 || static_cast<size_t>(j) >= i) continue;
    paired[i] = paired[j] = true;
    if (i < params.size() || static_cast<size_t>(j) >= params.size()) continue;
    Value& out = outs[i - params.size()];
    if (out.getType() != params[j].getType()) continue;
    out = params[j];
    redirected[i] = redirected[j] = true;
  }
  mlir::UnitAttr unit = mlir::UnitAttr::get(func.getContext());
  for (size_t i = 0; i < n; ++i) {
    bool is_unused_output = redirected[i] && i >= params.size();
    if (aliasing.disjoint[i] && !is_unused_output && (!paired[i] || redirected[i]))
      func.setArgAttr(static_cast<unsigned>(i), "llvm.noalias", unit);
  }
}

// The host splits a kernel across threads along the first loop dimension
// of more than one iteration (leading unit dimensions, as in [1,4096,768],
// have nothing to split). Each iteration of the loop writes its own output
// elements, except for scatter, whose updates may target the same element
// (duplicate indices race without atomics on the host): one unit.
void SetHostSplit(KernelInfo& info, const Shape& iteration_shape, bool may_collide) {
  if (may_collide || info.num_elements <= 0) return;
  const std::vector<int64_t>& dims = iteration_shape.dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] <= 1) continue;
    info.host_split_dim = static_cast<int>(d);
    info.host_units = dims[d];
    return;
  }
}

// Input elements a reduction, reduce-window or convolution in `comp` reads
// per element of its result, summed over them (at least 1): the iterations
// of the inner loops each iteration of the kernel's loop nest runs.
int64_t ReducedElementsPerIteration(const hlo::HloComputation& comp) {
  int64_t per_iteration = 0;
  for (const HloInstruction* inst : comp.instructions()) {
    const Shape& out = inst->shape().IsTuple() ? inst->shape().tuple_shape(0) : inst->shape();
    if (inst->opcode() == HloOpcode::kReduce) {
      per_iteration += inst->operand(0)->shape().ElementCount() / std::max<int64_t>(1, out.ElementCount());
      continue;
    }
    if (inst->opcode() != HloOpcode::kReduceWindow && inst->opcode() != HloOpcode::kConvolution) continue;
    int64_t window = 1;
    if (const auto* w = inst->GetAttribute<hlo::Window>("window"))
      for (const hlo::WindowDim& d : w->dims) window *= d.size;
    if (const auto* dn = inst->GetAttribute<hlo::ConvDimensionNumbers>("dim_labels"))
      window *= inst->operand(1)->shape().dim(dn->kernel_input_feature);  // input features per group
    per_iteration += window;
  }
  return std::max<int64_t>(1, per_iteration);
}

// CUDA: how many consecutive innermost elements each thread of a loop
// kernel computes: 16 bytes of the narrowest output (a 128-bit store; the
// loads of same-typed operands follow), at most 8, halved until it divides
// the innermost dimension. In-place kernels keep one update per thread.
int64_t FlatLoopVectorWidth(const Shape& iteration_shape, const std::vector<Shape>& outputs, bool in_place) {
  if (in_place || iteration_shape.rank() == 0) return 1;
  int bytes = 16;
  for (const Shape& s : outputs) bytes = std::min(bytes, std::max(1, StorageBytes(s.element_type())));
  int64_t width = std::min(8, 16 / bytes);
  while (width > 1 && iteration_shape.dims().back() % width != 0) width /= 2;
  return width;
}

// A loop kernel's leaves kept in memory (passes::InMemoryLeafUpdate) live
// in their output buffers: each starts as a copy of the leaf's initial
// value, and the loop stores its updates there. Emits the copies and the
// loop; true for each output that holds such a leaf.
StatusOr<std::vector<bool>> PlaceInMemoryLeaves(mlir::OpBuilder& b, mlir::Location loc,
                                                const hlo::HloComputation& comp, ElementalEmitter& emitter,
                                                const std::vector<Value>& outs) {
  const HloInstruction* root = comp.root();
  const std::vector<const HloInstruction*> outputs = passes::FusionOutputs(comp);
  const HloInstruction* loop = root->opcode() == HloOpcode::kWhile ? root : outputs[0]->operand(0);
  const HloInstruction* init = loop->operand(0);
  std::vector<bool> in_memory(outs.size(), false);
  for (size_t k = 0; k < outs.size(); ++k) {
    const int64_t leaf = root->opcode() == HloOpcode::kWhile ? static_cast<int64_t>(k) : outputs[k]->tuple_index();
    if (!passes::InMemoryLeafUpdate(*loop, leaf)) continue;
    if (init->opcode() != HloOpcode::kTuple)
      return Error(loop->DebugName() + ": a while loop in a kernel needs a tuple state built by a tuple");
    const HloInstruction* initial = init->operand(leaf);
    const ElementType type = initial->shape().element_type();
    ScalarOps ops(b, loc);
    auto copy = [&](const Index& at, const std::vector<Value>&) -> StatusOr<std::vector<Value>> {
      KILN_ASSIGN_OR_RETURN(Value v, emitter.Emit(initial, at));
      mlir::memref::StoreOp::create(b, loc, ops.ToStorage(v, type), outs[k], at);
      return std::vector<Value>{};
    };
    KILN_RETURN_IF_ERROR(emitter.EmitLoopNest(initial->shape().dims(), {}, copy).status());
    emitter.PlaceLoopLeaf(*loop, leaf, outs[k]);
    in_memory[k] = true;
  }
  // The loop runs here, after the copies, whether or not another output
  // reads its results.
  KILN_RETURN_IF_ERROR(emitter.EmitAll(loop, Index{}).status());
  return in_memory;
}

StatusOr<KernelInfo> EmitKernel(mlir::ModuleOp module, const KernelSpec& spec, KernelTarget target) {
  const hlo::HloComputation& comp = *spec.computation;
  if (IsSortKernel(comp)) return EmitSortKernel(module, spec, target);  // sort_emitter.h
  KILN_RETURN_IF_ERROR(CheckComputation(comp).WithContext("kernel " + spec.name));
  if (IsTiledTransposeKernel(comp)) return EmitTiledTransposeKernel(module, spec);
  if (IsRowNormalizationKernel(comp)) return EmitRowNormalizationKernel(module, spec, target);
  if (target == KernelTarget::kCuda && IsGpuReductionKernel(comp)) return EmitGpuReductionKernel(module, spec);
  mlir::MLIRContext* ctx = module.getContext();
  mlir::OpBuilder b(ctx);
  mlir::Location loc = mlir::NameLoc::get(b.getStringAttr(spec.name));
  b.setInsertionPointToEnd(module.getBody());

  std::vector<mlir::Type> arg_types;
  for (int64_t i = 0; i < comp.parameter_count(); ++i)
    arg_types.push_back(BufferType(ctx, comp.parameter(i)->shape()));
  // One output per root tuple element (a multi-output kernel: every output
  // has the same dimensions and is computed at the same index) or per
  // result of a variadic reduce, reduce-window or scatter root, else one.
  const HloInstruction* root = comp.root();
  std::vector<Shape> out_shapes;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : root->operands()) out_shapes.push_back(op->shape());
  } else if (root->shape().IsTuple()) {
    for (int64_t i = 0; i < root->shape().tuple_size(); ++i) out_shapes.push_back(root->shape().tuple_shape(i));
  } else {
    out_shapes.push_back(root->shape());
  }
  if (out_shapes.empty()) return Error("kernel " + spec.name + " has no outputs");
  // A loop kernel's outputs are the loop's small results, each stored whole
  // by the kernel's one iteration.
  const bool loop_kernel = IsLoopKernel(comp);
  for (const Shape& s : out_shapes) {
    if (!loop_kernel && s.dims() != out_shapes[0].dims())
      return Error(root->DebugName() + ": the outputs of a multi-output kernel must have the same dimensions");
    arg_types.push_back(BufferType(ctx, s));
  }
  // An in-place kernel visits the update's elements only (in_place_emitter.h).
  const bool in_place = IsInPlaceKernel(comp);
  const Shape iteration_shape = in_place      ? InPlaceIterationShape(*root)
                                : loop_kernel ? Shape(ElementType::kS32, {})
                                              : out_shapes[0];
  if (in_place) {
    std::vector<mlir::MemRefType> types = InPlaceOutputTypes(ctx, *root);
    if (types.size() != out_shapes.size())
      return Error(root->DebugName() + ": an in-place kernel needs one output per updated operand");
    std::copy(types.begin(), types.end(), arg_types.end() - static_cast<std::ptrdiff_t>(types.size()));
  }

  auto func = mlir::func::FuncOp::create(b, loc, spec.name, b.getFunctionType(arg_types, {}));
  mlir::Block* entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  std::vector<Value> args(entry->args_begin(), entry->args_end());
  std::vector<Value> outs(args.end() - static_cast<std::ptrdiff_t>(out_shapes.size()), args.end());
  args.resize(args.size() - out_shapes.size());
  ApplyAliasing(spec.aliasing, func, args, outs);
  ConstantPool pool(module, spec.name);
  ElementalEmitter emitter(b, loc, pool, args, /*scalar_params=*/false);
  ScalarOps ops(b, loc);
  // The body of one iteration: computes and stores the element(s) at `index`.
  auto emit_element = [&](const Index& index) -> Status {
    if (in_place) return EmitInPlaceUpdate(b, loc, emitter, *root, index, outs);
    if (loop_kernel) {
      KILN_ASSIGN_OR_RETURN(std::vector<bool> in_memory, PlaceInMemoryLeaves(b, loc, comp, emitter, outs));
      for (size_t k = 0; k < out_shapes.size(); ++k) {
        if (in_memory[k]) continue;
        const HloInstruction* out = root->opcode() == HloOpcode::kTuple ? root->operand(k) : root;
        for (int64_t e = 0; e < out_shapes[k].ElementCount(); ++e) {
          Index at = ConstantIndex(ops, out_shapes[k].dims(), e);
          KILN_ASSIGN_OR_RETURN(Value v, root->opcode() == HloOpcode::kWhile
                                             ? emitter.EmitLoopResult(*root, static_cast<int64_t>(k), at)
                                             : emitter.Emit(out, at));
          mlir::memref::StoreOp::create(b, loc, ops.ToStorage(v, out_shapes[k].element_type()), outs[k], at);
        }
      }
      return Status::Ok();
    }
    std::vector<Value> values;
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* op : root->operands()) {
        KILN_ASSIGN_OR_RETURN(Value v, emitter.Emit(op, index));
        values.push_back(v);
      }
    } else {
      KILN_ASSIGN_OR_RETURN(values, emitter.EmitAll(root, index));
    }
    for (size_t k = 0; k < values.size(); ++k) {
      Value stored = ops.ToStorage(values[k], out_shapes[k].element_type());
      mlir::memref::StoreOp::create(b, loc, stored, outs[k], index);
    }
    return Status::Ok();
  };
  int64_t n = iteration_shape.ElementCount();
  Status status = Status::Ok();
  if (n > 0) {
    // One loop dimension per iteration dimension (a scalar gets one loop of
    // one iteration and the empty index).
    const std::vector<int64_t>& dims = iteration_shape.dims();
    int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<Value> zeros, ones, counts;
    for (int64_t d = 0; d < std::max<int64_t>(rank, 1); ++d) {
      zeros.push_back(ops.IndexConstant(0));
      ones.push_back(ops.IndexConstant(1));
      counts.push_back(ops.IndexConstant(rank == 0 ? 1 : dims[d]));
    }
    mlir::scf::ParallelOp::create(
        b, loc, zeros, counts, ones, [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = emit_element(rank == 0 ? Index{} : Index(ivs.begin(), ivs.end()));
          nested.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
        });
  }
  KILN_RETURN_IF_ERROR(status.WithContext("kernel " + spec.name));
  b.setInsertionPointToEnd(entry);
  mlir::func::ReturnOp::create(b, loc);
  KernelInfo info{spec.name, static_cast<int>(arg_types.size()), n};
  SetHostSplit(info, iteration_shape, /*may_collide=*/root->opcode() == HloOpcode::kScatter);
  // A sequential scatter's one iteration visits every update.
  int64_t work_iterations = in_place && root->opcode() == HloOpcode::kScatter
                                ? root->operand(root->operand_count() - 1)->shape().ElementCount()
                                : n;
  info.host_work = std::max(n, work_iterations) * ReducedElementsPerIteration(comp);
  info.cuda_elements_per_thread = FlatLoopVectorWidth(iteration_shape, out_shapes, in_place);
  return info;
}

}  // namespace

StatusOr<KernelModulePtr> EmitKernelModule(const std::vector<KernelSpec>& kernels, KernelTarget target,
                                           std::vector<KernelInfo>* infos, KernelCompileTimes* times) {
  return EmitKernelModule(kernels, target, infos, times, nullptr);
}

StatusOr<KernelModulePtr> EmitKernelModule(const std::vector<KernelSpec>& kernels, KernelTarget target,
                                           std::vector<KernelInfo>* infos, KernelCompileTimes* times,
                                           CodegenSession* session) {
  std::optional<StageTimer> setup_timer(std::in_place, times ? &times->setup : nullptr);
  KernelModulePtr km(new KernelModule);
  if (session) {
    km->context = &session->mlir_context();
  } else {
    km->owned_context = std::make_unique<mlir::MLIRContext>();
    km->context = km->owned_context.get();
    km->context->disableMultithreading();
    LoadKernelDialects(*km->context);
  }
  setup_timer.reset();
  StageTimer emit_timer(times ? &times->emit : nullptr);
  km->module = mlir::ModuleOp::create(mlir::UnknownLoc::get(km->context));
  std::map<std::string, int> seen;
  infos->clear();
  for (const KernelSpec& spec : kernels) {
    if (!spec.computation) return Error("kernel " + spec.name + " has no computation");
    if (!IsCIdentifier(spec.name))
      return Error("kernel name '" + spec.name + "' is not a C identifier");
    if (seen[spec.name]++) return Error("duplicate kernel name '" + spec.name + "'");
    KILN_ASSIGN_OR_RETURN(KernelInfo info, EmitKernel(*km->module, spec, target));
    infos->push_back(std::move(info));
  }
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(km->context, [&](mlir::Diagnostic& diag) {
    diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(*km->module)))
    return Error("internal error: the emitted kernel IR does not verify: " + diagnostics);
  return km;
}

}  // namespace kiln::codegen::internal
