// Driver API: loading PTX modules, their functions and function attributes.
//
// The emulator "JIT-compiles" by parsing and decoding the PTX once
// (ptx::LoadModule); errors come back as CUDA_ERROR_INVALID_PTX with the
// one-line parser message in the JIT error log and the error detail, as
// ptxas' message would be. Binary images (cubin, fatbin) are refused: the
// emulator cannot execute SASS, and saying so beats a confusing failure.
#include <algorithm>
#include <cstring>
#include <string>

#include "cuda_emulator/driver/device_properties.h"
#include "cuda_emulator/exec/launch.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"

namespace {

using kiln::StatusOr;
using kiln::emu::MemoryKind;
using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::Fail;
using kiln::emu::driver::LoadedFunction;
using kiln::emu::driver::LoadedModule;
namespace ptx = kiln::emu::ptx;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

constexpr uint32_t kMaxGlobalAlignment = 256;  // DeviceMemory's alignment

// The JIT options the emulator answers: the two logs and the wall time.
struct JitOptions {
  char* error_log = nullptr;
  size_t error_log_size = 0;
  void** error_log_size_slot = nullptr;
  char* info_log = nullptr;
  size_t info_log_size = 0;
  void** info_log_size_slot = nullptr;
  void** wall_time_slot = nullptr;
};

size_t SizeOption(void* value) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(value)); }

// Reads the options; those that only steer code generation (optimization
// level, register limits, debug info, ...) cannot change what the emulator
// computes and are accepted as given.
CUresult ParseJitOptions(unsigned n, CUjit_option* options, void** values, JitOptions* out) {
  if (n > 0 && (!options || !values)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadDataEx: options or values are null");
  }
  for (unsigned i = 0; i < n; ++i) {
    switch (options[i]) {
      case CU_JIT_ERROR_LOG_BUFFER: out->error_log = static_cast<char*>(values[i]); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        out->error_log_size = SizeOption(values[i]);
        out->error_log_size_slot = &values[i];
        break;
      case CU_JIT_INFO_LOG_BUFFER: out->info_log = static_cast<char*>(values[i]); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        out->info_log_size = SizeOption(values[i]);
        out->info_log_size_slot = &values[i];
        break;
      case CU_JIT_WALL_TIME: out->wall_time_slot = &values[i]; break;
      default:
        if (options[i] < 0 || options[i] >= CU_JIT_NUM_OPTIONS) {
          return Fail(CUDA_ERROR_INVALID_VALUE,
                      "cuModuleLoadDataEx: unknown JIT option " + std::to_string(options[i]));
        }
        break;
    }
  }
  return CUDA_SUCCESS;
}

// Copies `text` into a log buffer of `size` bytes (NUL included) and writes
// the bytes used, terminator included, back into the size option.
void WriteLog(char* log, size_t size, void** size_slot, const std::string& text) {
  if (!log || size == 0) return;
  size_t n = std::min(text.size(), size - 1);
  std::memcpy(log, text.data(), n);
  log[n] = '\0';
  if (size_slot) *size_slot = reinterpret_cast<void*>(static_cast<uintptr_t>(n + 1));
}

void FinishJit(const JitOptions& jit, const std::string& error) {
  WriteLog(jit.error_log, jit.error_log_size, jit.error_log_size_slot, error);
  WriteLog(jit.info_log, jit.info_log_size, jit.info_log_size_slot, "");
  if (jit.wall_time_slot) {
    float ms = 0;
    std::memcpy(jit.wall_time_slot, &ms, sizeof(ms));  // the option's float lives in the slot
  }
}

// Compares byte by byte: the image may be a NUL-terminated PTX string
// shorter than a magic number, and every magic byte is nonzero, so the
// comparison stops at the terminator at the latest.
bool StartsWith(const unsigned char* image, const unsigned char (&magic)[4]) {
  for (unsigned char m : magic) {
    if (*image++ != m) return false;
  }
  return true;
}

bool IsBinaryImage(const void* image) {
  static constexpr unsigned char kElf[4] = {0x7f, 'E', 'L', 'F'};                 // cubin
  static constexpr unsigned char kFatbin[4] = {0x50, 0xED, 0x55, 0xBA};           // fatbin
  static constexpr unsigned char kFatbinWrapper[4] = {0xB1, 0x43, 0x62, 0x46};    // its wrapper
  const auto* b = static_cast<const unsigned char*>(image);
  return StartsWith(b, kElf) || StartsWith(b, kFatbin) || StartsWith(b, kFatbinWrapper);
}

void FreeGlobals(const LoadedModule& m) {
  // The addresses came from this module's placer; freeing cannot fail.
  for (uint64_t address : m.globals) (void)Device().memory().Free(address, MemoryKind::kDevice);
}

// Places a module variable: device memory holding its initializer.
StatusOr<uint64_t> PlaceGlobal(LoadedModule& m, const ptx::GlobalVariable& g) {
  if (g.align > kMaxGlobalAlignment) {
    return kiln::Error("module variable '" + g.name + "' asks for " + std::to_string(g.align) +
                       "-byte alignment; the emulator aligns to " + std::to_string(kMaxGlobalAlignment));
  }
  kiln::emu::DeviceMemory& memory = Device().memory();
  uint64_t size = std::max<uint64_t>(1, g.initializer.size());
  KILN_ASSIGN_OR_RETURN(uint64_t address, memory.Allocate(size, MemoryKind::kDevice));
  m.globals.push_back(address);
  KILN_RETURN_IF_ERROR(memory.CopyToDevice(address, g.initializer.data(), g.initializer.size()));
  return address;
}

// What ptxas checks beyond parsing that the decoder does not.
kiln::Status CheckKernelLimits(const ptx::Module& m) {
  for (const auto& k : m.kernels) {
    if (k->static_shared_bytes > kiln::emu::driver::kDefaultSharedPerBlock) {
      return kiln::Error("entry function '" + k->name + "' uses too much shared data (" +
                         std::to_string(k->static_shared_bytes) + " bytes, " +
                         std::to_string(kiln::emu::driver::kDefaultSharedPerBlock) + " max)");
    }
  }
  return kiln::Status::Ok();
}

CUresult LoadPtx(CUmodule* out, const char* text, const JitOptions& jit) {
  auto loaded = std::make_shared<LoadedModule>();
  auto placer = [&](const ptx::GlobalVariable& g) { return PlaceGlobal(*loaded, g); };
  StatusOr<std::unique_ptr<ptx::Module>> m = ptx::LoadModule(text, placer);
  kiln::Status s = m.ok() ? CheckKernelLimits(**m) : m.status();
  if (!s.ok()) {
    FreeGlobals(*loaded);
    FinishJit(jit, s.message());
    return Fail(CUDA_ERROR_INVALID_PTX, s.message());
  }
  loaded->module = std::move(*m);
  for (const auto& k : loaded->module->kernels) {
    auto f = std::make_unique<LoadedFunction>();
    f->kernel = k.get();
    f->max_dynamic_shared_bytes = kiln::emu::driver::kDefaultSharedPerBlock - k->static_shared_bytes;
    loaded->functions[k->name] = std::move(f);
  }
  FinishJit(jit, "");
  *out = Device().modules().Add(std::move(loaded));
  return CUDA_SUCCESS;
}

std::string KernelNames(const LoadedModule& m) {
  std::string names;
  for (const auto& [name, f] : m.functions) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                            CUjit_option* options, void** optionValues) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!module || !image) return Fail(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadDataEx: null pointer");
  JitOptions jit;
  if (CUresult r = ParseJitOptions(numOptions, options, optionValues, &jit); r != CUDA_SUCCESS) {
    return r;
  }
  if (IsBinaryImage(image)) {
    const std::string message = "kiln emulator executes PTX only; load the PTX";
    FinishJit(jit, message);
    return Fail(CUDA_ERROR_NO_BINARY_FOR_GPU, message);
  }
  return LoadPtx(module, static_cast<const char*>(image), jit);
}

KILN_EMU_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return cuModuleLoadDataEx(module, image, 0, nullptr, nullptr);
}

KILN_EMU_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  std::shared_ptr<LoadedModule> m = Device().modules().Remove(hmod);
  if (!m) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload: not a loaded module");
  FreeGlobals(*m);  // waits for launches still reading them (ReadLock)
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!hfunc || !name) return Fail(CUDA_ERROR_INVALID_VALUE, "cuModuleGetFunction: null pointer");
  std::shared_ptr<LoadedModule> m = Device().modules().Find(hmod);
  if (!m) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction: not a loaded module");
  auto it = m->functions.find(std::string_view(name));
  if (it == m->functions.end()) {
    return Fail(CUDA_ERROR_NOT_FOUND, std::string("cuModuleGetFunction: the module has no kernel '") +
                                          name + "' (kernels: " + KernelNames(*m) + ")");
  }
  *hfunc = reinterpret_cast<CUfunction>(it->second.get());
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!pi) return Fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute: null pointer");
  LoadedFunction* f = nullptr;
  std::shared_ptr<LoadedModule> m = Device().modules().FindFunction(hfunc, &f);
  if (!m) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetAttribute: not a loaded function");
  const ptx::Kernel& k = *f->kernel;
  uint32_t required = k.required_block[0] * std::max(1u, k.required_block[1]) *
                      std::max(1u, k.required_block[2]);
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *pi = static_cast<int>(k.max_threads ? k.max_threads
                                           : required ? required : kiln::emu::driver::kMaxThreadsPerBlock);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = static_cast<int>(k.static_shared_bytes); return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = static_cast<int>(k.local_bytes); return CUDA_SUCCESS;
    // PTX registers are virtual: what ptxas would allocate (RegistersPerThread).
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = static_cast<int>(kiln::emu::RegistersPerThread(k)); return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = m->module->ptx_version; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *pi = static_cast<int>(f->max_dynamic_shared_bytes.load());
      return CUDA_SUCCESS;
    default:
      return Fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute: attribute " +
                                                std::to_string(static_cast<int>(attrib)) +
                                                " is not supported by the emulator");
  }
}

KILN_EMU_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  LoadedFunction* f = nullptr;
  std::shared_ptr<LoadedModule> m = Device().modules().FindFunction(hfunc, &f);
  if (!m) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncSetAttribute: not a loaded function");
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    // Launch places dynamic shared memory after the static part, 16-aligned.
    int64_t static_aligned = (int64_t{f->kernel->static_shared_bytes} + 15) / 16 * 16;
    int64_t limit = int64_t{kiln::emu::driver::kMaxSharedPerBlockOptin} - static_aligned;
    if (value < 0 || value > limit) {
      return Fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute: " + std::to_string(value) +
                                                " bytes of dynamic shared memory (at most " +
                                                std::to_string(limit) + " for this kernel)");
    }
    f->max_dynamic_shared_bytes = static_cast<uint32_t>(value);
    return CUDA_SUCCESS;
  }
  if (attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) {
    if (value < -1 || value > 100) {
      return Fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute: carveout must be -1 or 0..100");
    }
    return CUDA_SUCCESS;  // a cache/shared split hint: no effect on results
  }
  return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuFuncSetAttribute: attribute " +
                                            std::to_string(static_cast<int>(attrib)) +
                                            " is not supported by the emulator");
}

}  // extern "C"
