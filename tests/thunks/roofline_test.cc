// Tests of the roofline bound and of the target's text form, with the
// expected times worked out by hand.
#include "thunks/roofline.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kiln::thunks {
namespace {

// Round numbers: 1 GB/s, 1 GFLOP/s, 10 GFLOP/s on tensor cores, 0.1 G/s
// transcendentals.
RooflineTarget Target() { return {"test", 1e9, 1e9, 1e10, 1e8}; }

TEST(RooflineTest, OptimalIsTheLargestOfThreeTerms) {
  // 2000 bytes: 2 µs; 4000 flops: 4 µs (0.4 µs on tensor cores); 100
  // transcendentals: 1 µs.
  CostEstimate cost{4000, 100, 1500, 500};
  EXPECT_DOUBLE_EQ(OptimalSeconds(cost, Target(), false), 4e-6);
  EXPECT_DOUBLE_EQ(OptimalSeconds(cost, Target(), true), 2e-6);
  cost.transcendentals = 1000;  // 10 µs
  EXPECT_DOUBLE_EQ(OptimalSeconds(cost, Target(), false), 1e-5);
  EXPECT_DOUBLE_EQ(OptimalSeconds(CostEstimate{}, Target(), false), 0);
}

TEST(RooflineTest, BuiltInTargets) {
  RooflineTarget cuda = CudaRooflineTarget();
  EXPECT_DOUBLE_EQ(cuda.bytes_per_second, 3.0e12);
  EXPECT_DOUBLE_EQ(cuda.flops_per_second, 6.0e13);
  EXPECT_DOUBLE_EQ(cuda.tensor_flops_per_second, 7.5e14);
  // A 1 GiB copy-like kernel on the H100 target: 2^31 bytes / 3e12 B/s.
  EXPECT_NEAR(OptimalSeconds({0, 0, 1 << 30, 1 << 30}, cuda, false), 7.158e-4, 1e-7);
  RooflineTarget host = HostRooflineTarget();
  EXPECT_DOUBLE_EQ(host.bytes_per_second, 2.0e10);
  EXPECT_DOUBLE_EQ(host.flops_per_second, 5.0e10);
}

TEST(RooflineTest, ParsesOverrides) {
  StatusOr<RooflineTarget> t = ParseRooflineTarget("bw=3.0e12,flops=6e13,tensor_flops=7.5e14", Target());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "test");
  EXPECT_DOUBLE_EQ(t->bytes_per_second, 3.0e12);
  EXPECT_DOUBLE_EQ(t->flops_per_second, 6e13);
  EXPECT_DOUBLE_EQ(t->tensor_flops_per_second, 7.5e14);
  EXPECT_DOUBLE_EQ(t->transcendentals_per_second, 1e8);  // untouched
  t = ParseRooflineTarget("trans=2e9,name=a100", Target());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "a100");
  EXPECT_DOUBLE_EQ(t->transcendentals_per_second, 2e9);
  t = ParseRooflineTarget("", Target());
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->bytes_per_second, 1e9);
}

TEST(RooflineTest, RejectsBadSpecs) {
  for (const char* bad : {"bw", "bw=", "bw=abc", "bw=1e12x", "bw=-1", "bw=0", "bw=inf", "bw=nan",
                          "speed=1", "bw=1e12,", ",bw=1e12", "name="}) {
    StatusOr<RooflineTarget> t = ParseRooflineTarget(bad, Target());
    EXPECT_FALSE(t.ok()) << bad;
  }
  EXPECT_EQ(ParseRooflineTarget("speed=1", Target()).status().message(),
            "roofline: unknown key 'speed' (expected bw, flops, tensor_flops, trans or name)");
  EXPECT_EQ(ParseRooflineTarget("bw=x", Target()).status().message(),
            "roofline: 'bw' needs a positive number, got 'x'");
}

TEST(RooflineTest, EnvironmentOverrides) {
  unsetenv("KILN_ROOFLINE");
  StatusOr<RooflineTarget> t = ApplyRooflineEnvironment(Target());
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->bytes_per_second, 1e9);
  setenv("KILN_ROOFLINE", "bw=2e9", 1);
  t = ApplyRooflineEnvironment(Target());
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->bytes_per_second, 2e9);
  setenv("KILN_ROOFLINE", "bw=fast", 1);
  t = ApplyRooflineEnvironment(Target());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "KILN_ROOFLINE: roofline: 'bw' needs a positive number, got 'fast'");
  unsetenv("KILN_ROOFLINE");
}

}  // namespace
}  // namespace kiln::thunks
