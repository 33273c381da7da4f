// Each expression kind against values computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "obs/alarms/sample_history.h"

namespace surge::obs {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Exposition Parse(const std::string& text) {
  StatusOr<Exposition> e = ParseExposition(text);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? *e : Exposition{};
}

Expression Expr(ExprKind kind, const std::string& selector, milliseconds window = milliseconds(0)) {
  Expression e;
  e.kind = kind;
  e.selector = *ParseSelector(selector);
  e.window = window;
  return e;
}

TEST(ExpositionTest, ReadsWhatTheRegistryWrites) {
  Exposition e = Parse(
      "# HELP x_total Things\n# TYPE x_total counter\nx_total{a=\"q\\\"\\\\\",b=\"\"} 3\n"
      "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 7 1700000000000\ng -Inf\nn NaN\n\n");
  ASSERT_EQ(e.samples.size(), 4u);
  EXPECT_EQ(e.samples[0].labels.at("a"), "q\"\\");
  EXPECT_EQ(e.samples[0].value, 3);
  EXPECT_EQ(e.samples[1].labels.at("le"), "+Inf");
  EXPECT_TRUE(std::isinf(e.samples[2].value));
  EXPECT_EQ(e.types.at("x_total"), "counter");
  EXPECT_EQ(e.types.at("h"), "histogram");
  EXPECT_FALSE(ParseExposition("x{a=\"b} 1\n").ok());
  EXPECT_FALSE(ParseExposition("x one\n").ok());
}

TEST(ExpressionTest, ValueAggregatesAndGroups) {
  SampleHistory history(seconds(60), {"g"});
  history.Add(0, Parse("g{pool=\"a\",b=\"1\"} 0.5\ng{pool=\"b\",b=\"2\"} 0.7\ng{pool=\"b\",b=\"3\"} 0.1\nother 9\n"));
  Expression e = Expr(ExprKind::kValue, "g");
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 1.3);
  e.aggregate = Aggregate::kMax;
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 0.7);
  e.aggregate = Aggregate::kAvg;
  e.group_by = {"pool"};
  std::map<Labels, double> by_pool = EvaluateExpression(e, history);
  EXPECT_DOUBLE_EQ(by_pool.at({{"pool", "a"}}), 0.5);
  EXPECT_DOUBLE_EQ(by_pool.at({{"pool", "b"}}), 0.4);
  EXPECT_TRUE(EvaluateExpression(Expr(ExprKind::kValue, "g{pool=\"c\"}"), history).empty());
  EXPECT_TRUE(EvaluateExpression(Expr(ExprKind::kValue, "missing"), history).empty());
}

TEST(ExpressionTest, RateHandlesResetsAndWindows) {
  SampleHistory history(seconds(60), {"c_total"});
  history.Add(0, Parse("c_total 10\n"));
  EXPECT_TRUE(EvaluateExpression(Expr(ExprKind::kRate, "c_total", seconds(30)), history).empty());  // one sample
  history.Add(10'000, Parse("c_total 30\n"));
  history.Add(20'000, Parse("c_total 5\n"));  // the process restarted its counter
  history.Add(30'000, Parse("c_total 15\n"));
  // (30-10) + 5 + (15-5) = 35 over 30 s.
  EXPECT_DOUBLE_EQ(EvaluateExpression(Expr(ExprKind::kRate, "c_total", seconds(30)), history).at({}), 35.0 / 30);
  // The last 15 s hold the samples at 20 s and 30 s: 10 over 10 s.
  EXPECT_DOUBLE_EQ(EvaluateExpression(Expr(ExprKind::kRate, "c_total", seconds(15)), history).at({}), 1.0);
}

TEST(ExpressionTest, ASeriesBornInTheWindowStartsFromZero) {
  SampleHistory history(seconds(60), {"r_total"});
  history.Add(0, Parse("r_total{code=\"200\"} 100\n"));
  history.Add(10'000, Parse("r_total{code=\"200\"} 110\nr_total{code=\"500\"} 2\n"));
  Expression e = Expr(ExprKind::kRate, "r_total{code=~\"5..\"}", seconds(60));
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 0.2);
  Expression ratio = Expr(ExprKind::kRatio, "r_total{code=~\"5..\"}", seconds(60));
  ratio.denominator = *ParseSelector("r_total");
  EXPECT_DOUBLE_EQ(EvaluateExpression(ratio, history).at({}), 2.0 / 12);
}

TEST(ExpressionTest, RatioOfNothingIsNoData) {
  SampleHistory history(seconds(60), {"r_total"});
  history.Add(0, Parse("r_total{code=\"200\"} 5\n"));
  history.Add(10'000, Parse("r_total{code=\"200\"} 5\n"));
  Expression ratio = Expr(ExprKind::kRatio, "r_total{code=~\"5..\"}", seconds(60));
  ratio.denominator = *ParseSelector("r_total");
  EXPECT_TRUE(EvaluateExpression(ratio, history).empty());
}

TEST(ExpressionTest, QuantileInterpolatesLikePrometheus) {
  SampleHistory history(seconds(60), {"lat_seconds_bucket"});
  const char* zero =
      "lat_seconds_bucket{le=\"0.1\"} 0\nlat_seconds_bucket{le=\"0.5\"} 0\nlat_seconds_bucket{le=\"1\"} 0\n"
      "lat_seconds_bucket{le=\"+Inf\"} 0\nlat_seconds_sum 0\n";
  history.Add(0, Parse(zero));
  EXPECT_TRUE(EvaluateExpression(Expr(ExprKind::kQuantile, "lat_seconds", seconds(60)), history).empty());
  history.Add(10'000, Parse("lat_seconds_bucket{le=\"0.1\"} 10\nlat_seconds_bucket{le=\"0.5\"} 60\n"
                            "lat_seconds_bucket{le=\"1\"} 90\nlat_seconds_bucket{le=\"+Inf\"} 100\n"));
  Expression e = Expr(ExprKind::kQuantile, "lat_seconds", seconds(60));
  e.quantile = 0.5;  // rank 50 in (0.1, 0.5]: 0.1 + 0.4 * 40/50
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 0.42);
  e.quantile = 0.05;  // rank 5 in the first bucket, from 0
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 0.05);
  e.quantile = 0.95;  // rank 95 in +Inf: the highest finite bound
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 1.0);
  e.quantile = 0.9;  // rank 90 exactly at le=1's count: 0.5 + 0.5 * 30/30
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 1.0);
}

// A bucket bound that is not a number (std::stod threw on the alarm thread) skips its series.
TEST(ExpressionTest, QuantileSkipsBucketsWhoseBoundIsNotANumber) {
  SampleHistory history(seconds(60), {"h_bucket"});
  history.Add(0, Parse("h_bucket{le=\"1\"} 0\nh_bucket{le=\"abc\"} 0\nh_bucket{le=\"1e999\"} 0\nh_bucket{le=\"+Inf\"} 0\n"));
  history.Add(10'000, Parse("h_bucket{le=\"1\"} 4\nh_bucket{le=\"abc\"} 9\nh_bucket{le=\"1e999\"} 9\nh_bucket{le=\"+Inf\"} 8\n"));
  Expression e = Expr(ExprKind::kQuantile, "h", seconds(60));
  e.quantile = 0.25;  // 2 of 8, at or below 1
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 0.5);
}

TEST(ExpressionTest, QuantileSumsSeriesPerGroup) {
  SampleHistory history(seconds(60), {"h_bucket"});
  history.Add(0, Parse("h_bucket{pool=\"a\",le=\"1\"} 0\nh_bucket{pool=\"a\",le=\"+Inf\"} 0\n"
                       "h_bucket{pool=\"b\",le=\"1\"} 0\nh_bucket{pool=\"b\",le=\"+Inf\"} 0\n"));
  history.Add(10'000, Parse("h_bucket{pool=\"a\",le=\"1\"} 4\nh_bucket{pool=\"a\",le=\"+Inf\"} 4\n"
                            "h_bucket{pool=\"b\",le=\"1\"} 0\nh_bucket{pool=\"b\",le=\"+Inf\"} 4\n"));
  Expression e = Expr(ExprKind::kQuantile, "h", seconds(60));
  e.quantile = 0.5;  // together: 4 of 8 at or below 1 -> rank 4 at le=1: 0 + 1 * 4/4
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 1.0);
  e.quantile = 0.25;
  EXPECT_DOUBLE_EQ(EvaluateExpression(e, history).at({}), 0.5);
  e.group_by = {"pool"};
  std::map<Labels, double> by_pool = EvaluateExpression(e, history);
  EXPECT_DOUBLE_EQ(by_pool.at({{"pool", "a"}}), 0.25);
  EXPECT_DOUBLE_EQ(by_pool.at({{"pool", "b"}}), 1.0);  // all in +Inf
}

TEST(SampleHistoryTest, KeepsOnlyWhatTheWindowNeeds) {
  SampleHistory history(seconds(30), {"c"});
  for (int i = 0; i < 100; ++i) history.Add(i * 10'000, Parse("c " + std::to_string(i) + "\nunwanted 1\n"));
  EXPECT_LE(history.num_snapshots(), 5u);
  EXPECT_EQ(history.Latest()->series.count("unwanted"), 0u);
}

}  // namespace
}  // namespace surge::obs
