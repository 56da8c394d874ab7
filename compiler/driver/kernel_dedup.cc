// DeduplicateKernels (kernel_dedup.h): kernels are grouped by the exact
// bytes of their fingerprint plus their aliasing, never by a hash, so two
// kernels that differ in anything that changes their code never share.
#include "compiler/driver/kernel_dedup.h"

#include <xxhash.h>

#include <cctype>
#include <cstdio>
#include <set>

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

// `name` without its instruction numbers: "add_1442_gemm_t_fusion" ->
// "add_gemm_t_fusion" (the repeated layers' kernels differ only there).
std::string NameStem(const std::string& name) {
  std::string stem;
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('_', begin);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(begin, end - begin);
    bool number = !part.empty();
    for (char c : part) number = number && std::isdigit(static_cast<unsigned char>(c));
    if (!part.empty() && !number) stem += (stem.empty() ? "" : "_") + part;
    begin = end + 1;
  }
  return stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0])) ? "kernel" + stem : stem;
}

// A distinct kernel's symbol: its first user's name stem and a hash of its
// key. It depends on what the kernel computes, not on which layer uses it
// first, so the kernel keeps its name, and its compile cache entry (the name
// is part of the code), when another layer of the model changes. Names that
// collide (another kernel with the same stem and hash) get a suffix, in
// request order.
std::string DistinctKernelName(const std::string& first_user, const std::string& key,
                               std::set<std::string>& taken) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  const std::string base = NameStem(first_user) + "_" + std::string(hash, 12);
  std::string name = base;
  for (int n = 2; !taken.insert(name).second; ++n) name = base + "_" + std::to_string(n);
  return name;
}

}  // namespace

DistinctKernels DeduplicateKernels(const std::vector<emitter::KernelRequest>& requests,
                                   const std::map<std::string, codegen::KernelArgumentAliasing>& aliasing) {
  DistinctKernels result;
  std::map<std::string, std::string> name_of_key;
  std::set<std::string> taken;
  for (const emitter::KernelRequest& r : requests) {
    auto a = aliasing.find(r.name);
    codegen::KernelArgumentAliasing spec_aliasing = a == aliasing.end() ? codegen::KernelArgumentAliasing{} : a->second;
    std::string key = KernelKey(*r.computation, spec_aliasing);
    auto it = name_of_key.find(key);
    if (it == name_of_key.end()) {
      std::string name = DistinctKernelName(r.name, key, taken);
      it = name_of_key.emplace(std::move(key), name).first;
      result.specs.push_back({name, r.computation, std::move(spec_aliasing)});
    }
    result.distinct_name[r.name] = it->second;
  }
  return result;
}

}  // namespace kiln::compiler
