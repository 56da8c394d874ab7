// End-to-end tests of sort and topk: each module is compiled through the
// whole pipeline (StableSortExpander, SortFusion, the sort emitter: merge
// sort on the host, bitonic network on CUDA) and run on the device of
// KILN_E2E_DEVICE, and its result compared with the reference evaluator's
// (its own stable merge sort and a stable-sort topk) on the same inputs:
// seeded random ones, or hand-picked ones with NaN, -0.0 and ties.
//
// Sorts whose keys can tie are is_stable=true (as JAX emits them), or sort
// a single operand (equal keys are then indistinguishable): an unstable
// sort may order ties either way, the evaluator always keeps their order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/driver/compiler.h"
#include "kernels_lib/radix_sort_image.h"
#include "tests/e2e/e2e_test_util.h"
#include "thunks/program.h"

namespace kiln::testing {
namespace {

// Comparators on the first operand's pair (p0 = lhs, p1 = rhs); further
// operands' parameters are unused.
std::string Comparator(const std::string& name, const std::vector<std::string>& types, const std::string& direction,
                       const std::string& compare_type = "") {
  std::string text = name + " {\n";
  for (size_t i = 0; i < 2 * types.size(); ++i)
    text += "  p" + std::to_string(i) + " = " + types[i / 2] + "[] parameter(" + std::to_string(i) + ")\n";
  text += "  ROOT c = pred[] compare(p0, p1), direction=" + direction +
          (compare_type.empty() ? "" : ", type=" + compare_type) + "\n}\n\n";
  return text;
}

class SortE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }
  void Check(const std::string& computations, const std::string& body, uint64_t seed = 1) {
    std::string text = "HloModule m\n\n" + computations + "ENTRY e {\n" + body + "}\n";
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    CheckWithArgs(computations, body, RandomArgs(**module, seed));
  }
  // On the host the module also runs as compiled for host and CUDA, whose
  // one program carries CUDA's radix sorts (run by kernels_lib's
  // HostRadixSort there).
  void CheckWithArgs(const std::string& computations, const std::string& body, const std::vector<Literal>& args) {
    std::string text = "HloModule m\n\n" + computations + "ENTRY e {\n" + body + "}\n";
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    ASSERT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
    EXPECT_EQ(CompareWithEvaluator(**module, *device_, args), "") << text;
    if (E2EDeviceKind() != runtime::DeviceKind::kHost) return;
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<tools::DeviceRunResult> both =
        tools::CompileAndRun(**module, args, *device_, {.all_targets = true});
    ASSERT_TRUE(both.ok()) << both.status().message();
    Status match = CompareValues(both->result, *expected, "host+cuda program on the host", {});
    EXPECT_TRUE(match.ok()) << match.message() << "\n" << text;
  }
  std::unique_ptr<runtime::Device> device_;
};

TEST_F(SortE2ETest, AscendingF32OfManyLengths) {
  for (int n : {1, 2, 7, 1000, 4097}) {
    SCOPED_TRACE(n);
    std::string s = "f32[" + std::to_string(n) + "]";
    Check(Comparator("lt", {"f32"}, "LT"),
          "  x = " + s + " parameter(0)\n  ROOT r = " + s + " sort(x), dimensions={0}, to_apply=lt\n", n);
  }
}

TEST_F(SortE2ETest, DescendingS32ManyRows) {
  Check(Comparator("gt", {"s32"}, "GT"),
        "  x = s32[37,300] parameter(0)\n  ROOT r = s32[37,300] sort(x), dimensions={1}, to_apply=gt\n");
}

TEST_F(SortE2ETest, Bf16Keys) {
  Check(Comparator("lt", {"bf16"}, "LT"),
        "  x = bf16[5,777] parameter(0)\n  ROOT r = bf16[5,777] sort(x), dimensions={1}, to_apply=lt\n");
}

// Keys f32 (distinct: random in [-1, 1)), values of two other types.
TEST_F(SortE2ETest, KeyValueMultiOperand) {
  Check(Comparator("lt", {"f32", "s32", "f16"}, "LT"),
        "  k = f32[6,513] parameter(0)\n  v = s32[6,513] parameter(1)\n  w = f16[6,513] parameter(2)\n"
        "  ROOT r = (f32[6,513], s32[6,513], f16[6,513]) sort(k, v, w), dimensions={1}, to_apply=lt\n");
}

// argsort as JAX emits it: bf16 keys (many ties) with an iota, stable.
TEST_F(SortE2ETest, StableArgsortWithTies) {
  for (int n : {7, 1000, 4097}) {
    SCOPED_TRACE(n);
    std::string d = "[3," + std::to_string(n) + "]";
    Check(Comparator("lt", {"bf16", "s32"}, "LT"),
          "  x = bf16" + d + " parameter(0)\n  i = s32" + d + " iota(), iota_dimension=1\n"
          "  s = (bf16" + d + ", s32" + d + ") sort(x, i), dimensions={1}, is_stable=true, to_apply=lt\n"
          "  ROOT r = s32" + d + " get-tuple-element(s), index=1\n", n);
  }
}

// Keys with few distinct values and a payload: only a stable sort gives
// the evaluator's payload order.
TEST_F(SortE2ETest, StableKeyValueWithTies) {
  Check(Comparator("gt", {"s32", "f32"}, "GT"),
        "  k = s32[2,1000] parameter(0)\n  v = f32[2,1000] parameter(1)\n"
        "  ROOT r = (s32[2,1000], f32[2,1000]) sort(k, v), dimensions={1}, is_stable=true, to_apply=gt\n");
}

TEST_F(SortE2ETest, OtherElementTypes) {
  Check(Comparator("gt", {"f64", "s64"}, "GT"),
        "  k = f64[3,300] parameter(0)\n  v = s64[3,300] parameter(1)\n"
        "  ROOT r = (f64[3,300], s64[3,300]) sort(k, v), dimensions={1}, to_apply=gt\n");
  Check(Comparator("lt", {"u8"}, "LT"),
        "  x = u8[2,100] parameter(0)\n  ROOT r = u8[2,100] sort(x), dimensions={1}, to_apply=lt\n");
  Check(Comparator("lt", {"pred", "f32"}, "LT"),
        "  k = pred[50] parameter(0)\n  v = f32[50] parameter(1)\n"
        "  ROOT r = (pred[50], f32[50]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt\n");
  Check("", "  x = s8[4,33] parameter(0)\n  ROOT t = (s8[4,3], s32[4,3]) topk(x), k=3, largest=true\n");
}

// Degenerate shapes: a sort dimension of 1, no elements, k=0.
TEST_F(SortE2ETest, DegenerateShapes) {
  Check(Comparator("lt", {"f32"}, "LT"),
        "  x = f32[5,1] parameter(0)\n  ROOT r = f32[5,1] sort(x), dimensions={1}, to_apply=lt\n");
  Check(Comparator("lt", {"f32"}, "LT"),
        "  x = f32[0,5] parameter(0)\n  ROOT r = f32[0,5] sort(x), dimensions={1}, to_apply=lt\n");
  Check("", "  x = f32[3,8] parameter(0)\n  ROOT t = (f32[3,0], s32[3,0]) topk(x), k=0, largest=true\n");
}

// 10000 x (4 + 4) bytes: too long for the CUDA kernel's shared-memory tile,
// sorted in global memory instead.
TEST_F(SortE2ETest, LongSequenceOutsideSharedMemory) {
  Check(Comparator("lt", {"f32", "s32"}, "LT"),
        "  x = f32[10000] parameter(0)\n  i = s32[10000] iota(), iota_dimension=0\n"
        "  ROOT r = (f32[10000], s32[10000]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n");
}

TEST_F(SortE2ETest, AlongOuterAndMiddleDimensions) {
  Check(Comparator("lt", {"f32"}, "LT"),
        "  x = f32[33,17] parameter(0)\n  ROOT r = f32[33,17] sort(x), dimensions={0}, to_apply=lt\n");
  Check(Comparator("lt", {"f32", "s32"}, "LT"),
        "  x = f32[4,50,3] parameter(0)\n  i = s32[4,50,3] iota(), iota_dimension=1\n"
        "  ROOT r = (f32[4,50,3], s32[4,50,3]) sort(x, i), dimensions={1}, is_stable=true, to_apply=lt\n");
}

// NaN of both signs, infinities, -0.0 and +0.0 under TOTALORDER:
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, with the positions
// riding along (stable) so that equal keys are checked too.
std::vector<double> SpecialFloats(int n) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double specials[] = {nan, -0.0, 0.0, -nan, inf, -inf, 1.5, -1.5, 0.0, -0.0, nan, 2.0};
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i % 3 == 0 ? specials[(i / 3) % 12] : std::sin(i * 0.7) * 4);
  return v;
}

TEST_F(SortE2ETest, TotalOrderWithNaNAndSignedZeros) {
  for (int n : {12, 100, 1000}) {
    SCOPED_TRACE(n);
    std::string s = "[" + std::to_string(n) + "]";
    CheckWithArgs(Comparator("lt", {"f32", "s32"}, "LT", "TOTALORDER"),
                  "  x = f32" + s + " parameter(0)\n  i = s32" + s + " iota(), iota_dimension=0\n"
                  "  ROOT r = (f32" + s + ", s32" + s + ") sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n",
                  {Literal::Vector(ElementType::kF32, SpecialFloats(n))});
  }
}

TEST_F(SortE2ETest, TopKLargestAndSmallest) {
  Check("", "  x = f32[16,100] parameter(0)\n  ROOT t = (f32[16,5], s32[16,5]) topk(x), k=5, largest=true\n");
  Check("", "  x = f32[3,1000] parameter(0)\n  ROOT t = (f32[3,1], s32[3,1]) topk(x), k=1, largest=true\n");
  Check("", "  x = f32[4,2,50] parameter(0)\n  ROOT t = (f32[4,2,7], s32[4,2,7]) topk(x), k=7, largest=false\n");
  Check("", "  x = f32[2,9] parameter(0)\n  ROOT t = (f32[2,9], s32[2,9]) topk(x), k=9, largest=true\n");
}

// bf16 and s32 inputs have many ties: the lower position first.
TEST_F(SortE2ETest, TopKTies) {
  Check("", "  x = bf16[8,64] parameter(0)\n  ROOT t = (bf16[8,4], s32[8,4]) topk(x), k=4, largest=true\n");
  Check("", "  x = s32[5,300] parameter(0)\n  ROOT t = (s32[5,10], s32[5,10]) topk(x), k=10, largest=false\n");
}

TEST_F(SortE2ETest, TopKWithNaN) {
  CheckWithArgs("", "  x = f32[100] parameter(0)\n  ROOT t = (f32[6], s32[6]) topk(x), k=6, largest=true\n",
                {Literal::Vector(ElementType::kF32, SpecialFloats(100))});
  CheckWithArgs("", "  x = f32[100] parameter(0)\n  ROOT t = (f32[6], s32[6]) topk(x), k=6, largest=false\n",
                {Literal::Vector(ElementType::kF32, SpecialFloats(100))});
}

// Sorts that CUDA runs as radix sorts (passes::RadixSortRewriter): one key
// with or without a payload, LT or GT, for every key width and the row
// lengths around the radix kernels' tiles (512 and 4096 keys per block;
// longer rows take the multi-pass kernels). The payload is an iota, so a
// tie in the wrong order shows. Every case also runs on the host (kernel-IR
// sort, and HostRadixSort in the host+CUDA program) against the same
// evaluator.
TEST_F(SortE2ETest, RadixSortKeyTypesRowLengthsAndDirections) {
  for (const char* type : {"s32", "u8", "bf16", "f64", "f16", "s8", "u16", "s64", "u64", "pred"}) {
    for (int n : {1, 6, 513, 4097}) {
      for (const char* direction : {"LT", "GT"}) {
        SCOPED_TRACE(std::string(type) + " " + std::to_string(n) + " " + direction);
        std::string d = "[3," + std::to_string(n) + "]";
        Check(Comparator("cmp", {type, "s32"}, direction),
              "  x = " + std::string(type) + d + " parameter(0)\n  i = s32" + d + " iota(), iota_dimension=1\n"
              "  ROOT s = (" + type + d + ", s32" + d + ") sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp\n",
              n);
      }
    }
  }
}

// The comparator's parameters swapped (descending by LT), the key as the
// second operand, and a keys-only sort along the outer dimension.
TEST_F(SortE2ETest, RadixSortComparatorForms) {
  const std::string swapped =
      "swapped {\n  p0 = s32[] parameter(0)\n  p1 = s32[] parameter(1)\n  p2 = f32[] parameter(2)\n"
      "  p3 = f32[] parameter(3)\n  ROOT c = pred[] compare(p1, p0), direction=LT\n}\n\n";
  Check(swapped, "  k = s32[4,700] parameter(0)\n  v = f32[4,700] parameter(1)\n"
                 "  ROOT s = (s32[4,700], f32[4,700]) sort(k, v), dimensions={1}, is_stable=true, to_apply=swapped\n");
  const std::string second =
      "second {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n  p2 = s16[] parameter(2)\n"
      "  p3 = s16[] parameter(3)\n  ROOT c = pred[] compare(p2, p3), direction=GT\n}\n\n";
  Check(second, "  v = f32[5,300] parameter(0)\n  k = s16[5,300] parameter(1)\n"
                "  ROOT s = (f32[5,300], s16[5,300]) sort(v, k), dimensions={1}, is_stable=true, to_apply=second\n");
  Check(Comparator("lt", {"u32"}, "LT"),
        "  x = u32[600,3] parameter(0)\n  ROOT r = u32[600,3] sort(x), dimensions={0}, to_apply=lt\n");
}

// JAX's comparator (XLA's "numpy order"): -0 and +0 equal, every NaN equal
// and last; argsort with the positions riding along, in f32, bf16 and f16
// (whose NaNs the kernels tell from infinities by their own exponent width).
TEST_F(SortE2ETest, RadixSortJaxNumpyOrderWithNaNAndSignedZeros) {
  for (const char* type : {"f32", "bf16", "f16"}) {
    for (int n : {100, 5000}) {
      SCOPED_TRACE(std::string(type) + " " + std::to_string(n));
      std::string t = type, d = "[" + std::to_string(n) + "]";
      std::string comparator = "lt {\n  a = " + t + "[] parameter(0)\n  b = " + t +
                               "[] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n"
                               "  nan = " + t + "[] constant(nan)\n  zero = " + t + "[] constant(0)\n";
      for (const char* v : {"a", "b"}) {
        std::string x = v;
        comparator += "  ne." + x + " = pred[] compare(" + x + ", " + x + "), direction=NE\n  eq." + x +
                      " = pred[] compare(" + x + ", zero), direction=EQ\n  z." + x + " = " + t + "[] select(eq." + x +
                      ", zero, " + x + ")\n  c." + x + " = " + t + "[] select(ne." + x + ", nan, z." + x + ")\n";
      }
      comparator += "  ROOT lt = pred[] compare(c.a, c.b), direction=LT, type=TOTALORDER\n}\n\n";
      CheckWithArgs(comparator,
                    "  x = " + t + d + " parameter(0)\n  i = s32" + d + " iota(), iota_dimension=0\n"
                    "  ROOT r = (" + t + d + ", s32" + d + ") sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n",
                    {Literal::Vector(*ElementTypeFromName(t), SpecialFloats(n))});
    }
  }
}

// TOTALORDER descending and the default (partial-order) compare, under
// which -0 == +0 keep their order; f64 and bf16 keys with special values.
TEST_F(SortE2ETest, RadixSortFloatOrdersDescending) {
  CheckWithArgs(Comparator("gt", {"f64", "s32"}, "GT", "TOTALORDER"),
                "  x = f64[1000] parameter(0)\n  i = s32[1000] iota(), iota_dimension=0\n"
                "  ROOT r = (f64[1000], s32[1000]) sort(x, i), dimensions={0}, is_stable=true, to_apply=gt\n",
                {Literal::Vector(ElementType::kF64, SpecialFloats(1000))});
  std::vector<double> zeros;
  for (int i = 0; i < 600; ++i) zeros.push_back(i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0.0 : std::cos(i) * 2);
  CheckWithArgs(Comparator("lt", {"bf16", "s32"}, "LT"),
                "  x = bf16[600] parameter(0)\n  i = s32[600] iota(), iota_dimension=0\n"
                "  ROOT r = (bf16[600], s32[600]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n",
                {Literal::Vector(ElementType::kBF16, zeros)});
}

// A full sort of 300000 keys (74 tiles of the multi-pass kernels) and
// rows of exactly one large tile.
TEST_F(SortE2ETest, RadixSortLongRows) {
  Check(Comparator("lt", {"f32", "s32"}, "LT", "TOTALORDER"),
        "  x = f32[300000] parameter(0)\n  i = s32[300000] iota(), iota_dimension=0\n"
        "  ROOT r = (f32[300000], s32[300000]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n");
  Check(Comparator("gt", {"s32"}, "GT"),
        "  x = s32[16,4096] parameter(0)\n  ROOT r = s32[16,4096] sort(x), dimensions={1}, to_apply=gt\n");
}

// Which compilations run a sort as the radix sort thunk: any that targets
// CUDA, with the kernels built (nvcc at build time), unless radix_sort is
// off (the host then runs the thunk with HostRadixSort); one for the host
// alone keeps the kernel-IR sort.
TEST(RadixSortCompile, CudaTargetsEmitRadixSortThunks) {
  auto module = hlo::ParseHloModule("HloModule m\n\n" + Comparator("lt", {"s32"}, "LT") +
                                    "ENTRY e {\n  x = s32[4,100] parameter(0)\n"
                                    "  ROOT s = s32[4,100] sort(x), dimensions={1}, to_apply=lt\n}\n");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto radix_sorts = [&](bool host, bool cuda, bool radix_sort) {
    compiler::CompileOptions options;
    options.host = host;
    options.cuda = cuda;
    options.radix_sort = radix_sort;
    StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
    EXPECT_TRUE(artifact.ok()) << artifact.status().message();
    int n = 0;
    if (artifact.ok())
      thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int) {
        n += t.kind() == thunks::ThunkKind::kRadixSort;
      });
    return n;
  };
  EXPECT_EQ(radix_sorts(false, true, true), kernels::RadixSortKernelsAvailable() ? 1 : 0);
  EXPECT_EQ(radix_sorts(true, true, true), kernels::RadixSortKernelsAvailable() ? 1 : 0);
  EXPECT_EQ(radix_sorts(true, false, true), 0);
  EXPECT_EQ(radix_sorts(false, true, false), 0);
}

}  // namespace
}  // namespace kiln::testing
