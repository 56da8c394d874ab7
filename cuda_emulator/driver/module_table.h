// The loaded modules of the emulated device and their functions.
//
// A CUmodule is the address of a LoadedModule and a CUfunction the address
// of one of its LoadedFunctions; both are looked up here before use, so a
// stale or foreign handle is an error rather than a crash. A launch holds
// the module's shared_ptr, so cuModuleUnload on another thread cannot free
// the code it runs.
#pragma once

#include <cuda.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu::driver {

struct LoadedFunction {
  const ptx::Kernel* kernel = nullptr;
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
  std::atomic<uint32_t> max_dynamic_shared_bytes{0};
};

struct LoadedModule {
  std::unique_ptr<ptx::Module> module;
  std::vector<uint64_t> globals;  // device addresses of the module variables
  std::map<std::string, std::unique_ptr<LoadedFunction>, std::less<>> functions;
};

class ModuleTable {
 public:
  CUmodule Add(std::shared_ptr<LoadedModule> module);
  // Removes and returns the module, or nullptr when `handle` is not live.
  std::shared_ptr<LoadedModule> Remove(CUmodule handle);
  std::shared_ptr<LoadedModule> Find(CUmodule handle);
  // The module owning `handle`, which it sets `*function` to; nullptr when
  // `handle` is not a live function.
  std::shared_ptr<LoadedModule> FindFunction(CUfunction handle, LoadedFunction** function);
  // Forgets every module (context destruction; their memory goes with the
  // device memory).
  void Clear();
  uint64_t size();  // live modules

 private:
  std::mutex mu_;
  std::map<CUmodule, std::shared_ptr<LoadedModule>> modules_;
  std::map<CUfunction, LoadedModule*> functions_;
};

}  // namespace kiln::emu::driver
