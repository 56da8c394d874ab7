// End to end: select-and-scatter (max-pool gradients), compiled into a loop
// kernel that gathers per result element, against the reference evaluator
// (which scatters per source element). Non-overlapping and overlapping
// windows, SAME padding, windows that lie partly in padding, ties (integer
// operands: the first maximal element wins), a min-select, and a fused
// producer of the source. Runs on the E2E device (host, or CUDA on the
// emulator).
#include <gtest/gtest.h>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

class SelectAndScatterE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }
  // A module of `type` select (compare `direction`) and scatter (add)
  // computations and the entry computation `entry`.
  void CheckModule(const std::string& type, const std::string& entry, const char* direction = "GE",
                   uint64_t seed = 5) {
    std::string text = "HloModule m\n\nselect {\n  a = " + type + "[] parameter(0)\n  b = " + type +
                       "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=" + direction +
                       "\n}\n\nscatter {\n  a = " + type + "[] parameter(0)\n  b = " + type +
                       "[] parameter(1)\n  ROOT c = " + type + "[] add(a, b)\n}\n\nENTRY e {\n" + entry + "}\n";
    ExpectMatchesEvaluator(text, *device_, seed, CompareOptions{1e-5, 1e-5});
  }
  // select-and-scatter of parameter x (operand) and s (source).
  void Check(const std::string& type, const std::string& operand, const std::string& source,
             const std::string& window, const char* direction = "GE") {
    CheckModule(type,
                "  x = " + type + operand + " parameter(0)\n  s = " + type + source + " parameter(1)\n  z = " +
                    type + "[] constant(0)\n  ROOT r = " + type + operand +
                    " select-and-scatter(x, s, z), window={" + window + "}, select=select, scatter=scatter\n",
                direction);
  }
  std::unique_ptr<runtime::Device> device_;
};

TEST_F(SelectAndScatterE2ETest, MaxPoolGradNonOverlapping) {
  Check("f32", "[2,8,8,3]", "[2,4,4,3]", "size=1x2x2x1 stride=1x2x2x1");
}

TEST_F(SelectAndScatterE2ETest, MaxPoolGradOverlappingSamePadding) {
  // ResNet's 3x3 stride-2 max pool with SAME padding: windows overlap and
  // the border ones lie partly in padding.
  Check("f32", "[1,9,9,4]", "[1,5,5,4]", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0");
  Check("f32", "[2,6,7]", "[2,6,7]", "size=1x3x3 pad=0_0x1_1x1_1");
}

TEST_F(SelectAndScatterE2ETest, TiesPickTheFirstElement) {
  // s8 parameters span a narrow range, so windows hold equal maxima.
  Check("s32", "[4,10]", "[2,5]", "size=2x2 stride=2x2");
  Check("s8", "[6,6]", "[5,5]", "size=2x2");
}

TEST_F(SelectAndScatterE2ETest, AllEqualWindowsPickTheirFirstElement) {
  // Every window is one tie: the whole gradient goes to each window's first
  // (top-left) element, and overlapping windows share borders.
  CheckModule("f32", R"(  one = f32[] constant(1)
  x = f32[7,7] broadcast(one), dimensions={}
  s = f32[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[7,7] select-and-scatter(x, s, z), window={size=3x3 stride=2x2 pad=1_1x1_1}, select=select, scatter=scatter
)", "GE", 4);
}

TEST_F(SelectAndScatterE2ETest, MinSelect) { Check("f32", "[12,10]", "[6,5]", "size=2x2 stride=2x2", "LE"); }

TEST_F(SelectAndScatterE2ETest, FusedSourceProducer) {
  CheckModule("f32", R"(  x = f32[1,8,8,2] parameter(0)
  g = f32[1,4,4,2] parameter(1)
  s = f32[1,4,4,2] multiply(g, g)
  z = f32[] constant(0)
  r = f32[1,8,8,2] select-and-scatter(x, s, z), window={size=1x2x2x1 stride=1x2x2x1}, select=select, scatter=scatter
  ROOT n = f32[1,8,8,2] negate(r)
)", "GE", 3);
}

}  // namespace
}  // namespace kiln::testing
