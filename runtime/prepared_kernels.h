// PreparedKernels: the host kernel thunks of a program resolved once, at
// load, so that running one does no name lookup and no allocation.
//
// A tree parallel to the program's thunk tree (PreparedSequence) gives each
// kernel thunk the index of its PreparedKernel: the resolved function, its
// launch, and the place of its argument pointers in one flat array. That
// array is filled once per execution (ArgumentPointers) from the
// allocation base addresses, which do not change while the execution runs,
// so a kernel inside a loop passes the same pointers every iteration
// without computing them again.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "thunks/program.h"

namespace kiln::runtime {

struct HostKernel;

struct PreparedKernel {
  void (*fn)(void** args, int64_t begin, int64_t end) = nullptr;
  int64_t units = 1;
  int64_t work = 1;          // units * elements per unit: whether splitting pays
  int64_t first_argument = 0;  // index of its first pointer in the flat array
};

// Per thunk of one sequence, in order: its PreparedKernel index (-1 for
// other thunks) and the prepared trees of its child sequences
// (thunks::ChildSequences order).
struct PreparedSequence {
  std::vector<int32_t> kernel;
  std::vector<std::vector<PreparedSequence>> children;
};

struct PreparedKernels {
  PreparedSequence root;
  std::vector<PreparedKernel> kernels;
  // The slice of every kernel argument, kernel after kernel.
  std::vector<thunks::BufferSlice> argument_slices;

  // The flat argument array for allocation bases `base`.
  std::vector<void*> ArgumentPointers(const std::vector<uint8_t*>& base) const;
};

// Resolves every kernel thunk under `root` by name in `kernels`; errors
// name a kernel the image does not hold.
StatusOr<PreparedKernels> PrepareKernels(const thunks::SequenceThunk& root,
                                         const std::unordered_map<std::string, HostKernel>& kernels);

}  // namespace kiln::runtime
