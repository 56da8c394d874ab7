// CudaConditionalNodes: a while loop that reads its predicate and a
// conditional recorded inside a CUDA graph as conditional nodes (CUDA
// 12.4+), so that they no longer split the graph. Internal to the runtime.
//
// The device decides: a one-thread kernel kiln emits (kiln_set_conditional)
// reads the predicate or branch index where the program left it and sets
// the node's handle with the device runtime's cudaGraphSetConditional. That
// call needs no link step: like vprintf it is a function the driver
// provides to every module (ptxas resolves it in a whole-program compile,
// nvlink leaves it undefined even against libcudadevrt.a, which does not
// define it), so the kernel's PTX declares it .extern and is loaded with
// cuModuleLoadDataEx like any other.
//
// Recording happens inside a segment's stream capture (cuda_graphs.h), on
// the capturing stream, whose library handles are bound to it:
//   while:  condition; set(handle, predicate); WHILE node whose body is
//           body; condition; set(handle, predicate)
//   conditional, driver 12.8+: set(handle, index); SWITCH node, a body per
//           branch (an out-of-range index selects the last, as in XLA)
//   conditional, 12.4 to 12.7: one IF node per branch, each with its own
//           handle set to (branch == i) before the first
// A node is added with cuStreamGetCaptureInfo, cuGraphAddNode and
// cuStreamUpdateCaptureDependencies; its bodies are captured on the same
// stream: the capture ends, each body is captured with
// cuStreamBeginCaptureToGraph, and the capture resumes into its graph after
// the node. The driver allows kernels, copies, memsets and conditionals in
// a body, not event records: profiled executions split the graph instead.
#pragma once

#include <cuda.h>

#include <memory>

#include "common/status.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_module.h"
#include "thunks/program.h"

namespace kiln::runtime {

class CudaConditionalNodes {
 public:
  // The driver's conditional nodes and kiln's set-conditional kernel for
  // a device of compute capability `sm_arch`; an error says why they are
  // not available (a driver older than 12.4, missing entry points). The
  // context must be current.
  static StatusOr<std::unique_ptr<CudaConditionalNodes>> Load(const CudaDriver& driver, int sm_arch);

  // SWITCH nodes (driver 12.8+); else a conditional is a chain of IFs.
  bool has_switch() const { return has_switch_; }
  int driver_version() const { return driver_version_; }

  // Record `w` (no trip count) or `c` on ctx.stream, which is capturing.
  Status RecordWhile(const thunks::WhileThunk& w, CudaExecutionContext& ctx, int depth) const;
  Status RecordConditional(const thunks::ConditionalThunk& c, CudaExecutionContext& ctx, int depth) const;

 private:
  CudaConditionalNodes(const CudaDriver& driver, std::unique_ptr<CudaModule> module, CUfunction setter,
                       CUcontext context, int version)
      : driver_(driver), module_(std::move(module)), setter_(setter), context_(context),
        driver_version_(version), has_switch_(version >= 12080) {}

  const CudaDriver& driver_;
  std::unique_ptr<CudaModule> module_;
  CUfunction setter_;
  CUcontext context_;
  int driver_version_;
  bool has_switch_;
};

// The PTX of kiln_set_conditional for `sm_arch` (tests read it).
std::string SetConditionalPtx(int sm_arch);

}  // namespace kiln::runtime
