// ValidateArtifact: program checks plus the kernel-image checks only the
// artifact level can do (see artifact.h).
#include <set>

#include "serialization/artifact.h"
#include "thunks/program_text.h"
#include "thunks/validate.h"

namespace kiln::bef {
namespace {

namespace th = ::kiln::thunks;

// A CUDA entry's launch is the driver's (th::CheckCudaLaunch). A host
// entry's grid.x counts the work units its [begin, end) ranges over and
// block.x the iterations per unit: int64 counts of any size, not bounded
// like a CUDA grid (a reduction of 2^32 elements is one unit of 2^32).
Status ValidateEntryLaunch(TargetKind kind, const th::LaunchDims& launch) {
  if (kind == TargetKind::kCuda) return th::CheckCudaLaunch(launch);
  if (launch.grid.x < 1 || launch.block.x < 0) {
    return Error("invalid host work units " + std::to_string(launch.grid.x) + " of " +
                 std::to_string(launch.block.x) + " iterations");
  }
  return Status::Ok();
}

Status ValidateImage(const KernelImage& image) {
  const std::string what = std::string(TargetKindName(image.kind)) + " kernel image " +
                           th::QuoteForMessage(image.target);
  std::set<std::string> names;
  for (const KernelEntry& k : image.kernels) {
    if (k.name.empty()) return Error(what + " has a kernel without a name");
    const std::string kernel = what + " kernel " + th::QuoteForMessage(k.name);
    if (!names.insert(k.name).second) return Error(what + " lists kernel " + th::QuoteForMessage(k.name) + " twice");
    KILN_RETURN_IF_ERROR(ValidateEntryLaunch(image.kind, k.launch).WithContext(kernel));
  }
  if (image.kind == TargetKind::kCuda) {
    std::set<int32_t> archs;
    for (const CubinImage& c : image.cubins) {
      if (c.sm_arch <= 0 || !archs.insert(c.sm_arch).second) {
        return Error(what + " has an invalid or repeated cubin architecture sm_" +
                     std::to_string(c.sm_arch));
      }
      if (c.data.empty()) return Error(what + " has an empty cubin for sm_" + std::to_string(c.sm_arch));
    }
    if (!image.kernels.empty() && image.cubins.empty() && image.ptx.empty()) {
      return Error(what + " has kernels but neither cubin nor PTX");
    }
    if (!image.shared_object.empty()) return Error(what + " holds a host shared object");
  } else {
    if (!image.kernels.empty() && image.shared_object.empty()) {
      return Error(what + " has kernels but no shared object");
    }
    if (!image.cubins.empty() || !image.ptx.empty()) return Error(what + " holds CUDA code");
  }
  if (image.kind == TargetKind::kCuda && (!image.cpu_level.empty() || !image.cpu_features.empty()))
    return Error(what + " names a host CPU level");
  for (const std::string& f : image.cpu_features)
    if (f.empty()) return Error(what + " lists an empty CPU feature");
  return Status::Ok();
}

Status ValidateImages(const Artifact& a) {
  std::set<std::string> targets;
  for (const std::string& t : a.targets) {
    if (t.empty()) return Error("empty target name");
    if (!targets.insert(t).second) return Error("target " + th::QuoteForMessage(t) + " is listed twice");
  }
  std::set<std::string> imaged;
  // One image per target and CPU level (CUDA images have no level).
  std::set<std::pair<std::string, std::string>> leveled;
  for (const KernelImage& image : a.kernel_images) {
    if (!targets.count(image.target)) {
      return Error("kernel image for " + th::QuoteForMessage(image.target) +
                   ", which is not among the targets");
    }
    imaged.insert(image.target);
    if (!leveled.insert({image.target, image.cpu_level}).second) {
      return Error("two kernel images for target " + th::QuoteForMessage(image.target) +
                   (image.cpu_level.empty() ? "" : " at CPU level " + th::QuoteForMessage(image.cpu_level)));
    }
    KILN_RETURN_IF_ERROR(ValidateImage(image));
  }
  for (const std::string& t : a.targets) {
    if (!imaged.count(t)) return Error("target " + th::QuoteForMessage(t) + " has no kernel image");
  }
  return Status::Ok();
}

// Every kernel a Kernel thunk launches exists in every image.
Status ValidateKernelNames(const Artifact& a) {
  std::vector<std::set<std::string_view>> available;
  for (const KernelImage& image : a.kernel_images) {
    auto& names = available.emplace_back();
    for (const KernelEntry& k : image.kernels) names.insert(k.name);
  }
  Status status;
  th::ForEachThunk(
      a.program.root,
      [&](const th::Thunk& thunk, int) {
        const auto* kernel = thunk.As<th::KernelThunk>();
        if (!status.ok() || kernel == nullptr) return;
        for (size_t i = 0; i < a.kernel_images.size(); ++i) {
          if (!available[i].count(kernel->kernel_name)) {
            status = Error("kernel " + th::QuoteForMessage(kernel->kernel_name) +
                           " of kernel thunk " + th::QuoteForMessage(thunk.info.profile_name) +
                           " is missing from the kernel image for " +
                           th::QuoteForMessage(a.kernel_images[i].target));
            return;
          }
        }
      },
      th::kMaxThunkDepth);
  return status;
}

}  // namespace

std::string_view TargetKindName(TargetKind kind) {
  switch (kind) {
    case TargetKind::kHost: return "host";
    case TargetKind::kCuda: return "cuda";
  }
  return "?";
}

Status ValidateArtifact(const Artifact& artifact) {
  KILN_RETURN_IF_ERROR(th::ValidateProgram(artifact.program));
  KILN_RETURN_IF_ERROR(ValidateImages(artifact));
  return ValidateKernelNames(artifact);
}

}  // namespace kiln::bef
