// The host convolution (im2col + cblas) on small cases computed by hand:
// each window option on its own (stride, padding, negative padding, lhs and
// rhs dilation, reversal), both group counts, feature-last and feature-major
// dimension numbers and a non-row-major layout, every supported element
// type, im2col tiling, and the errors for what it does not take.
#include "kernels_lib/host_convolution.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/float_formats.h"

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;
using ET = ElementType;

// b01f_01io->b01f (NHWC / HWIO) for `spatial` spatial dimensions.
th::ConvolutionDimensions FeatureLast(int64_t spatial) {
  th::ConvolutionDimensions d;
  d.input_batch = d.output_batch = 0;
  d.input_feature = d.output_feature = spatial + 1;
  d.kernel_input_feature = spatial;
  d.kernel_output_feature = spatial + 1;
  for (int64_t i = 0; i < spatial; ++i) {
    d.input_spatial.push_back(i + 1);
    d.output_spatial.push_back(i + 1);
    d.kernel_spatial.push_back(i);
  }
  return d;
}

// bf01_oi01->bf01 (NCHW / OIHW).
th::ConvolutionDimensions FeatureMajor(int64_t spatial) {
  th::ConvolutionDimensions d;
  d.input_batch = d.output_batch = d.kernel_output_feature = 0;
  d.input_feature = d.output_feature = d.kernel_input_feature = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    d.input_spatial.push_back(i + 2);
    d.output_spatial.push_back(i + 2);
    d.kernel_spatial.push_back(i + 2);
  }
  return d;
}

th::WindowDimension Win(int64_t size, int64_t stride = 1, int64_t low = 0, int64_t high = 0, int64_t lhs = 1,
                        int64_t rhs = 1, bool reversal = false) {
  return {size, stride, low, high, lhs, rhs, reversal};
}

th::ConvolutionThunk Conv(Shape in, Shape kernel, Shape out, th::ConvolutionDimensions d,
                          std::vector<th::WindowDimension> window, int64_t fgc = 1, int64_t bgc = 1) {
  th::ConvolutionThunk c;
  c.operand_shapes = {std::move(in), std::move(kernel)};
  c.operands.resize(2);
  c.result_shape = std::move(out);
  c.dimensions = std::move(d);
  c.window = std::move(window);
  c.feature_group_count = fgc;
  c.batch_group_count = bgc;
  return c;
}

// Runs an f32 convolution and returns the output.
std::vector<float> RunF32(const th::ConvolutionThunk& c, const std::vector<float>& in, const std::vector<float>& k,
                       int64_t budget = kIm2colBudgetBytes) {
  std::vector<float> out(static_cast<size_t>(c.result_shape.ElementCount()), -999.0f);
  Status s = HostConvolution(c, in.data(), k.data(), out.data(), budget);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// 1x3x3x1 input 1..9, 2x2x1x1 kernel [[1,2],[3,4]]: out[i][j] =
// in[i][j] + 2 in[i][j+1] + 3 in[i+1][j] + 4 in[i+1][j+1].
const std::vector<float> kIn3x3{1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<float> kK2x2{1, 2, 3, 4};

TEST(HostConvolutionTest, ValidWindow2D) {
  auto c = Conv(Shape(ET::kF32, {1, 3, 3, 1}), Shape(ET::kF32, {2, 2, 1, 1}), Shape(ET::kF32, {1, 2, 2, 1}),
                FeatureLast(2), {Win(2), Win(2)});
  EXPECT_EQ(RunF32(c, kIn3x3, kK2x2), (std::vector<float>{37, 47, 67, 77}));
}

TEST(HostConvolutionTest, StrideAndPadding) {
  // Padded 5x5 (one zero ring), stride 2: output rows/columns read input
  // rows/columns {-1,0} and {1,2}.
  auto c = Conv(Shape(ET::kF32, {1, 3, 3, 1}), Shape(ET::kF32, {2, 2, 1, 1}), Shape(ET::kF32, {1, 2, 2, 1}),
                FeatureLast(2), {Win(2, 2, 1, 1), Win(2, 2, 1, 1)});
  EXPECT_EQ(RunF32(c, kIn3x3, kK2x2), (std::vector<float>{4, 18, 36, 77}));
  // One im2col row per tile gives the same result.
  EXPECT_EQ(RunF32(c, kIn3x3, kK2x2, 1), (std::vector<float>{4, 18, 36, 77}));
}

// 1D cases: b0f_0io->b0f, one feature, kernel [1, 10].
th::ConvolutionThunk Conv1D(int64_t in, int64_t out, th::WindowDimension w) {
  return Conv(Shape(ET::kF32, {1, in, 1}), Shape(ET::kF32, {2, 1, 1}), Shape(ET::kF32, {1, out, 1}),
              FeatureLast(1), {w});
}

TEST(HostConvolutionTest, NegativePadding) {
  // pad_low -1 drops input 0: windows {1,2} and {2,3}.
  EXPECT_EQ(RunF32(Conv1D(4, 2, Win(2, 1, -1, 0)), {1, 2, 3, 4}, {1, 10}), (std::vector<float>{32, 43}));
}

TEST(HostConvolutionTest, LhsDilation) {
  // Base [1,0,2,0,3].
  EXPECT_EQ(RunF32(Conv1D(3, 4, Win(2, 1, 0, 0, 2, 1)), {1, 2, 3}, {1, 10}), (std::vector<float>{1, 20, 2, 30}));
}

TEST(HostConvolutionTest, RhsDilation) {
  // Taps at x and x + 2.
  EXPECT_EQ(RunF32(Conv1D(5, 3, Win(2, 1, 0, 0, 1, 2)), {1, 2, 3, 4, 5}, {1, 10}),
            (std::vector<float>{31, 42, 53}));
}

TEST(HostConvolutionTest, Reversal) {
  // The kernel read backwards: in[x] * 10 + in[x+1] * 1.
  EXPECT_EQ(RunF32(Conv1D(3, 2, Win(2, 1, 0, 0, 1, 1, true)), {1, 2, 3}, {1, 10}), (std::vector<float>{12, 23}));
}

TEST(HostConvolutionTest, FeatureGroups) {
  // Depthwise: two positions with channels (1,2) and (3,4); output feature f reads
  // channel f with taps k[0][f], k[1][f] = (1,10), (100,1000).
  auto c = Conv(Shape(ET::kF32, {1, 2, 2}), Shape(ET::kF32, {2, 1, 2}), Shape(ET::kF32, {1, 1, 2}),
                FeatureLast(1), {Win(2)}, /*fgc=*/2);
  EXPECT_EQ(RunF32(c, {1, 2, 3, 4}, {1, 10, 100, 1000}), (std::vector<float>{1 + 300, 20 + 4000}));
}

// Depthwise (the direct path): NCHW, two channels [1..5] and [10..50],
// kernel taps (1, 2) per channel: the contiguous AXPY with padding, a
// stride, lhs dilation and reversal.
TEST(HostConvolutionTest, DepthwiseWindows) {
  const std::vector<float> in{1, 2, 3, 4, 5, 10, 20, 30, 40, 50};
  const std::vector<float> k{1, 2, 1, 2};
  auto conv = [](int64_t out, th::WindowDimension w) {
    return Conv(Shape(ET::kF32, {1, 2, 5}), Shape(ET::kF32, {2, 1, 2}), Shape(ET::kF32, {1, 2, out}),
                FeatureMajor(1), {w}, /*fgc=*/2);
  };
  // Padded [0,1,2,3,4,5,0]: x + 2y over neighbours.
  EXPECT_EQ(RunF32(conv(6, Win(2, 1, 1, 1)), in, k),
            (std::vector<float>{2, 5, 8, 11, 14, 5, 20, 50, 80, 110, 140, 50}));
  // Stride 2: windows {1,2} and {3,4}.
  EXPECT_EQ(RunF32(conv(2, Win(2, 2)), in, k), (std::vector<float>{5, 11, 50, 110}));
  // lhs dilation 2: base [1,0,2,0,3,0,4,0,5].
  EXPECT_EQ(RunF32(conv(8, Win(2, 1, 0, 0, 2)), in, k),
            (std::vector<float>{1, 4, 2, 6, 3, 8, 4, 10, 10, 40, 20, 60, 30, 80, 40, 100}));
  // Reversal: 2x + y.
  EXPECT_EQ(RunF32(conv(4, Win(2, 1, 0, 0, 1, 1, true)), in, k),
            (std::vector<float>{4, 7, 10, 13, 40, 70, 100, 130}));
}

TEST(HostConvolutionTest, BatchGroups) {
  // Batches [1,2] and [3,4]; output feature f reads batch f with kernel
  // column f: (1,100) and (10,1000) by tap.
  auto c = Conv(Shape(ET::kF32, {2, 2, 1}), Shape(ET::kF32, {2, 1, 2}), Shape(ET::kF32, {1, 1, 2}),
                FeatureLast(1), {Win(2)}, 1, /*bgc=*/2);
  EXPECT_EQ(RunF32(c, {1, 2, 3, 4}, {1, 10, 100, 1000}), (std::vector<float>{1 + 200, 30 + 4000}));
}

// Two channels over a 2x2 image, a 2x2 window, two output features: f0
// sums channel 0 (1+2+3+4 = 10), f1 weighs channel 1 by 1..4
// (5 + 12 + 21 + 32 = 70).
TEST(HostConvolutionTest, DimensionNumbersAndLayouts) {
  const std::vector<float> want{10, 70};
  // NHWC / HWIO.
  std::vector<float> nhwc{1, 5, 2, 6, 3, 7, 4, 8};
  std::vector<float> hwio{1, 0, 0, 1, 1, 0, 0, 2, 1, 0, 0, 3, 1, 0, 0, 4};
  auto c = Conv(Shape(ET::kF32, {1, 2, 2, 2}), Shape(ET::kF32, {2, 2, 2, 2}), Shape(ET::kF32, {1, 1, 1, 2}),
                FeatureLast(2), {Win(2), Win(2)});
  EXPECT_EQ(RunF32(c, nhwc, hwio), want);
  // NCHW / OIHW.
  std::vector<float> nchw{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> oihw{1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  c = Conv(Shape(ET::kF32, {1, 2, 2, 2}), Shape(ET::kF32, {2, 2, 2, 2}), Shape(ET::kF32, {1, 2, 1, 1}),
           FeatureMajor(2), {Win(2), Win(2)});
  EXPECT_EQ(RunF32(c, nchw, oihw), want);
  // The NHWC-labelled input stored channel-major ({2,1,0,3}): the bytes of
  // the NCHW case.
  Shape in(ET::kF32, {1, 2, 2, 2});
  Layout layout;
  layout.minor_to_major = {2, 1, 3, 0};
  in.set_layout(layout);
  c = Conv(in, Shape(ET::kF32, {2, 2, 2, 2}), Shape(ET::kF32, {1, 1, 1, 2}), FeatureLast(2), {Win(2), Win(2)});
  EXPECT_EQ(RunF32(c, nchw, hwio), want);
}

// ValidWindow2D's output stored H-minor ({1,2,3,0}): neither feature-last
// nor feature-major dense, so the result goes through the scatter.
TEST(HostConvolutionTest, ScatteredOutputLayout) {
  Shape out(ET::kF32, {1, 2, 2, 1});
  Layout layout;
  layout.minor_to_major = {1, 2, 3, 0};
  out.set_layout(layout);
  auto c = Conv(Shape(ET::kF32, {1, 3, 3, 1}), Shape(ET::kF32, {2, 2, 1, 1}), out, FeatureLast(2), {Win(2), Win(2)});
  EXPECT_EQ(RunF32(c, kIn3x3, kK2x2), (std::vector<float>{37, 67, 47, 77}));
}

// NCHW with two batches (the second 10x the first) and two output features
// (the kernel and its negation); tiles of 1, 3 and all rows, so tiles end
// inside a batch and at its end.
TEST(HostConvolutionTest, FeatureMajorBatchesAndTiles) {
  std::vector<float> in = kIn3x3;
  for (float v : kIn3x3) in.push_back(10 * v);
  std::vector<float> k = kK2x2;
  for (float v : kK2x2) k.push_back(-v);
  auto c = Conv(Shape(ET::kF32, {2, 1, 3, 3}), Shape(ET::kF32, {2, 1, 2, 2}), Shape(ET::kF32, {2, 2, 2, 2}),
                FeatureMajor(2), {Win(2), Win(2)});
  const std::vector<float> want{37,   47,   67,   77,   -37,  -47,  -67,  -77,
                                370,  470,  670,  770,  -370, -470, -670, -770};
  for (int64_t rows : {1, 3, 100}) {
    SCOPED_TRACE(rows);
    EXPECT_EQ(RunF32(c, in, k, rows * 4 * sizeof(float)), want);
  }
}

TEST(HostConvolutionTest, F64) {
  auto c = Conv(Shape(ET::kF64, {1, 3, 3, 1}), Shape(ET::kF64, {2, 2, 1, 1}), Shape(ET::kF64, {1, 2, 2, 1}),
                FeatureLast(2), {Win(2), Win(2)});
  std::vector<double> in(kIn3x3.begin(), kIn3x3.end()), k(kK2x2.begin(), kK2x2.end()), out(4);
  ASSERT_TRUE(HostConvolution(c, in.data(), k.data(), out.data()).ok());
  EXPECT_EQ(out, (std::vector<double>{37, 47, 67, 77}));
}

// f16 and bf16: small integers are exact; 0.1 * 3 checks the one rounding
// of the f32 sum to the narrow type.
TEST(HostConvolutionTest, NarrowFloats) {
  for (ET t : {ET::kF16, ET::kBF16}) {
    SCOPED_TRACE(ElementTypeName(t));
    auto c = Conv(Shape(t, {1, 3, 3, 1}), Shape(t, {2, 2, 1, 1}), Shape(t, {1, 2, 2, 1}), FeatureLast(2),
                  {Win(2), Win(2)});
    std::vector<uint16_t> in, k, out(4);
    for (float v : kIn3x3) in.push_back(static_cast<uint16_t>(EncodeNarrowFloat(t, v)));
    for (float v : kK2x2) k.push_back(static_cast<uint16_t>(EncodeNarrowFloat(t, v)));
    ASSERT_TRUE(HostConvolution(c, in.data(), k.data(), out.data()).ok());
    std::vector<double> got;
    for (uint16_t bits : out) got.push_back(DecodeNarrowFloat(t, bits));
    EXPECT_EQ(got, (std::vector<double>{37, 47, 67, 77}));

    auto c1 = Conv(Shape(t, {1, 3, 1}), Shape(t, {3, 1, 1}), Shape(t, {1, 1, 1}), FeatureLast(1), {Win(3)});
    uint16_t tenth = static_cast<uint16_t>(EncodeNarrowFloat(t, 0.1));
    uint16_t one = static_cast<uint16_t>(EncodeNarrowFloat(t, 1.0));
    std::vector<uint16_t> x{tenth, tenth, tenth}, w{one, one, one}, y(1);
    ASSERT_TRUE(HostConvolution(c1, x.data(), w.data(), y.data()).ok());
    double tenth_value = DecodeNarrowFloat(t, tenth);
    EXPECT_EQ(y[0], EncodeNarrowFloat(t, static_cast<float>(3 * tenth_value)));

    // Exact ties of the f32 sum round to even: 1 + e/2 -> 1 and
    // 1 + 3e/2 -> 1 + 2e, e being the type's ulp at 1.
    double ulp = t == ET::kF16 ? 0x1p-10 : 0x1p-7;
    auto c2 = Conv(Shape(t, {1, 2, 1}), Shape(t, {2, 1, 1}), Shape(t, {1, 1, 1}), FeatureLast(1), {Win(2)});
    for (auto [half_ulps, want] : {std::pair{1.0, 1.0}, std::pair{3.0, 1 + 2 * ulp}}) {
      std::vector<uint16_t> p{one, static_cast<uint16_t>(EncodeNarrowFloat(t, half_ulps * ulp / 2))}, q{one, one};
      ASSERT_TRUE(HostConvolution(c2, p.data(), q.data(), y.data()).ok());
      EXPECT_EQ(DecodeNarrowFloat(t, y[0]), want) << half_ulps;
    }
  }
}

TEST(HostConvolutionTest, EmptyContractionGivesZeros) {
  // Zero input features: every output is an empty sum.
  auto c = Conv(Shape(ET::kF32, {1, 2, 0}), Shape(ET::kF32, {1, 0, 3}), Shape(ET::kF32, {1, 2, 3}),
                FeatureLast(1), {Win(1)});
  EXPECT_EQ(RunF32(c, {}, {}), std::vector<float>(6, 0.0f));
}

TEST(HostConvolutionTest, Errors) {
  auto c = Conv(Shape(ET::kS32, {1, 3, 1}), Shape(ET::kS32, {2, 1, 1}), Shape(ET::kS32, {1, 2, 1}),
                FeatureLast(1), {Win(2)});
  int32_t in[3] = {}, k[2] = {}, out[2] = {};
  Status s = HostConvolution(c, in, k, out);
  EXPECT_NE(s.message().find("Unimplemented: host convolution of s32"), std::string::npos) << s.message();

  auto f = Conv1D(3, 2, Win(2));
  f.kind = th::ConvolutionKind::kBackwardInput;
  float fin[3] = {}, fk[2] = {}, fout[2] = {};
  s = HostConvolution(f, fin, fk, fout);
  EXPECT_NE(s.message().find("only forward"), std::string::npos) << s.message();

  auto bad = Conv1D(3, 3, Win(2));  // the window gives 2 outputs
  s = HostConvolution(bad, fin, fk, fout);
  EXPECT_NE(s.message().find("the window gives 2"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::kernels
