// ModuleTable; see module_table.h.
#include "cuda_emulator/driver/module_table.h"

namespace kiln::emu::driver {

namespace {
CUfunction Handle(LoadedFunction* f) { return reinterpret_cast<CUfunction>(f); }
}  // namespace

CUmodule ModuleTable::Add(std::shared_ptr<LoadedModule> module) {
  CUmodule handle = reinterpret_cast<CUmodule>(module.get());
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, f] : module->functions) functions_[Handle(f.get())] = module.get();
  modules_[handle] = std::move(module);
  return handle;
}

std::shared_ptr<LoadedModule> ModuleTable::Remove(CUmodule handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = modules_.find(handle);
  if (it == modules_.end()) return nullptr;
  std::shared_ptr<LoadedModule> module = std::move(it->second);
  modules_.erase(it);
  for (auto& [name, f] : module->functions) functions_.erase(Handle(f.get()));
  return module;
}

std::shared_ptr<LoadedModule> ModuleTable::Find(CUmodule handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = modules_.find(handle);
  return it == modules_.end() ? nullptr : it->second;
}

std::shared_ptr<LoadedModule> ModuleTable::FindFunction(CUfunction handle,
                                                        LoadedFunction** function) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = functions_.find(handle);
  if (it == functions_.end()) return nullptr;
  *function = reinterpret_cast<LoadedFunction*>(handle);
  return modules_.at(reinterpret_cast<CUmodule>(it->second));
}

uint64_t ModuleTable::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return modules_.size();
}

void ModuleTable::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  functions_.clear();
  modules_.clear();
}

}  // namespace kiln::emu::driver
