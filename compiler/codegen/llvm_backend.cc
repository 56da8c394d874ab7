// LLVM-IR stage: target machines, the host entry wrappers, libdevice
// linking, optimization and object/PTX emission. See llvm_backend.h.
#include "compiler/codegen/llvm_backend.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <cstdlib>
#include <mutex>

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Utils/LowerSwitch.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace kiln::codegen::internal {
namespace {

// Host objects target an x86-64 level (HostCpu), not the compiling
// machine: the artifact may run on another machine, which picks the best
// level it supports. The baseline is x86-64-v2 rather than the original
// x86-64 for SSE4.1's vector rounding, which the vectorized exp and
// floor/ceil kernels need (without it each element calls the C library).
constexpr char kHostTriple[] = "x86_64-unknown-linux-gnu";
constexpr char kCudaTriple[] = "nvptx64-nvidia-cuda";

void InitializeTargets() {
  // LLVM's target registry is process-global; register each target once.
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const std::string& triple_name, const std::string& cpu, const std::string& features,
    std::optional<llvm::Reloc::Model> reloc, llvm::CodeGenOptLevel level) {
  InitializeTargets();
  llvm::Triple triple(triple_name);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return Error("LLVM has no target for " + triple_name + ": " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, cpu, features, options, reloc, std::nullopt, level));
  if (!tm) return Error("cannot create an LLVM target machine for " + triple_name + " " + cpu);
  return tm;
}

Status Verify(llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (llvm::verifyModule(module, &os)) return Error("internal error: invalid LLVM IR: " + text);
  return Status::Ok();
}

// Runs the module pipeline `build` makes, with `tm`'s target information
// (and `library`'s, where given: the vector math the host links).
template <typename BuildPipeline>
void RunPipeline(llvm::Module& module, llvm::TargetMachine* tm, BuildPipeline build,
                 const llvm::TargetLibraryInfoImpl* library = nullptr) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  // Registered first, so that PassBuilder's default stays unused.
  if (library) fam.registerPass([library] { return llvm::TargetLibraryAnalysis(*library); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = build(pb);
  mpm.run(module, mam);
}

void Optimize(llvm::Module& module, llvm::TargetMachine* tm, llvm::OptimizationLevel level) {
  RunPipeline(module, tm, [level](llvm::PassBuilder& pb) { return pb.buildPerModuleDefaultPipeline(level); });
}

// Switches become compare-and-branch chains: NVPTX would lower a dense one
// to a jump table (brx.idx over .branchtargets), an indirect branch that
// kiln's CUDA emulator does not execute, and that gains nothing over a
// short chain in kernels whose switches come from concatenate and
// conditional selects.
void LowerSwitches(llvm::Module& module) {
  llvm::FunctionAnalysisManager fam;
  llvm::PassBuilder pb;
  pb.registerFunctionAnalyses(fam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::LowerSwitchPass());
  for (llvm::Function& f : module)
    if (!f.isDeclaration()) fpm.run(f, fam);
}

// Lets the host's machine-code pipeline skip loop strength reduction.
// LSR rewrites a loop's address arithmetic into pointer increments; on
// x86-64, whose addressing modes take base + index * scale + offset, the
// kernels run as fast without it (docs/host_kernels.md, "Where compile
// time goes": every level, no change beyond noise), and it took 18% of
// host machine-code time. The gate is set on the kernel's own LLVM
// context for the host object's emission alone, so CUDA keeps LSR.
class SkipLoopStrengthReduction final : public llvm::OptPassGate {
 public:
  bool isEnabled() const override { return true; }
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) const override {
    return pass != "Loop Strength Reduction";
  }
};

StatusOr<std::string> EmitFile(llvm::Module& module, llvm::TargetMachine& tm,
                               llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return Error("internal error: LLVM cannot emit this file type for " +
                 tm.getTargetTriple().str());
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

void PrepareModule(llvm::Module& module, llvm::TargetMachine& tm) {
  module.setTargetTriple(tm.getTargetTriple());
  module.setDataLayout(tm.createDataLayout());
}

// `void name(void** args, int64_t begin, int64_t end)` calling
// `name.impl(args[0], ..., args[n-1], begin, end)`.
Status AddHostEntry(llvm::Module& module, const KernelInfo& kernel) {
  llvm::Function* impl = module.getFunction(kernel.name);
  if (!impl || impl->isDeclaration())
    return Error("internal error: kernel " + kernel.name + " missing from LLVM IR");
  if (static_cast<int>(impl->arg_size()) != kernel.num_args + 2)
    return Error("internal error: kernel " + kernel.name + " has " +
                 std::to_string(impl->arg_size()) + " LLVM arguments");
  impl->setName(kernel.name + ".impl");
  impl->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::LLVMContext& ctx = module.getContext();
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64}, false);
  llvm::Function* entry =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kernel.name, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value*> args;
  for (int i = 0; i < kernel.num_args; ++i) {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
    args.push_back(b.CreateLoad(ptr, slot));
  }
  args.push_back(entry->getArg(1));
  args.push_back(entry->getArg(2));
  b.CreateCall(impl, args);
  b.CreateRetVoid();
  return Status::Ok();
}

bool CallsLibdevice(const llvm::Module& module) {
  for (const llvm::Function& f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

Status LinkLibdevice(llvm::Module& module) {
  std::string path = FindLibdevice();
  if (path.empty()) return Error("libdevice.10.bc not found");
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, module.getContext());
  if (!lib) return Error("cannot read " + path + ": " + diag.getMessage().str());
  // libdevice is written for "nvptx64-nvidia-gpulibs"; adopt ours to avoid
  // mismatch warnings.
  lib->setTargetTriple(module.getTargetTriple());
  lib->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
    return Error("linking libdevice failed");
  return Status::Ok();
}

// After internalization, every definition but the kernels is local to the
// module: prefixing their names keeps them apart from those of other
// kernels' modules once the PTX modules are joined.
void PrefixLocalSymbols(llvm::Module& module, const std::string& prefix) {
  for (llvm::GlobalValue& gv : module.global_values())
    if (gv.hasLocalLinkage() && !gv.isDeclaration()) gv.setName(prefix + gv.getName().str());
}

bool FileExists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

}  // namespace

std::string FindLibdevice() {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string root : {home ? std::string(home) : std::string(), std::string("/usr/local/cuda")}) {
    if (root.empty()) continue;
    std::string path = root + "/nvvm/libdevice/libdevice.10.bc";
    if (FileExists(path)) return path;
  }
  return "";
}

StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateHostTargetMachine(const HostCpu& cpu) {
  return CreateTargetMachine(kHostTriple, cpu.llvm_cpu, cpu.llvm_features, llvm::Reloc::PIC_,
                             llvm::CodeGenOptLevel::Default);
}

namespace {

// `session`'s target machine for `cpu`, or a new one kept in `owned`.
StatusOr<llvm::TargetMachine*> HostTargetMachine(const HostCpu& cpu, CodegenSession* session,
                                                 std::unique_ptr<llvm::TargetMachine>& owned,
                                                 KernelCompileTimes* times) {
  StageTimer timer(times ? &times->setup : nullptr);
  if (session) return session->HostTargetMachine(cpu);
  KILN_ASSIGN_OR_RETURN(owned, CreateHostTargetMachine(cpu));
  return owned.get();
}

}  // namespace

Status SimplifyHostModule(llvm::Module& module, const std::vector<KernelInfo>& kernels, KernelCompileTimes* times,
                          CodegenSession* session) {
  std::unique_ptr<llvm::TargetMachine> owned;
  KILN_ASSIGN_OR_RETURN(llvm::TargetMachine* tm, HostTargetMachine(BaselineHostCpu(), session, owned, times));
  StageTimer timer(times ? &times->optimize : nullptr);
  PrepareModule(module, *tm);  // every x86-64 level has the same data layout
  for (const KernelInfo& kernel : kernels) KILN_RETURN_IF_ERROR(AddHostEntry(module, kernel));
  KILN_RETURN_IF_ERROR(Verify(module));
  RunPipeline(module, tm, [](llvm::PassBuilder& pb) {
    return pb.buildModuleSimplificationPipeline(llvm::OptimizationLevel::O2, llvm::ThinOrFullLTOPhase::None);
  });
  return Status::Ok();
}

namespace {

// The f32 functions host kernels still call (mlir_lowering.cc's kMathCalls
// that are not approximated in the IR) and their vector variants in glibc's
// libmvec, in the x86-64 vector function ABI: 4 lanes in SSE registers
// ('b'), 8 in AVX2's ('d'), 16 in AVX-512's ('e'). With them the loop and
// SLP vectorizers turn a loop of sinf calls into one of _ZGVdN8v_sinf calls.
struct VectorMath {
  const char* scalar;
  const char* lanes4;
  const char* lanes8;
  const char* lanes16;
  bool binary;
};
constexpr VectorMath kLibmvec[] = {
    {"sinf", "_ZGVbN4v_sinf", "_ZGVdN8v_sinf", "_ZGVeN16v_sinf", false},
    {"cosf", "_ZGVbN4v_cosf", "_ZGVdN8v_cosf", "_ZGVeN16v_cosf", false},
    {"tanf", "_ZGVbN4v_tanf", "_ZGVdN8v_tanf", "_ZGVeN16v_tanf", false},
    {"expm1f", "_ZGVbN4v_expm1f", "_ZGVdN8v_expm1f", "_ZGVeN16v_expm1f", false},
    {"log1pf", "_ZGVbN4v_log1pf", "_ZGVdN8v_log1pf", "_ZGVeN16v_log1pf", false},
    {"cbrtf", "_ZGVbN4v_cbrtf", "_ZGVdN8v_cbrtf", "_ZGVeN16v_cbrtf", false},
    {"powf", "_ZGVbN4vv_powf", "_ZGVdN8vv_powf", "_ZGVeN16vv_powf", true},
    {"atan2f", "_ZGVbN4vv_atan2f", "_ZGVdN8vv_atan2f", "_ZGVeN16vv_atan2f", true},
};

// The libmvec variants `tm`'s level can call: a variant's vector registers
// must exist on every CPU of the level.
std::unique_ptr<llvm::TargetLibraryInfoImpl> HostLibraryInfo(const llvm::TargetMachine& tm) {
  auto info = std::make_unique<llvm::TargetLibraryInfoImpl>(tm.getTargetTriple());
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  const bool avx2 = sti->checkFeatures("+avx2");
  const bool avx512 = sti->checkFeatures("+avx512f");
  std::vector<llvm::VecDesc> variants;
  for (const VectorMath& f : kLibmvec) {
    auto add = [&](const char* name, unsigned lanes, const char* prefix) {
      variants.emplace_back(f.scalar, name, llvm::ElementCount::getFixed(lanes), /*Masked=*/false, prefix,
                            std::nullopt);
    };
    add(f.lanes4, 4, f.binary ? "_ZGV_LLVM_N4vv" : "_ZGV_LLVM_N4v");
    if (avx2) add(f.lanes8, 8, f.binary ? "_ZGV_LLVM_N8vv" : "_ZGV_LLVM_N8v");
    if (avx512) add(f.lanes16, 16, f.binary ? "_ZGV_LLVM_N16vv" : "_ZGV_LLVM_N16v");
  }
  info->addVectorizableFunctions(variants);
  return info;
}

// The math functions the kernels call neither read nor write memory as far
// as the kernels are concerned (their errno is never read), which is what
// lets the loop vectorizer replace the calls by vector ones.
void MarkMathFunctionsPure(llvm::Module& module) {
  for (const VectorMath& f : kLibmvec) {
    llvm::Function* fn = module.getFunction(f.scalar);
    if (!fn || !fn->isDeclaration()) continue;
    fn->setDoesNotAccessMemory();
    fn->setDoesNotThrow();
    fn->setWillReturn();
  }
}

}  // namespace

StatusOr<std::vector<uint8_t>> EmitHostObject(llvm::Module& module, const HostCpu& cpu, KernelCompileTimes* times,
                                              CodegenSession* session) {
  std::unique_ptr<llvm::TargetMachine> owned;
  KILN_ASSIGN_OR_RETURN(llvm::TargetMachine* tm, HostTargetMachine(cpu, session, owned, times));
  {
    StageTimer timer(times ? &times->optimize : nullptr);
    // The target machine's CPU and features apply to functions without
    // their own attributes; "native" also tunes for the machine's model.
    if (!cpu.tune_cpu.empty())
      for (llvm::Function& f : module)
        if (!f.isDeclaration()) f.addFnAttr("tune-cpu", cpu.tune_cpu);
    MarkMathFunctionsPure(module);
    std::unique_ptr<llvm::TargetLibraryInfoImpl> library = HostLibraryInfo(*tm);
    RunPipeline(
        module, tm,
        [](llvm::PassBuilder& pb) {
          return pb.buildModuleOptimizationPipeline(llvm::OptimizationLevel::O2, llvm::ThinOrFullLTOPhase::None);
        },
        library.get());
  }
  StageTimer timer(times ? &times->machine_code : nullptr);
  SkipLoopStrengthReduction gate;
  llvm::LLVMContext& context = module.getContext();
  llvm::OptPassGate& previous = context.getOptPassGate();
  context.setOptPassGate(gate);
  StatusOr<std::string> object = EmitFile(module, *tm, llvm::CodeGenFileType::ObjectFile);
  context.setOptPassGate(previous);
  if (!object.ok()) return object.status();
  return std::vector<uint8_t>(object->begin(), object->end());
}

StatusOr<std::string> EmitPtx(llvm::Module& module, const std::vector<KernelInfo>& kernels,
                              const std::string& arch, const std::string& symbol_prefix,
                              KernelCompileTimes* times) {
  std::unique_ptr<llvm::TargetMachine> tm;
  {
    StageTimer timer(times ? &times->setup : nullptr);
    KILN_ASSIGN_OR_RETURN(tm, CreateTargetMachine(kCudaTriple, arch, "", std::nullopt,
                                                  llvm::CodeGenOptLevel::Aggressive));
  }
  std::optional<StageTimer> optimize_timer(std::in_place, times ? &times->optimize : nullptr);
  PrepareModule(module, *tm);
  std::vector<std::string> names;
  for (const KernelInfo& kernel : kernels) {
    llvm::Function* f = module.getFunction(kernel.name);
    if (!f || f->isDeclaration())
      return Error("internal error: kernel " + kernel.name + " missing from LLVM IR");
    f->setCallingConv(llvm::CallingConv::PTX_Kernel);
    f->addFnAttr("nvvm.maxntid", std::to_string(CudaBlockThreads(kernel)));
    // Every buffer the runtime passes starts on a kBufferAlignment (64)
    // boundary of a 256-byte aligned allocation: promising 16 lets the
    // load/store vectorizer emit 128-bit accesses.
    for (llvm::Argument& arg : f->args())
      if (arg.getType()->isPointerTy()) arg.addAttr(llvm::Attribute::getWithAlignment(module.getContext(), llvm::Align(16)));
    names.push_back(kernel.name);
  }
  if (CallsLibdevice(module)) KILN_RETURN_IF_ERROR(LinkLibdevice(module));
  // Only the kernels are entry points; everything else may be inlined away.
  llvm::internalizeModule(module, [&](const llvm::GlobalValue& gv) {
    return std::find(names.begin(), names.end(), gv.getName().str()) != names.end();
  });
  PrefixLocalSymbols(module, symbol_prefix);
  KILN_RETURN_IF_ERROR(Verify(module));
  Optimize(module, tm.get(), llvm::OptimizationLevel::O3);
  LowerSwitches(module);
  optimize_timer.reset();
  StageTimer timer(times ? &times->machine_code : nullptr);
  return EmitFile(module, *tm, llvm::CodeGenFileType::AssemblyFile);
}

}  // namespace kiln::codegen::internal
