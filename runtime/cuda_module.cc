// CUDA kernel code selection and loading; see cuda_module.h.
#include "runtime/cuda_module.h"

#include <algorithm>
#include <vector>

#include "runtime/cuda_backend.h"
#include "thunks/program.h"

namespace kiln::runtime {

namespace th = ::kiln::thunks;

StatusOr<const bef::KernelImage*> FindCudaImage(const bef::Artifact& artifact) {
  std::string kinds;
  for (const bef::KernelImage& image : artifact.kernel_images) {
    if (image.kind == bef::TargetKind::kCuda) return &image;
    std::string kind(bef::TargetKindName(image.kind));
    if (kinds.find(kind) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + kind;
  }
  return Error("the artifact has no CUDA kernel image (compiled for: " +
               (kinds.empty() ? std::string("no target") : kinds) + ")");
}

StatusOr<CudaCode> SelectCudaCode(const bef::KernelImage& image, int sm_arch) {
  CudaCode code;
  for (const bef::CubinImage& c : image.cubins) {
    if (c.sm_arch == sm_arch && !c.data.empty()) {
      code.cubin = &c;
      code.description = SmName(sm_arch) + " cubin";
      return code;
    }
  }
  if (!image.ptx.empty()) {
    code.ptx = &image.ptx;
    code.description = "PTX (JIT for " + SmName(sm_arch) + ")";
    return code;
  }
  std::string have;
  for (const bef::CubinImage& c : image.cubins)
    have += (have.empty() ? "" : ", ") + SmName(c.sm_arch);
  return Error("the CUDA kernel image has no cubin for " + SmName(sm_arch) + " (has: " +
               (have.empty() ? std::string("none") : have) + ") and no PTX to JIT-compile");
}

std::set<std::string> LaunchedKernels(const th::ThunkProgram& program) {
  std::set<std::string> names;
  th::ForEachThunk(program.root, [&](const th::Thunk& t, int) {
    if (const auto* k = t.As<th::KernelThunk>()) names.insert(k->kernel_name);
  });
  return names;
}

namespace {

// The JIT log on one line, trimmed.
std::string OneLine(const char* log) {
  std::string s(log);
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

StatusOr<std::unique_ptr<CudaModule>> CudaModule::Load(const CudaDriver& driver,
                                                       const CudaCode& code,
                                                       const std::set<std::string>& kernels) {
  std::vector<char> log(16 * 1024, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size() - 1))};
  // A cubin is loaded as bytes; PTX must be NUL-terminated (std::string is).
  const void* image = code.cubin ? static_cast<const void*>(code.cubin->data.data())
                                 : static_cast<const void*>(code.ptx->c_str());
  CUmodule module = nullptr;
  CUresult r = driver.cuModuleLoadDataEx(&module, image, 2, options, values);
  if (r != CUDA_SUCCESS) {
    std::string message =
        "loading the CUDA kernels (" + code.description + ") failed: " + driver.ErrorText(r);
    std::string jit_log = OneLine(log.data());
    // The emulator's error detail may already be the log's text.
    if (!jit_log.empty() && message.find(jit_log) == std::string::npos) message += ": " + jit_log;
    return Error(message);
  }
  std::unique_ptr<CudaModule> m(new CudaModule(driver, module));
  for (const std::string& name : kernels) {
    CUfunction f = nullptr;
    CUresult fr = driver.cuModuleGetFunction(&f, module, name.c_str());
    if (fr != CUDA_SUCCESS) {
      return Error("kernel '" + name + "' is not defined by the CUDA kernels (" + code.description +
                   "): " + driver.ErrorText(fr));
    }
    m->functions_[name] = f;
  }
  return m;
}

CudaModule::~CudaModule() { driver_.cuModuleUnload(module_); }

CUfunction CudaModule::Find(const std::string& name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

}  // namespace kiln::runtime
