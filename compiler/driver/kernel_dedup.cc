// DeduplicateKernels (kernel_dedup.h): kernels are grouped by the exact
// bytes of their fingerprint plus their aliasing, never by a hash, so two
// kernels that differ in anything that changes their code never share.
#include "compiler/driver/kernel_dedup.h"

#include "compiler/hlo/structural_fingerprint.h"

namespace kiln::compiler {
namespace {

void AppendInts(const std::vector<int64_t>& v, std::string& out) {
  int64_t n = static_cast<int64_t>(v.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
}

// The key of a kernel: its aliasing, then its computation's fingerprint.
std::string KernelKey(const hlo::HloComputation& computation, const codegen::KernelArgumentAliasing& aliasing) {
  std::string key;
  AppendInts(aliasing.same_buffer, key);
  AppendInts(std::vector<int64_t>(aliasing.disjoint.begin(), aliasing.disjoint.end()), key);
  return key + hlo::StructuralFingerprint(computation);
}

}  // namespace

DistinctKernels DeduplicateKernels(const std::vector<emitter::KernelRequest>& requests,
                                   const std::map<std::string, codegen::KernelArgumentAliasing>& aliasing) {
  DistinctKernels result;
  std::map<std::string, std::string> first_with_key;
  for (const emitter::KernelRequest& r : requests) {
    auto a = aliasing.find(r.name);
    codegen::KernelArgumentAliasing spec_aliasing = a == aliasing.end() ? codegen::KernelArgumentAliasing{} : a->second;
    auto [it, inserted] = first_with_key.emplace(KernelKey(*r.computation, spec_aliasing), r.name);
    result.distinct_name[r.name] = it->second;
    if (inserted) result.specs.push_back({r.name, r.computation, std::move(spec_aliasing)});
  }
  return result;
}

}  // namespace kiln::compiler
