// Device functions: .func definitions called with 'call', as libdevice's
// slow paths (f64 sin/cos/pow) are in kiln's PTX. The emulator inlines each
// called function once per kernel; arguments and results travel through
// .param slots. Expected values are computed by hand in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

class PtxCallTest : public EmulatorTest {};

// out[i] = twice(i + 1) + 5, through a nested call chain:
// plus5_of_twice(x) = add5(twice(x)); odd lanes skip the call (guarded) and
// store 0. The functions are defined after the kernel, as LLVM emits them.
constexpr std::string_view kCalls = R"(
.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0);
.func (.param .b32 func_retval0) add5(.param .b32 add5_param_0);
.func (.param .b32 func_retval0) plus5_of_twice(.param .b32 p_param_0);

.visible .entry calls(.param .u64 out_param)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out_param];
  mov.u32 %r1, %tid.x;
  add.s32 %r2, %r1, 1;
  mov.u32 %r3, 0;
  and.b32 %r4, %r1, 1;
  setp.eq.s32 %p1, %r4, 0;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r2;
  .param .b32 retval0;
  @%p1 call.uni (retval0), plus5_of_twice, (param0);
  @%p1 ld.param.b32 %r3, [retval0];
  }
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}

.func (.param .b32 func_retval0) plus5_of_twice(.param .b32 p_param_0)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [p_param_0];
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), twice, (param0);
  ld.param.b32 %r2, [retval0];
  }
  {
  .param .b32 param0;
  st.param.b32 [param0], %r2;
  .param .b32 retval0;
  call.uni (retval0), add5, (param0);
  ld.param.b32 %r3, [retval0];
  }
  st.param.b32 [func_retval0], %r3;
  ret;
}

.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [twice_param_0];
  shl.b32 %r2, %r1, 1;
  st.param.b32 [func_retval0], %r2;
  ret;
}

.func (.param .b32 func_retval0) add5(.param .b32 add5_param_0)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [add5_param_0];
  add.s32 %r2, %r1, 5;
  st.param.b32 [func_retval0], %r2;
}
)";

TEST_F(PtxCallTest, NestedGuardedCallsReturnTheirResults) {
  ASSERT_NO_FATAL_FAILURE(Load(kCalls));
  uint64_t out = Alloc(64 * 4);
  ASSERT_RUN(Run("calls", Dim3{1}, Dim3{64}, 0, out));
  std::vector<uint32_t> got = Download<uint32_t>(out, 64);
  for (uint32_t i = 0; i < 64; ++i) {
    // Even lanes: 2 * (i + 1) + 5; odd lanes skip the call.
    uint32_t want = i % 2 == 0 ? 2 * (i + 1) + 5 : 0;
    EXPECT_EQ(got[i], want) << "lane " << i;
  }
}

constexpr std::string_view kRecursive = R"(
.func (.param .b32 func_retval0) self(.param .b32 self_param_0)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [self_param_0];
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), self, (param0);
  ld.param.b32 %r2, [retval0];
  }
  st.param.b32 [func_retval0], %r2;
  ret;
}

.visible .entry recursive()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 1;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), self, (param0);
  }
  ret;
}
)";

TEST_F(PtxCallTest, RecursionIsAnError) {
  ASSERT_NO_FATAL_FAILURE(Load(kRecursive));
  StatusOr<KilnEmuCounters> r = Run("recursive", Dim3{1}, Dim3{1}, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("recursive call"), std::string::npos) << r.status().message();
}

TEST_F(PtxCallTest, CallOfAnUndefinedFunctionFailsToLoad) {
  Status s = LoadPtx(std::string(kPtxHeader) + R"(
.func (.param .b32 func_retval0) missing(.param .b32 missing_param_0);
.visible .entry k()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 1;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), missing, (param0);
  }
  ret;
}
)");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'missing'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::emu::testing
