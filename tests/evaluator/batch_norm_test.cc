// Tests of the evaluator's batch-norm-training, -inference and -grad on a
// 3x3 input with feature_index=1. Expected values come from numpy:
//   mean = x.mean(0), var = x.var(0), out = (x-mean)/sqrt(var+eps)*scale+offset,
//   gx = scale/sqrt(var+eps)/n * (n*dy - dy.sum(0) - (x-mean)*(dy*(x-mean)).sum(0)/(var+eps)),
//   gs = (dy*(x-mean)).sum(0)/sqrt(var+eps), gb = dy.sum(0).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::MustEvaluateHlo;
using test_support::Values;

constexpr char kOperands[] = R"(
  x = f64[3,3] constant({{1, 2, 0.5}, {3, 6, -1}, {-2, 1, 4}})
  scale = f64[3] constant({1, 2, 0.5})
  offset = f64[3] constant({0, 1, -1})
)";

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "element " << i;
}

const std::vector<double> kMean = {0.6666666666666666, 3.0, 1.1666666666666667};
const std::vector<double> kVar = {4.222222222222222, 4.666666666666667, 4.388888888888889};
const std::vector<double> kOut = {0.15762208124782015, 0.0980247663966054, -1.1547646465068273,
                                  1.103354568734741,   3.705925700810184,  -1.502985101147189,
                                  -1.260976649982561,  -0.8039504672067892, -0.3422502523459837};

TEST(BatchNormTest, TrainingGivesOutputMeanAndPopulationVariance) {
  Literal r = MustEvaluateHlo(std::string("HloModule m\nENTRY e {") + kOperands +
                              "  ROOT t = (f64[3,3], f64[3], f64[3]) batch-norm-training(x, scale, offset), "
                              "epsilon=0.25, feature_index=1\n}");
  ASSERT_EQ(r.elements().size(), 3u);
  ExpectNear(Values(r.element(0)), kOut);
  ExpectNear(Values(r.element(1)), kMean);
  ExpectNear(Values(r.element(2)), kVar);
}

TEST(BatchNormTest, InferenceUsesGivenStatistics) {
  Literal r = MustEvaluateHlo(std::string("HloModule m\nENTRY e {") + kOperands +
                              "  mean = f64[3] constant({0.6666666666666666, 3.0, 1.1666666666666667})\n"
                              "  var = f64[3] constant({4.222222222222222, 4.666666666666667, 4.388888888888889})\n"
                              "  ROOT o = f64[3,3] batch-norm-inference(x, scale, offset, mean, var), "
                              "epsilon=0.25, feature_index=1\n}");
  ExpectNear(Values(r), kOut);
}

TEST(BatchNormTest, GradOfOperandScaleAndOffset) {
  Literal r = MustEvaluateHlo(std::string("HloModule m\nENTRY e {") + kOperands +
                              "  mean = f64[3] constant({0.6666666666666666, 3.0, 1.1666666666666667})\n"
                              "  var = f64[3] constant({4.222222222222222, 4.666666666666667, 4.388888888888889})\n"
                              "  dy = f64[3,3] constant({{1, 0, 2}, {0, 1, -1}, {0.5, -2, 1}})\n"
                              "  ROOT g = (f64[3,3], f64[3], f64[3]) batch-norm-grad(x, scale, mean, var, dy), "
                              "epsilon=0.25, feature_index=1\n}");
  ASSERT_EQ(r.elements().size(), 3u);
  ExpectNear(Values(r.element(0)),
             {0.24818135152995283, 0.7287144542671492, 0.3503056070633578, -0.1541955142641719,
              -0.08153448439352724, -0.2543885956055336, -0.09398583726578094, -0.6471799698736221,
              -0.09591701145782414});
  ExpectNear(Values(r.element(1)), {-0.47286624374346037, 3.156913317611881, 1.702411111575101});
  ExpectNear(Values(r.element(2)), {1.5, -1.0, 2.0});
}

}  // namespace
}  // namespace kiln::hlo
