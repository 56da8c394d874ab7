// PreparedKernels (prepared_kernels.h).
#include "runtime/prepared_kernels.h"

#include <algorithm>

#include "runtime/executor.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

Status PrepareSequence(const th::SequenceThunk& seq, const std::unordered_map<std::string, HostKernel>& kernels,
                       PreparedKernels& out, PreparedSequence& prepared) {
  for (const th::Thunk& t : seq.thunks) {
    int32_t index = -1;
    if (const auto* k = t.As<th::KernelThunk>()) {
      auto it = kernels.find(k->kernel_name);
      if (it == kernels.end()) return Error("kernel '" + k->kernel_name + "' was not resolved");
      const HostKernel& kernel = it->second;
      index = static_cast<int32_t>(out.kernels.size());
      out.kernels.push_back({kernel.fn, kernel.units, kernel.units * std::max<int64_t>(1, kernel.elements_per_unit),
                             static_cast<int64_t>(out.argument_slices.size())});
      for (const th::KernelArgument& a : k->args) out.argument_slices.push_back(a.slice);
    }
    prepared.kernel.push_back(index);
    std::vector<PreparedSequence> children;
    for (const th::SequenceThunk* child : th::ChildSequences(t)) {
      children.emplace_back();
      KILN_RETURN_IF_ERROR(PrepareSequence(*child, kernels, out, children.back()));
    }
    prepared.children.push_back(std::move(children));
  }
  return Status::Ok();
}

}  // namespace

std::vector<void*> PreparedKernels::ArgumentPointers(const std::vector<uint8_t*>& base) const {
  std::vector<void*> pointers(argument_slices.size());
  for (size_t i = 0; i < argument_slices.size(); ++i)
    pointers[i] = base[argument_slices[i].allocation] + argument_slices[i].offset;
  return pointers;
}

StatusOr<PreparedKernels> PrepareKernels(const th::SequenceThunk& root,
                                         const std::unordered_map<std::string, HostKernel>& kernels) {
  PreparedKernels out;
  KILN_RETURN_IF_ERROR(PrepareSequence(root, kernels, out, out.root));
  return out;
}

}  // namespace kiln::runtime
