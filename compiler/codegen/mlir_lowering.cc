// Kernel IR -> LLVM IR, for the host and for CUDA. Both paths share the
// conversion to the LLVM dialect (bare-pointer calling convention: a
// static-shape memref argument becomes one pointer) and differ in:
//   * host: scf.parallel runs as a nest of sequential loops, its split
//     dimension bounded by the kernel's trailing begin/end arguments (the
//     runtime runs disjoint ranges on its threads); f32 transcendentals
//     are polynomial approximations (ApproximateHostMath), the rest call
//     libm.
//   * CUDA: the kernel's scf.parallel becomes one thread per element
//     (blockIdx.x * blockDim.x + threadIdx.x, guarded by the element count
//     and delinearized into the loop's dimensions);
//     transcendental math ops and frem call libdevice (__nv_*).
//   * tiled kernels (transpose_emitter.h): on CUDA the tile loop becomes
//     blockIdx.x, the thread loops (threadIdx.y, threadIdx.x), the tile
//     buffer dynamic shared memory and the barrier bar.sync 0; on the host
//     all loops run sequentially, the tile lives on the stack and the
//     barrier disappears.
// On both, narrow-float conversions (f8; f16/bf16 too on the host) become
// integer code (narrow_float_lowering.h). The remaining math ops (sqrt,
// abs, floor, ...) become LLVM intrinsics, which both backends lower exactly.
#include <algorithm>
#include <optional>
#include <iterator>

#include "compiler/codegen/kernel_module.h"
#include "compiler/codegen/llvm_backend.h"
#include "compiler/codegen/narrow_float_lowering.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/codegen/tiled_kernel_ir.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ComplexToLLVM/ComplexToLLVM.h"
#include "mlir/Conversion/ComplexToStandard/ComplexToStandard.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/IR/Module.h"

namespace kiln::codegen::internal {
namespace {

using mlir::Value;

enum class Target { kHost, kCuda };

// Collects MLIR diagnostics so failures can be reported as a Status.
class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext* ctx)
      : handler_(ctx, [this](mlir::Diagnostic& diag) {
          if (!text_.empty()) text_ += "; ";
          text_ += diag.str();
          return mlir::success();
        }) {}
  Status Fail(const std::string& what) const {
    return Error("internal error: " + what + (text_.empty() ? "" : ": " + text_));
  }

 private:
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

// ---------------------------------------------------------------------------
// Math functions as calls.

struct MathCall {
  llvm::StringLiteral op;  // math dialect operation name
  const char* libm_f32;
  const char* libm_f64;
  const char* nv_f32;
  const char* nv_f64;
};

constexpr MathCall kMathCalls[] = {
    {"math.exp", "expf", "exp", "__nv_expf", "__nv_exp"},
    {"math.expm1", "expm1f", "expm1", "__nv_expm1f", "__nv_expm1"},
    {"math.log", "logf", "log", "__nv_logf", "__nv_log"},
    {"math.log1p", "log1pf", "log1p", "__nv_log1pf", "__nv_log1p"},
    {"math.tanh", "tanhf", "tanh", "__nv_tanhf", "__nv_tanh"},
    {"math.sin", "sinf", "sin", "__nv_sinf", "__nv_sin"},
    {"math.cos", "cosf", "cos", "__nv_cosf", "__nv_cos"},
    {"math.tan", "tanf", "tan", "__nv_tanf", "__nv_tan"},
    {"math.erf", "erff", "erf", "__nv_erff", "__nv_erf"},
    {"math.cbrt", "cbrtf", "cbrt", "__nv_cbrtf", "__nv_cbrt"},
    {"math.atan2", "atan2f", "atan2", "__nv_atan2f", "__nv_atan2"},
    {"math.powf", "powf", "pow", "__nv_powf", "__nv_pow"},
    // NVPTX expands frem as x - trunc(x/y)*y, which is not exact; fmod is.
    // The host backend already lowers frem to fmod.
    {"arith.remf", nullptr, nullptr, "__nv_fmodf", "__nv_fmod"},
};

// Host f32 transcendentals become polynomial approximations in the IR
// (MLIR's math approximations: range reduction, a minimax polynomial or
// rational function, exact special-case selects) instead of scalar libm
// calls, so a loop of them vectorizes. Only the functions whose error was
// measured at a few ulp over their whole f32 domain are listed
// (tests/codegen/host_math_accuracy_test.cc sweeps them against f64), and
// only where they beat glibc's vector functions (libmvec, llvm_backend.cc),
// which every other f32 function in a loop becomes: sin/cos/tan (the
// approximations' range reduction loses accuracy for large arguments), cbrt
// and atan2 (wrong at infinities and zeros), pow, and expm1 and log1p (the
// approximations run 3x and 2x longer). f64 always calls libm.
constexpr llvm::StringLiteral kHostApproximatedMath[] = {
    "math.exp", "math.log", "math.tanh", "math.erf",
};

// The approximations of exp and log are accurate on normal numbers: exp
// flushes results below 2^-126 to zero and loses accuracy just below its
// overflow, log reads a subnormal input as 2^-126. Both are steered there:
//   exp(x) = exp(x + 64) * exp(-64) for x < -80 and
//          = exp(x - 64) * exp(64)  for x > 80
// (x -+ 64 is exact in those ranges, and the product rounds once, into the
// subnormal range at the low end), and
//   log(x) = log(x * 2^23) - 23 ln 2 for x < 2^-126
// (the scaled input is normal; zero, negatives and -0 keep their -inf and
// NaN). Elsewhere the offsets are 0 and the scales 1, which change nothing.
void GuardExtremeArguments(mlir::ModuleOp module) {
  namespace arith = mlir::arith;
  using Pf = arith::CmpFPredicate;
  std::vector<mlir::Operation*> ops;
  module.walk([&](mlir::Operation* op) {
    if (mlir::isa<mlir::math::ExpOp, mlir::math::LogOp>(op) && op->getResult(0).getType().isF32())
      ops.push_back(op);
  });
  mlir::OpBuilder b(module.getContext());
  for (mlir::Operation* op : ops) {
    b.setInsertionPoint(op);
    mlir::Location loc = op->getLoc();
    auto f32 = [&](float v) { return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)).getResult(); };
    auto select = [&](Value c, Value t, Value f) { return arith::SelectOp::create(b, loc, c, t, f).getResult(); };
    Value x = op->getOperand(0);
    Value input, low, high;
    if (mlir::isa<mlir::math::ExpOp>(op)) {
      low = arith::CmpFOp::create(b, loc, Pf::OLT, x, f32(-80.0f));
      high = arith::CmpFOp::create(b, loc, Pf::OGT, x, f32(80.0f));
      input = arith::AddFOp::create(b, loc, x, select(low, f32(64.0f), select(high, f32(-64.0f), f32(0.0f))));
    } else {
      low = arith::CmpFOp::create(b, loc, Pf::OLT, x, f32(0x1p-126f));
      input = select(low, arith::MulFOp::create(b, loc, x, f32(0x1p23f)), x);
    }
    op->setOperand(0, input);
    b.setInsertionPointAfter(op);
    Value r = op->getResult(0);
    mlir::Operation* fixed;
    if (high) {  // exp(-64), exp(64)
      Value scale = select(low, f32(1.60381089e-28f), select(high, f32(6.23514908e27f), f32(1.0f)));
      fixed = arith::MulFOp::create(b, loc, r, scale);
    } else {  // 23 ln 2
      Value corrected = arith::SubFOp::create(b, loc, r, f32(15.9423847f));
      fixed = arith::SelectOp::create(b, loc, low, corrected, r);
      llvm::SmallPtrSet<mlir::Operation*, 2> readers = {corrected.getDefiningOp(), fixed};
      r.replaceAllUsesExcept(fixed->getResult(0), readers);
      continue;
    }
    r.replaceAllUsesExcept(fixed->getResult(0), fixed);
  }
}

Status ApplyApproximations(mlir::ModuleOp module, llvm::function_ref<bool(llvm::StringRef)> ops) {
  mlir::RewritePatternSet patterns(module.getContext());
  mlir::populateMathPolynomialApproximationPatterns(patterns, ops);
  if (mlir::failed(mlir::applyPatternsGreedily(module, std::move(patterns))))
    return Error("internal error: math approximation did not converge");
  return Status::Ok();
}

// The approximations' polynomials are written with math.fma. The host
// kernels' baseline x86-64 has no FMA instruction, where llvm.fma is a
// call to the C library's exact (and slow) fmaf; a multiply and an add
// that LLVM may contract where the CPU has FMA keep them vectorized.
void ContractableFma(mlir::ModuleOp module) {
  auto contract = mlir::arith::FastMathFlags::contract;
  module.walk([&](mlir::math::FmaOp fma) {
    mlir::OpBuilder b(fma);
    Value product = mlir::arith::MulFOp::create(b, fma.getLoc(), fma.getA(), fma.getB(), contract);
    fma.replaceAllUsesWith(mlir::arith::AddFOp::create(b, fma.getLoc(), product, fma.getC(), contract).getResult());
    fma.erase();
  });
}

Status ApproximateHostMath(mlir::ModuleOp module) {
  GuardExtremeArguments(module);
  KILN_RETURN_IF_ERROR(
      ApplyApproximations(module, [](llvm::StringRef op) { return llvm::is_contained(kHostApproximatedMath, op); }));
  ContractableFma(module);
  return Status::Ok();
}

// Replaces the math ops of kMathCalls by calls to declared functions
// (func.func private, converted to llvm.func with everything else).
Status ReplaceMathWithCalls(mlir::ModuleOp module, Target target, bool* uses_libdevice) {
  std::vector<mlir::Operation*> ops;
  module.walk([&](mlir::Operation* op) {
    for (const MathCall& call : kMathCalls)
      if (op->getName().getStringRef() == call.op) ops.push_back(op);
  });
  mlir::OpBuilder b(module.getContext());
  for (mlir::Operation* op : ops) {
    const MathCall* call = nullptr;
    for (const MathCall& c : kMathCalls)
      if (op->getName().getStringRef() == c.op) call = &c;
    mlir::Type type = op->getResult(0).getType();
    bool f64 = type.isF64();
    if (!f64 && !type.isF32())
      return Error("internal error: " + call->op.str() + " on a type other than f32/f64");
    const char* name = target == Target::kHost ? (f64 ? call->libm_f64 : call->libm_f32)
                                               : (f64 ? call->nv_f64 : call->nv_f32);
    if (!name) continue;  // handled by the backend
    if (target == Target::kCuda) *uses_libdevice = true;
    auto callee = module.lookupSymbol<mlir::func::FuncOp>(name);
    if (!callee) {
      mlir::OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      std::vector<mlir::Type> args(op->getNumOperands(), type);
      callee = mlir::func::FuncOp::create(b, op->getLoc(), name, b.getFunctionType(args, {type}));
      callee.setPrivate();
    }
    b.setInsertionPoint(op);
    auto result = mlir::func::CallOp::create(b, op->getLoc(), callee, op->getOperands());
    op->getResult(0).replaceAllUsesWith(result.getResult(0));
    op->erase();
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Host: tiled kernels (transpose_emitter.h) run their tile and thread loops
// sequentially, so one tile buffer on the stack serves every tile and the
// barrier has nothing to wait for.

Status PrepareTiledKernelsForHost(mlir::ModuleOp module) {
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    if (func.isExternal()) continue;
    mlir::Block& entry = func.getBody().front();
    // Hoisted out of the tile loop: an alloca inside it would grow the
    // stack on every tile.
    std::vector<mlir::memref::AllocaOp> buffers;
    func.walk([&](mlir::memref::AllocaOp alloca) {
      if (alloca->hasAttr(kTileBufferAttr)) buffers.push_back(alloca);
    });
    for (mlir::memref::AllocaOp alloca : buffers) alloca->moveBefore(&entry, entry.begin());
  }
  std::vector<mlir::func::CallOp> barriers;
  module.walk([&](mlir::func::CallOp call) {
    if (call.getCallee() == kBarrierFunc) barriers.push_back(call);
  });
  for (mlir::func::CallOp call : barriers) call.erase();
  if (auto f = module.lookupSymbol<mlir::func::FuncOp>(kBarrierFunc)) f.erase();
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Host: every kernel takes two trailing index arguments, begin and end, and
// runs only iterations [begin, end) of its split dimension (KernelInfo::
// host_split_dim of its top-level scf.parallel), so the runtime can hand
// disjoint ranges to different threads. A kernel that is one unit ignores
// them.

Status BindSplitDimensionToArguments(mlir::ModuleOp module, const std::vector<KernelInfo>& kernels) {
  for (const KernelInfo& info : kernels) {
    auto func = module.lookupSymbol<mlir::func::FuncOp>(info.name);
    if (!func || func.isExternal())
      return Error("internal error: kernel " + info.name + " missing from the IR");
    mlir::MLIRContext* ctx = module.getContext();
    mlir::Type index = mlir::IndexType::get(ctx);
    mlir::Location loc = func.getLoc();
    unsigned n = func.getNumArguments();
    if (mlir::failed(func.insertArgument(n, index, mlir::DictionaryAttr::get(ctx), loc)) ||
        mlir::failed(func.insertArgument(n + 1, index, mlir::DictionaryAttr::get(ctx), loc)))
      return Error("internal error: cannot add the range arguments of kernel " + info.name);
    if (info.host_split_dim < 0) continue;
    auto loops = func.getBody().front().getOps<mlir::scf::ParallelOp>();
    if (std::distance(loops.begin(), loops.end()) != 1)
      return Error("internal error: kernel " + info.name + " has no single top-level parallel loop to split");
    mlir::scf::ParallelOp loop = *loops.begin();
    auto d = static_cast<unsigned>(info.host_split_dim);
    if (d >= loop.getNumLoops())
      return Error("internal error: kernel " + info.name + " has no loop dimension " + std::to_string(d));
    loop.getLowerBoundMutable()[d].set(func.getArgument(n));
    loop.getUpperBoundMutable()[d].set(func.getArgument(n + 1));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// CUDA: the scf.parallel of each kernel becomes one thread per element;
// a tiled kernel's tile loop becomes the block index, its thread loops the
// thread index, its tile buffer dynamic shared memory and its barrier
// bar.sync 0.

mlir::LLVM::LLVMFuncOp DeclareIntrinsic(mlir::ModuleOp module, llvm::StringRef name,
                                        mlir::LLVM::LLVMFunctionType type) {
  if (auto f = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(name)) return f;
  mlir::OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  return mlir::LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

// The special registers a kernel reads (each an i32 of no arguments).
struct SpecialRegisters {
  explicit SpecialRegisters(mlir::ModuleOp module) {
    auto type = mlir::LLVM::LLVMFunctionType::get(mlir::IntegerType::get(module.getContext(), 32), {});
    tid_x = DeclareIntrinsic(module, "llvm.nvvm.read.ptx.sreg.tid.x", type);
    tid_y = DeclareIntrinsic(module, "llvm.nvvm.read.ptx.sreg.tid.y", type);
    ctaid_x = DeclareIntrinsic(module, "llvm.nvvm.read.ptx.sreg.ctaid.x", type);
    ntid_x = DeclareIntrinsic(module, "llvm.nvvm.read.ptx.sreg.ntid.x", type);
    nctaid_x = DeclareIntrinsic(module, "llvm.nvvm.read.ptx.sreg.nctaid.x", type);
  }
  // The register's value as an index, read at `b`'s insertion point.
  static Value Read(mlir::OpBuilder& b, mlir::Location loc, mlir::LLVM::LLVMFuncOp f) {
    Value v = mlir::LLVM::CallOp::create(b, loc, f, mlir::ValueRange{}).getResult();
    return mlir::arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  }
  mlir::LLVM::LLVMFuncOp tid_x, tid_y, ctaid_x, ntid_x, nctaid_x;
};

// The value of `loop`'s induction variable k in iteration `id`:
// lower_k + id * step_k.
Value IterationValue(mlir::OpBuilder& b, mlir::scf::ParallelOp loop, unsigned k, Value id) {
  mlir::Location loc = loop.getLoc();
  return mlir::arith::AddIOp::create(b, loc, loop.getLowerBound()[k],
                                     mlir::arith::MulIOp::create(b, loc, id, loop.getStep()[k]));
}

// Replaces `loop` by its body with the induction variables set to `ivs`,
// moved into `into` before `at`.
void InlineParallelLoop(mlir::scf::ParallelOp loop, const std::vector<Value>& ivs, mlir::Block* into,
                        mlir::Block::iterator at) {
  mlir::Block* body = loop.getBody();
  for (size_t k = 0; k < ivs.size(); ++k) body->getArgument(k).replaceAllUsesWith(ivs[k]);
  into->getOperations().splice(at, body->getOperations(), body->begin(), std::prev(body->end()));
  loop.erase();
}

// The iteration count of each of `loop`'s dimensions, when all are constant.
std::optional<std::vector<int64_t>> ConstantTripCounts(mlir::scf::ParallelOp loop) {
  std::vector<int64_t> counts;
  for (unsigned k = 0; k < loop.getNumLoops(); ++k) {
    std::optional<int64_t> lb = mlir::getConstantIntValue(loop.getLowerBound()[k]);
    std::optional<int64_t> ub = mlir::getConstantIntValue(loop.getUpperBound()[k]);
    std::optional<int64_t> step = mlir::getConstantIntValue(loop.getStep()[k]);
    if (!lb || !ub || !step || *step <= 0) return std::nullopt;
    counts.push_back(*ub > *lb ? (*ub - *lb + *step - 1) / *step : 0);
  }
  return counts;
}

// Clones `block`'s operations once per element map in `maps` (the
// iterations one thread takes), operation by operation. An operation
// without memory effects or regions whose operands are the same values in
// every map is cloned once and shared; an scf.if whose condition is shared
// becomes one scf.if whose regions hold every element's copy. So what
// depends only on the outer indices (which operand of a concatenate an
// element comes from, a dynamic slice's clamped start) is computed once per
// thread instead of once per element. Top-level stores go to `stores`.
void CloneForElements(mlir::OpBuilder& b, mlir::Block& block, std::vector<mlir::IRMapping>& maps,
                      std::vector<mlir::Operation*>* stores) {
  auto shared = [&](Value v) {
    Value first = maps[0].lookupOrDefault(v);
    return std::all_of(maps.begin(), maps.end(), [&](const mlir::IRMapping& m) { return m.lookupOrDefault(v) == first; });
  };
  for (mlir::Operation& op : block.without_terminator()) {
    bool uniform = std::all_of(op.operand_begin(), op.operand_end(), shared);
    if (uniform && op.getNumRegions() == 0 && mlir::isPure(&op)) {
      mlir::Operation* copy = b.clone(op, maps[0]);
      for (size_t v = 1; v < maps.size(); ++v)
        for (unsigned r = 0; r < op.getNumResults(); ++r) maps[v].map(op.getResult(r), copy->getResult(r));
      continue;
    }
    auto branch = mlir::dyn_cast<mlir::scf::IfOp>(op);
    if (branch && uniform) {
      std::vector<mlir::Type> types;
      for (size_t v = 0; v < maps.size(); ++v)
        types.insert(types.end(), branch.getResultTypes().begin(), branch.getResultTypes().end());
      bool has_else = !branch.getElseRegion().empty();
      auto merged = mlir::scf::IfOp::create(b, op.getLoc(), types, maps[0].lookupOrDefault(branch.getCondition()),
                                            /*addThenBlock=*/true, /*addElseBlock=*/has_else);
      auto fill = [&](mlir::Region& from, mlir::Region& to) {
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&to.front());
        CloneForElements(b, from.front(), maps, nullptr);
        auto yield = mlir::cast<mlir::scf::YieldOp>(from.front().getTerminator());
        std::vector<Value> yielded;
        for (const mlir::IRMapping& m : maps)
          for (Value y : yield.getOperands()) yielded.push_back(m.lookupOrDefault(y));
        mlir::scf::YieldOp::create(b, yield.getLoc(), yielded);
      };
      fill(branch.getThenRegion(), merged.getThenRegion());
      if (has_else) fill(branch.getElseRegion(), merged.getElseRegion());
      unsigned n = branch.getNumResults();
      for (size_t v = 0; v < maps.size(); ++v)
        for (unsigned r = 0; r < n; ++r) maps[v].map(branch.getResult(r), merged.getResult(static_cast<unsigned>(v) * n + r));
      continue;
    }
    for (mlir::IRMapping& m : maps) {
      mlir::Operation* copy = b.clone(op, m);
      if (stores && mlir::isa<mlir::memref::StoreOp>(copy)) stores->push_back(copy);
    }
  }
}

// A kernel's N-dimensional scf.parallel as threads that each take `width`
// consecutive iterations of its innermost dimension (which `width`
// divides) at a time: the linear position is delinearized, row-major, into
// the loop's iteration numbers with the innermost one scaled by `width`, and
// the body is repeated for the `width` iterations (CloneForElements), whose
// accesses to consecutive addresses the load/store vectorizer then merges. Threads
// stride over the positions by the grid's size (a grid-stride loop), so the
// launch may have fewer threads than positions (kernel_codegen.cc caps
// it).
Status MapFlatLoop(mlir::scf::ParallelOp loop, const SpecialRegisters& regs, int64_t width) {
  std::optional<std::vector<int64_t>> counts = ConstantTripCounts(loop);
  if (!counts || loop.getNumResults() != 0)
    return Error("internal error: kernel loop is not a static scf.parallel");
  if (width < 1 || counts->empty() || counts->back() % width != 0)
    return Error("internal error: kernel loop's innermost dimension is not a multiple of its vector width");
  mlir::OpBuilder b(loop);
  mlir::Location loc = loop.getLoc();
  ScalarOps ops(b, loc);
  Value block = mlir::arith::MulIOp::create(b, loc, SpecialRegisters::Read(b, loc, regs.ctaid_x),
                                            SpecialRegisters::Read(b, loc, regs.ntid_x));
  Value first_position =
      mlir::arith::AddIOp::create(b, loc, block, SpecialRegisters::Read(b, loc, regs.tid_x));
  Value grid = mlir::arith::MulIOp::create(b, loc, SpecialRegisters::Read(b, loc, regs.nctaid_x),
                                           SpecialRegisters::Read(b, loc, regs.ntid_x));
  std::vector<int64_t> thread_counts = *counts;
  thread_counts.back() /= width;
  int64_t total = 1;
  for (int64_t c : thread_counts) total *= c;
  // Positions first_position, + grid, ... below total (the last block is
  // ragged; a capped grid takes several turns).
  auto positions = mlir::scf::ForOp::create(b, loc, first_position, ops.IndexConstant(total), grid);
  mlir::Block* turn = positions.getBody();
  b.setInsertionPointToStart(turn);
  Value linear = positions.getInductionVar();
  std::vector<Value> ids = ops.Delinearize(linear, thread_counts);
  if (width == 1) {
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = IterationValue(b, loop, static_cast<unsigned>(k), ids[k]);
    InlineParallelLoop(loop, ids, turn, b.getInsertionPoint());
    return Status::Ok();
  }
  unsigned inner = static_cast<unsigned>(ids.size() - 1);
  // Indices never wrap (they address the kernel's buffers): saying so lets
  // LLVM see the `width` elements' addresses as one base plus constants.
  const auto no_wrap = mlir::arith::IntegerOverflowFlags::nsw | mlir::arith::IntegerOverflowFlags::nuw;
  Value first = mlir::arith::MulIOp::create(b, loc, ids.back(), ops.IndexConstant(width), no_wrap);
  std::vector<Value> ivs(ids.size());
  for (unsigned k = 0; k < inner; ++k) ivs[k] = IterationValue(b, loop, k, ids[k]);
  std::vector<mlir::IRMapping> maps(static_cast<size_t>(width));
  for (int64_t v = 0; v < width; ++v) {
    ivs[inner] = IterationValue(b, loop, inner,
                                mlir::arith::AddIOp::create(b, loc, first, ops.IndexConstant(v), no_wrap));
    for (unsigned k = 0; k < ivs.size(); ++k) maps[static_cast<size_t>(v)].map(loop.getBody()->getArgument(k), ivs[k]);
  }
  std::vector<mlir::Operation*> stores;
  CloneForElements(b, *loop.getBody(), maps, &stores);
  // The stores go after every element's loads, in order, so that the
  // vectorizer sees `width` adjacent loads and `width` adjacent stores (an
  // output written in its operand's buffer would otherwise interleave them
  // and split the vectors). No element's loads read another's output: an
  // output shares a buffer only with an operand it reads at its own index.
  for (mlir::Operation* store : stores) store->moveBefore(turn->getTerminator());
  loop.erase();
  return Status::Ok();
}

// The tile buffer as a view of the kernel's dynamic shared memory (an
// external [0 x T] array in address space 3, as CUDA's `extern __shared__`).
void MapTileBufferToSharedMemory(mlir::ModuleOp module, mlir::func::FuncOp func,
                                 mlir::memref::AllocaOp alloca) {
  mlir::MLIRContext* ctx = module.getContext();
  mlir::MemRefType type = alloca.getType();
  auto shared = mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64), 3);
  auto raw_type = mlir::MemRefType::get({0}, type.getElementType(), mlir::MemRefLayoutAttrInterface{}, shared);
  auto tile_type = mlir::MemRefType::get(type.getShape(), type.getElementType(),
                                         mlir::MemRefLayoutAttrInterface{}, shared);
  std::string name = "__kiln_smem_" + func.getSymName().str();
  mlir::OpBuilder b(ctx);
  if (!module.lookupSymbol(name)) {
    b.setInsertionPointToStart(module.getBody());
    mlir::memref::GlobalOp::create(b, alloca.getLoc(), b.getStringAttr(name),
                                   /*sym_visibility=*/nullptr, mlir::TypeAttr::get(raw_type),
                                   /*initial_value=*/nullptr, /*constant=*/nullptr,
                                   b.getI64IntegerAttr(16));
  }
  b.setInsertionPoint(alloca);
  Value raw = mlir::memref::GetGlobalOp::create(b, alloca.getLoc(), raw_type, name);
  int64_t cols = type.getShape()[1];
  Value tile = mlir::memref::ReinterpretCastOp::create(
      b, alloca.getLoc(), tile_type, raw, /*offset=*/0, type.getShape(), llvm::ArrayRef<int64_t>{cols, 1});
  alloca.getResult().replaceAllUsesWith(tile);
  alloca.erase();
}

// A kiln.shared buffer as a static shared-memory array of its own (CUDA's
// `__shared__ T name[...]`): uninitialized, in address space 3.
void MapSharedBufferToStatic(mlir::ModuleOp module, mlir::func::FuncOp func, mlir::memref::AllocaOp alloca,
                             int index) {
  mlir::MLIRContext* ctx = module.getContext();
  mlir::MemRefType type = alloca.getType();
  auto shared = mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64), 3);
  auto global_type = mlir::MemRefType::get(type.getShape(), type.getElementType(),
                                           mlir::MemRefLayoutAttrInterface{}, shared);
  std::string name = "__kiln_shared_" + func.getSymName().str() + "_" + std::to_string(index);
  mlir::OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  mlir::memref::GlobalOp::create(b, alloca.getLoc(), b.getStringAttr(name), b.getStringAttr("private"),
                                 mlir::TypeAttr::get(global_type), /*initial_value=*/b.getUnitAttr(),
                                 /*constant=*/nullptr, b.getI64IntegerAttr(16));
  b.setInsertionPoint(alloca);
  Value buffer = mlir::memref::GetGlobalOp::create(b, alloca.getLoc(), global_type, name);
  alloca.getResult().replaceAllUsesWith(buffer);
  alloca.erase();
}

Status MapTiledLoop(mlir::ModuleOp module, mlir::func::FuncOp func, mlir::scf::ParallelOp tiles,
                    const SpecialRegisters& regs) {
  if (tiles.getNumLoops() != 1 || tiles.getNumResults() != 0)
    return Error("internal error: tile loop is not a one-dimensional scf.parallel");
  std::vector<mlir::scf::ParallelOp> threads;
  std::vector<mlir::memref::AllocaOp> buffers, shared_buffers;
  std::vector<mlir::func::CallOp> barriers;
  tiles.getBody()->walk([&](mlir::Operation* op) {
    if (auto loop = mlir::dyn_cast<mlir::scf::ParallelOp>(op); loop && loop->hasAttr(kThreadsAttr))
      threads.push_back(loop);
    if (auto alloca = mlir::dyn_cast<mlir::memref::AllocaOp>(op); alloca && alloca->hasAttr(kTileBufferAttr))
      buffers.push_back(alloca);
    if (auto alloca = mlir::dyn_cast<mlir::memref::AllocaOp>(op); alloca && alloca->hasAttr(kSharedBufferAttr))
      shared_buffers.push_back(alloca);
    if (auto call = mlir::dyn_cast<mlir::func::CallOp>(op); call && call.getCallee() == kBarrierFunc)
      barriers.push_back(call);
  });
  // The grid has exactly one block per tile: no guard.
  mlir::OpBuilder b(tiles);
  Value tile = IterationValue(b, tiles, 0, SpecialRegisters::Read(b, tiles.getLoc(), regs.ctaid_x));
  InlineParallelLoop(tiles, {tile}, tiles->getBlock(), mlir::Block::iterator(tiles));
  for (mlir::scf::ParallelOp loop : threads) {
    if (loop.getNumLoops() != 2 || loop.getNumResults() != 0)
      return Error("internal error: thread loop is not a two-dimensional scf.parallel");
    // The block is exactly the loop's extent: no guard.
    b.setInsertionPoint(loop);
    std::vector<Value> ivs = {
        IterationValue(b, loop, 0, SpecialRegisters::Read(b, loop.getLoc(), regs.tid_y)),
        IterationValue(b, loop, 1, SpecialRegisters::Read(b, loop.getLoc(), regs.tid_x))};
    InlineParallelLoop(loop, ivs, loop->getBlock(), mlir::Block::iterator(loop));
  }
  for (mlir::memref::AllocaOp alloca : buffers) MapTileBufferToSharedMemory(module, func, alloca);
  for (size_t i = 0; i < shared_buffers.size(); ++i)
    MapSharedBufferToStatic(module, func, shared_buffers[i], static_cast<int>(i));
  auto i32 = mlir::IntegerType::get(module.getContext(), 32);
  auto sync = DeclareIntrinsic(module, "llvm.nvvm.barrier.cta.sync.aligned.all",
                               mlir::LLVM::LLVMFunctionType::get(
                                   mlir::LLVM::LLVMVoidType::get(module.getContext()), {i32}));
  for (mlir::func::CallOp call : barriers) {
    b.setInsertionPoint(call);
    Value zero = mlir::arith::ConstantIntOp::create(b, call.getLoc(), i32, 0);
    mlir::LLVM::CallOp::create(b, call.getLoc(), sync, mlir::ValueRange{zero});
    call.erase();
  }
  return Status::Ok();
}

// kiln.shuffle_down.<T> calls as shfl.sync.down on the whole warp: f32 and
// i32 directly, narrower values widened to i32, 64-bit ones in two halves.
class ShuffleExpander {
 public:
  ShuffleExpander(mlir::ModuleOp module, mlir::OpBuilder& b, mlir::Location loc) : module_(module), b_(b), loc_(loc) {}

  Value Expand(Value v, Value n) {
    mlir::Type t = v.getType();
    if (t.isF32() || t.isInteger(32)) return Shuffle32(v, n);
    unsigned bits = t.getIntOrFloatBitWidth();
    auto int_type = b_.getIntegerType(bits);
    Value x = t.isInteger(bits) ? v : mlir::arith::BitcastOp::create(b_, loc_, int_type, v).getResult();
    Value r;
    if (bits < 32) {
      Value wide = mlir::arith::ExtUIOp::create(b_, loc_, b_.getI32Type(), x);
      r = mlir::arith::TruncIOp::create(b_, loc_, int_type, Shuffle32(wide, n));
    } else {
      Value lo = mlir::arith::TruncIOp::create(b_, loc_, b_.getI32Type(), x);
      Value shift = mlir::arith::ConstantIntOp::create(b_, loc_, int_type, 32);
      Value hi = mlir::arith::TruncIOp::create(b_, loc_, b_.getI32Type(),
                                               mlir::arith::ShRUIOp::create(b_, loc_, x, shift));
      Value rlo = mlir::arith::ExtUIOp::create(b_, loc_, int_type, Shuffle32(lo, n));
      Value rhi = mlir::arith::ExtUIOp::create(b_, loc_, int_type, Shuffle32(hi, n));
      r = mlir::arith::OrIOp::create(b_, loc_, rlo, mlir::arith::ShLIOp::create(b_, loc_, rhi, shift));
    }
    return t.isInteger(bits) ? r : mlir::arith::BitcastOp::create(b_, loc_, t, r).getResult();
  }

 private:
  Value Shuffle32(Value v, Value n) {
    mlir::Type i32 = b_.getI32Type();
    bool f32 = v.getType().isF32();
    auto f = DeclareIntrinsic(module_, f32 ? "llvm.nvvm.shfl.sync.down.f32" : "llvm.nvvm.shfl.sync.down.i32",
                              mlir::LLVM::LLVMFunctionType::get(v.getType(), {i32, v.getType(), i32, i32}));
    Value all = mlir::arith::ConstantIntOp::create(b_, loc_, i32, -1);
    Value clamp = mlir::arith::ConstantIntOp::create(b_, loc_, i32, 31);
    return mlir::LLVM::CallOp::create(b_, loc_, f, mlir::ValueRange{all, v, n, clamp}).getResult();
  }

  mlir::ModuleOp module_;
  mlir::OpBuilder& b_;
  mlir::Location loc_;
};

void ExpandShuffles(mlir::ModuleOp module) {
  std::vector<mlir::func::CallOp> calls;
  module.walk([&](mlir::func::CallOp call) {
    if (call.getCallee().starts_with(kShuffleDownPrefix)) calls.push_back(call);
  });
  mlir::OpBuilder b(module.getContext());
  for (mlir::func::CallOp call : calls) {
    b.setInsertionPoint(call);
    ShuffleExpander expander(module, b, call.getLoc());
    call.getResult(0).replaceAllUsesWith(expander.Expand(call.getOperand(0), call.getOperand(1)));
    call.erase();
  }
  std::vector<mlir::func::FuncOp> decls;
  for (auto f : module.getOps<mlir::func::FuncOp>())
    if (f.getSymName().starts_with(kShuffleDownPrefix)) decls.push_back(f);
  for (mlir::func::FuncOp f : decls) f.erase();
}

Status MapParallelLoopsToThreads(mlir::ModuleOp module, const std::vector<KernelInfo>& kernels) {
  std::vector<std::pair<mlir::func::FuncOp, mlir::scf::ParallelOp>> loops;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    if (func.isExternal()) continue;
    for (auto loop : func.getBody().front().getOps<mlir::scf::ParallelOp>()) loops.push_back({func, loop});
  }
  SpecialRegisters regs(module);
  for (auto [func, loop] : loops) {
    if (loop->hasAttr(kTilesAttr)) {
      KILN_RETURN_IF_ERROR(MapTiledLoop(module, func, loop, regs));
    } else {
      int64_t width = 1;
      for (const KernelInfo& info : kernels)
        if (info.name == func.getSymName()) width = info.cuda_elements_per_thread;
      KILN_RETURN_IF_ERROR(MapFlatLoop(loop, regs, width));
    }
  }
  if (auto f = module.lookupSymbol<mlir::func::FuncOp>(kBarrierFunc)) f.erase();
  ExpandShuffles(module);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Shared: to the LLVM dialect, then LLVM IR.

// Whether every index value of a CUDA module fits in 32 bits, so that its
// index arithmetic can be 32-bit (half the instructions and registers of
// 64-bit address math): every buffer has fewer than 2^31 elements, every
// index constant fits, and no index comes from a 64-bit integer or an
// unsigned 32-bit one (data-dependent gather and dynamic-slice indices,
// clamped only after the conversion). Thread and block ids (read through
// LLVM calls) are below 2^31.
bool IndexFitsIn32Bits(mlir::ModuleOp module) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  bool fits = true;
  module.walk([&](mlir::Operation* op) {
    for (mlir::Type t : op->getResultTypes()) {
      auto memref = mlir::dyn_cast<mlir::MemRefType>(t);
      if (memref && (!memref.hasStaticShape() || memref.getNumElements() >= kLimit)) fits = false;
    }
    if (auto c = mlir::dyn_cast<mlir::arith::ConstantIndexOp>(op); c && (c.value() >= kLimit || c.value() < -kLimit))
      fits = false;
    if (mlir::isa<mlir::arith::IndexCastOp, mlir::arith::IndexCastUIOp>(op) && op->getResult(0).getType().isIndex()) {
      Value from = op->getOperand(0);
      bool special_register = from.getDefiningOp() && mlir::isa<mlir::LLVM::CallOp>(from.getDefiningOp());
      unsigned bits = from.getType().isIndex() ? 64 : from.getType().getIntOrFloatBitWidth();
      if (!special_register && (bits > 32 || (bits == 32 && mlir::isa<mlir::arith::IndexCastUIOp>(op))))
        fits = false;
    }
  });
  for (auto func : module.getOps<mlir::func::FuncOp>())
    for (mlir::Type t : func.getArgumentTypes()) {
      auto memref = mlir::dyn_cast<mlir::MemRefType>(t);
      if (memref && (!memref.hasStaticShape() || memref.getNumElements() >= kLimit)) fits = false;
    }
  return fits;
}

Status ConvertToLLVMDialect(mlir::ModuleOp module, unsigned index_bits = 64) {
  mlir::MLIRContext* ctx = module.getContext();
  DiagnosticCollector diags(ctx);
  mlir::PassManager pm(ctx);
  pm.addPass(mlir::createSCFToControlFlowPass());
  if (mlir::failed(pm.run(module))) return diags.Fail("scf to cf lowering failed");

  mlir::LowerToLLVMOptions options(ctx);
  options.useBarePtrCallConv = true;
  if (index_bits != 64) options.overrideIndexBitwidth(index_bits);
  mlir::LLVMTypeConverter converter(ctx, options);
  mlir::RewritePatternSet patterns(ctx);
  mlir::arith::populateArithToLLVMConversionPatterns(converter, patterns);
  mlir::populateComplexToLLVMConversionPatterns(converter, patterns);
  mlir::cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
  mlir::populateMathToLLVMConversionPatterns(converter, patterns, /*approximateLog1p=*/false);
  mlir::populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
  mlir::populateFuncToLLVMConversionPatterns(converter, patterns);
  mlir::LLVMConversionTarget target(*ctx);
  target.addLegalOp<mlir::ModuleOp>();
  if (mlir::failed(mlir::applyFullConversion(module, target, std::move(patterns))))
    return diags.Fail("conversion to the LLVM dialect failed");

  mlir::PassManager cleanup(ctx);
  cleanup.addPass(mlir::createReconcileUnrealizedCastsPass());
  if (mlir::failed(cleanup.run(module))) return diags.Fail("reconciling casts failed");
  return Status::Ok();
}

StatusOr<std::unique_ptr<llvm::Module>> TranslateToLLVMIR(mlir::ModuleOp module,
                                                          llvm::LLVMContext& llvm_context) {
  mlir::MLIRContext* ctx = module.getContext();
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  DiagnosticCollector diags(ctx);
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, llvm_context, "kiln_kernels");
  if (!m) return diags.Fail("translation to LLVM IR failed");
  return m;
}

// Complex division, exp and abs become float and math arithmetic, before
// the math ops become calls (libm, libdevice); the rest of the complex
// dialect maps onto LLVM structs in ConvertToLLVMDialect.
Status ExpandComplexOps(mlir::ModuleOp module) {
  DiagnosticCollector diags(module.getContext());
  mlir::PassManager pm(module.getContext());
  pm.addPass(mlir::createConvertComplexToStandardPass());
  if (mlir::failed(pm.run(module))) return diags.Fail("complex to standard lowering failed");
  return Status::Ok();
}

StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> CloneForLowering(const KernelModule& km) {
  mlir::MLIRContext* ctx = km.module.get().getContext();
  ctx->loadDialect<mlir::LLVM::LLVMDialect, mlir::cf::ControlFlowDialect>();
  return mlir::OwningOpRef<mlir::ModuleOp>(km.module.get().clone());
}

}  // namespace

namespace {

// Kernel IR -> LLVM IR for the host, whatever the CPU.
StatusOr<std::unique_ptr<llvm::Module>> LowerToHostLLVMIR(const KernelModule& km,
                                                          const std::vector<KernelInfo>& kernels,
                                                          llvm::LLVMContext& llvm_context) {
  KILN_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, CloneForLowering(km));
  KILN_RETURN_IF_ERROR(PrepareTiledKernelsForHost(*module));
  KILN_RETURN_IF_ERROR(BindSplitDimensionToArguments(*module, kernels));
  KILN_RETURN_IF_ERROR(ExpandComplexOps(*module));
  KILN_RETURN_IF_ERROR(ExpandNarrowFloatConversions(*module, NarrowFloats::kAllNarrow));
  KILN_RETURN_IF_ERROR(ApproximateHostMath(*module));
  bool unused = false;
  KILN_RETURN_IF_ERROR(ReplaceMathWithCalls(*module, Target::kHost, &unused));
  KILN_RETURN_IF_ERROR(ConvertToLLVMDialect(*module));
  return TranslateToLLVMIR(*module, llvm_context);
}

}  // namespace

StatusOr<std::vector<uint8_t>> LowerToHostObject(const KernelModule& km,
                                                 const std::vector<KernelInfo>& kernels, const HostCpu& cpu,
                                                 KernelCompileTimes* times) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<uint8_t>> objects, LowerToHostObjects(km, kernels, {cpu}, times));
  return std::move(objects.front());
}

StatusOr<std::vector<std::vector<uint8_t>>> LowerToHostObjects(const KernelModule& km,
                                                               const std::vector<KernelInfo>& kernels,
                                                               const std::vector<HostCpu>& cpus,
                                                               KernelCompileTimes* times) {
  return LowerToHostObjects(km, kernels, cpus, times, nullptr);
}

StatusOr<std::vector<std::vector<uint8_t>>> LowerToHostObjects(const KernelModule& km,
                                                               const std::vector<KernelInfo>& kernels,
                                                               const std::vector<HostCpu>& cpus,
                                                               KernelCompileTimes* times, CodegenSession* session) {
  std::optional<StageTimer> timer(std::in_place, times ? &times->lower : nullptr);
  llvm::LLVMContext llvm_context;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m, LowerToHostLLVMIR(km, kernels, llvm_context));
  timer.reset();
  KILN_RETURN_IF_ERROR(SimplifyHostModule(*m, kernels, times, session));
  std::vector<std::vector<uint8_t>> objects;
  for (size_t i = 0; i < cpus.size(); ++i) {
    // The last CPU takes the module itself; the others a copy (optimization
    // and code generation change the module they run on).
    std::unique_ptr<llvm::Module> copy;
    if (i + 1 < cpus.size()) {
      StageTimer clone_timer(times ? &times->lower : nullptr);
      copy = llvm::CloneModule(*m);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> object, EmitHostObject(copy ? *copy : *m, cpus[i], times, session));
    objects.push_back(std::move(object));
  }
  return objects;
}

StatusOr<std::string> LowerToPtx(const KernelModule& km, const std::vector<KernelInfo>& kernels,
                                 const std::string& arch, const std::string& symbol_prefix,
                                 KernelCompileTimes* times) {
  std::optional<StageTimer> timer(std::in_place, times ? &times->lower : nullptr);
  KILN_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, CloneForLowering(km));
  KILN_RETURN_IF_ERROR(MapParallelLoopsToThreads(*module, kernels));
  KILN_RETURN_IF_ERROR(ExpandComplexOps(*module));
  KILN_RETURN_IF_ERROR(ExpandNarrowFloatConversions(*module, NarrowFloats::kF8));
  bool uses_libdevice = false;
  KILN_RETURN_IF_ERROR(ReplaceMathWithCalls(*module, Target::kCuda, &uses_libdevice));
  if (uses_libdevice && FindLibdevice().empty())
    return Error("CUDA kernels with transcendental functions need libdevice.10.bc, not found under "
                 "$CUDA_HOME/nvvm/libdevice or /usr/local/cuda/nvvm/libdevice");
  // 32-bit index math trades against the vectorizer: LLVM widens 32-bit
  // element offsets to 64-bit addresses in forms it cannot always match up,
  // so a vectorized loop kernel's element accesses would split into
  // smaller vectors. Such modules keep 64-bit indices.
  bool vectorized = false;
  for (const KernelInfo& info : kernels) vectorized |= !info.cuda_launch && info.cuda_elements_per_thread > 1;
  KILN_RETURN_IF_ERROR(ConvertToLLVMDialect(*module, !vectorized && IndexFitsIn32Bits(*module) ? 32 : 64));
  llvm::LLVMContext llvm_context;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m, TranslateToLLVMIR(*module, llvm_context));
  timer.reset();
  return EmitPtx(*m, kernels, arch, symbol_prefix, times);
}

}  // namespace kiln::codegen::internal
