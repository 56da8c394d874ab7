#include "compiler/driver/kernel_aliasing.h"

#include <cstdint>
#include <vector>

namespace kiln::compiler {
namespace {

namespace th = ::kiln::thunks;

codegen::KernelArgumentAliasing AliasingOf(const std::vector<th::KernelArgument>& args) {
  size_t n = args.size();
  codegen::KernelArgumentAliasing a;
  a.same_buffer.assign(n, -1);
  a.disjoint.assign(n, true);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j || !args[i].slice.Overlaps(args[j].slice)) continue;
      if (args[i].slice == args[j].slice) {
        if (j < i && a.same_buffer[i] < 0) a.same_buffer[i] = static_cast<int64_t>(j);
        continue;
      }
      if (args[i].written || args[j].written) a.disjoint[i] = false;
    }
  }
  return a;
}

// What holds for both launches of one kernel.
void Intersect(codegen::KernelArgumentAliasing& into, const codegen::KernelArgumentAliasing& other) {
  if (into.same_buffer.size() != other.same_buffer.size()) {
    into = {};  // cannot happen for one kernel; assume nothing
    return;
  }
  for (size_t i = 0; i < into.same_buffer.size(); ++i) {
    if (into.same_buffer[i] != other.same_buffer[i]) {
      // Exact sharing in one launch only: the pair may still overlap.
      if (into.same_buffer[i] >= 0) into.disjoint[i] = into.disjoint[into.same_buffer[i]] = false;
      if (other.same_buffer[i] >= 0) into.disjoint[i] = into.disjoint[other.same_buffer[i]] = false;
      into.same_buffer[i] = -1;
    }
    into.disjoint[i] = into.disjoint[i] && other.disjoint[i];
  }
}

}  // namespace

std::map<std::string, codegen::KernelArgumentAliasing> KernelAliasing(const th::ThunkProgram& program) {
  std::map<std::string, codegen::KernelArgumentAliasing> result;
  th::ForEachThunk(program.root, [&](const th::Thunk& t, int) {
    const th::KernelThunk* k = t.As<th::KernelThunk>();
    if (!k) return;
    codegen::KernelArgumentAliasing a = AliasingOf(k->args);
    auto [it, inserted] = result.emplace(k->kernel_name, a);
    if (!inserted) Intersect(it->second, a);
  });
  return result;
}

}  // namespace kiln::compiler
