// GrowableDeviceArea: a block of device memory kept across executions that
// only ever grows (a lane's library scratch, an async collective's source
// snapshot). Internal to the runtime.
//
// Growing must not free memory that work already queued may still read or
// write, so Reserve first waits for the one stream that uses the area, then
// frees the old block and allocates the larger one. Callers that hit the
// common case (the area is big enough) pay one comparison.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "runtime/cuda_driver.h"

namespace kiln::runtime {

class GrowableDeviceArea {
 public:
  CUdeviceptr address() const { return address_; }
  uint64_t bytes() const { return bytes_; }
  bool Fits(uint64_t bytes) const { return bytes <= bytes_; }

  // At least `bytes` of device memory. Growing synchronizes `used_on` (the
  // stream whose queued work may still use the old block) before freeing
  // it. `what` names the area in the allocation's error.
  StatusOr<CUdeviceptr> Reserve(const CudaDriver& d, uint64_t bytes, CUstream used_on, std::string_view what);
  // Frees the block (the context must be current and its users done).
  void Release(const CudaDriver& d);

 private:
  CUdeviceptr address_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace kiln::runtime
