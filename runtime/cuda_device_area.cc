// Growing a device area; see cuda_device_area.h.
#include "runtime/cuda_device_area.h"

#include <string>

namespace kiln::runtime {

StatusOr<CUdeviceptr> GrowableDeviceArea::Reserve(const CudaDriver& d, uint64_t bytes, CUstream used_on,
                                                  std::string_view what) {
  if (Fits(bytes)) return address_;
  if (address_) {
    KILN_RETURN_IF_ERROR(d.Check(d.cuStreamSynchronize(used_on), "cuStreamSynchronize"));
    KILN_RETURN_IF_ERROR(d.Check(d.cuMemFree(address_), "cuMemFree"));
    address_ = 0;
    bytes_ = 0;
  }
  CUdeviceptr fresh = 0;
  KILN_RETURN_IF_ERROR(d.Check(d.cuMemAlloc(&fresh, static_cast<size_t>(bytes)),
                               "cuMemAlloc of " + std::to_string(bytes) + " bytes " + std::string(what)));
  address_ = fresh;
  bytes_ = bytes;
  return fresh;
}

void GrowableDeviceArea::Release(const CudaDriver& d) {
  if (address_) d.cuMemFree(address_);
  address_ = 0;
  bytes_ = 0;
}

}  // namespace kiln::runtime
