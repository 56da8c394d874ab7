// SelectHostImage (serialization/host_image.h): which host kernel image of
// an artifact this machine runs, on hand-made artifacts whose images need
// features this CPU has, lacks, or kiln does not know.
#include "serialization/host_image.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/x86_cpu.h"
#include "tests/support/sample_artifact.h"

namespace kiln::bef {
namespace {

KernelImage Host(const std::string& level, std::vector<std::string> features) {
  KernelImage image;
  image.target = "host-x86_64";
  image.kind = TargetKind::kHost;
  image.cpu_level = level;
  image.cpu_features = std::move(features);
  return image;
}

Artifact WithImages(std::vector<KernelImage> images) {
  Artifact a;
  a.program = testing::ParameterTempOutputProgram({});
  a.targets = {"host-x86_64"};
  a.kernel_images = std::move(images);
  return a;
}

class HostImageSelection : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("KILN_HOST_CPU_LEVEL"); }
  void TearDown() override { unsetenv("KILN_HOST_CPU_LEVEL"); }
};

TEST_F(HostImageSelection, HighestImageTheCpuRuns) {
  ASSERT_FALSE(HostX86Level().empty());
  Artifact a = WithImages({Host("x86-64-v2", *X86LevelFeatures("x86-64-v2")),
                           Host("native", {"sse4.2", "no-such-feature"})});
  // An image needing a feature kiln cannot check is never picked.
  StatusOr<const KernelImage*> image = SelectHostImage(a);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ((*image)->cpu_level, "x86-64-v2");

  Artifact b = WithImages({Host("x86-64-v2", *X86LevelFeatures("x86-64-v2")),
                           Host(HostX86Level(), *X86LevelFeatures(HostX86Level()))});
  if (HostX86Level() == "x86-64-v2") b.kernel_images.pop_back();
  image = SelectHostImage(b);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ((*image)->cpu_level, HostX86Level());
}

TEST_F(HostImageSelection, FileBefore32IsBaseline) {
  Artifact a = WithImages({Host("", {})});
  StatusOr<const KernelImage*> image = SelectHostImage(a);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ(*image, &a.kernel_images[0]);
  EXPECT_EQ(HostImageLevel(**image), "x86-64-v2");
}

TEST_F(HostImageSelection, NoneRunsHere) {
  Artifact a = WithImages({Host("native", {"no-such-feature"})});
  StatusOr<const KernelImage*> image = SelectHostImage(a);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().message(), "this CPU runs none of the artifact's host kernel images (native)");
  EXPECT_EQ(*SelectHostImage(Artifact()), nullptr);  // no host target at all
}

TEST_F(HostImageSelection, ForcedLevel) {
  Artifact a = WithImages({Host("x86-64-v2", *X86LevelFeatures("x86-64-v2")),
                           Host("x86-64-v3", *X86LevelFeatures("x86-64-v3")),
                           Host("native", {"no-such-feature"})});
  setenv("KILN_HOST_CPU_LEVEL", "x86-64-v2", 1);
  StatusOr<const KernelImage*> image = SelectHostImage(a);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ((*image)->cpu_level, "x86-64-v2");
  setenv("KILN_HOST_CPU_LEVEL", "x86-64-v4", 1);
  image = SelectHostImage(a);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().message(),
            "KILN_HOST_CPU_LEVEL=x86-64-v4: the artifact has host kernels for x86-64-v2, x86-64-v3, native only");
  setenv("KILN_HOST_CPU_LEVEL", "native", 1);
  image = SelectHostImage(a);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().message(), "KILN_HOST_CPU_LEVEL=native: this CPU lacks the level's features");
}

TEST_F(HostImageSelection, ValidationAllowsOneImagePerLevel) {
  Artifact a = WithImages({Host("x86-64-v2", {}), Host("x86-64-v3", {})});
  EXPECT_TRUE(ValidateArtifact(a).ok()) << ValidateArtifact(a).message();
  a.kernel_images.push_back(Host("x86-64-v3", {}));
  EXPECT_EQ(ValidateArtifact(a).message(), "two kernel images for target 'host-x86_64' at CPU level 'x86-64-v3'");
  Artifact b = WithImages({Host("x86-64-v2", {"avx2", ""})});
  EXPECT_FALSE(ValidateArtifact(b).ok());
}

}  // namespace
}  // namespace kiln::bef
