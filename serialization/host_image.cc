// SelectHostImage: the host kernel image for this CPU; see host_image.h.
#include "serialization/host_image.h"

#include <vector>

#include "common/x86_cpu.h"

namespace kiln::bef {

std::string HostImageLevel(const KernelImage& image) {
  return image.cpu_level.empty() ? "x86-64-v2" : image.cpu_level;
}

namespace {

// What the image's code needs: its features, or its level's for an image
// that names none (a file before 3.2).
std::vector<std::string> RequiredFeatures(const KernelImage& image) {
  if (!image.cpu_features.empty()) return image.cpu_features;
  return X86LevelFeatures(HostImageLevel(image)).value_or(std::vector<std::string>{});
}

std::string Levels(const std::vector<const KernelImage*>& images) {
  std::string out;
  for (const KernelImage* image : images) out += (out.empty() ? "" : ", ") + HostImageLevel(*image);
  return out;
}

}  // namespace

StatusOr<const KernelImage*> SelectHostImage(const Artifact& artifact) {
  std::vector<const KernelImage*> host;
  for (const KernelImage& image : artifact.kernel_images)
    if (image.kind == TargetKind::kHost) host.push_back(&image);
  if (host.empty()) return static_cast<const KernelImage*>(nullptr);
  const std::string forced = ForcedHostCpuLevel();
  if (!forced.empty()) {
    for (const KernelImage* image : host) {
      if (HostImageLevel(*image) != forced) continue;
      if (!HostCpuHasFeatures(RequiredFeatures(*image)))
        return Error("KILN_HOST_CPU_LEVEL=" + forced + ": this CPU lacks the level's features");
      return image;
    }
    return Error("KILN_HOST_CPU_LEVEL=" + forced + ": the artifact has host kernels for " + Levels(host) +
                 " only");
  }
  const KernelImage* best = nullptr;
  for (const KernelImage* image : host)
    if (HostCpuHasFeatures(RequiredFeatures(*image))) best = image;
  if (!best)
    return Error("this CPU runs none of the artifact's host kernel images (" + Levels(host) + ")");
  return best;
}

}  // namespace kiln::bef
