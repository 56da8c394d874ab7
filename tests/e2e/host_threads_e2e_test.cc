// Host kernels split across threads: with KILN_HOST_THREADS=2 the host
// runtime runs kernels with enough work (executor.h, kMinElementsToSplit)
// as two unit ranges on two threads. Modules big enough to be split (an
// elementwise fusion, a reduce, a tiled transpose, an in-place
// dynamic-update-slice) and a scatter (never split) must still match the
// reference evaluator.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

class HostThreadsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    // Read once, when the host backend is created.
    setenv("KILN_HOST_THREADS", "2", 1);
    auto d = runtime::Device::Create(runtime::DeviceKind::kHost, 1);
    unsetenv("KILN_HOST_THREADS");
    ASSERT_TRUE(d.ok()) << d.status().message();
    device_ = std::move(*d);
  }
  std::unique_ptr<runtime::Device> device_;
};

TEST_F(HostThreadsE2E, ElementwiseFusion) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[1,512,300] parameter(0)
  y = f32[1,512,300] parameter(1)
  t = f32[1,512,300] tanh(x)
  ROOT r = f32[1,512,300] multiply(t, y)
})", *device_);
}

TEST_F(HostThreadsE2E, Reduce) {
  ExpectMatchesEvaluator(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,128] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024] reduce(x, z), dimensions={1}, to_apply=add
})", *device_, 1, CompareOptions{1e-4, 1e-4});
}

TEST_F(HostThreadsE2E, TiledTranspose) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[600,400] parameter(0)
  y = f32[600,400] parameter(1)
  s = f32[600,400] add(x, y)
  ROOT t = f32[400,600] transpose(s), dimensions={1,0}
})", *device_);
}

TEST_F(HostThreadsE2E, DynamicUpdateSlice) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[1000,256] parameter(0)
  u = f32[500,256] parameter(1)
  i = s32[] constant(300)
  z = s32[] constant(0)
  ROOT d = f32[1000,256] dynamic-update-slice(x, u, i, z)
})", *device_);
}

TEST_F(HostThreadsE2E, ScatterWithDuplicateIndices) {
  // Every update row targets row 3 or 5: split across threads, the adds
  // would race.
  ExpectMatchesEvaluator(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,128] parameter(0)
  io = s32[1024,1] iota(), iota_dimension=0
  one = s32[] constant(1)
  two = s32[] constant(2)
  three = s32[] constant(3)
  ob = s32[1024,1] broadcast(one), dimensions={}
  tb = s32[1024,1] broadcast(two), dimensions={}
  hb = s32[1024,1] broadcast(three), dimensions={}
  odd = s32[1024,1] and(io, ob)
  m = s32[1024,1] multiply(odd, tb)
  idx = s32[1024,1] add(m, hb)
  upd = f32[1024,128] parameter(1)
  ROOT s = f32[8,128] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})", *device_, 1, CompareOptions{1e-3, 1e-4});
}

}  // namespace
}  // namespace kiln::testing
