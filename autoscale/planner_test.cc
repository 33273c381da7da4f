#include "autoscale/planner.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace surge::autoscale {
namespace {

// Fixture autoscale/testdata/bench_basic.json, by concurrency:
//   c   req/s  TTFT p95  E2E p95
//   1   2.0    0.10 s    0.6 s   (TTFT median 0.08 s, E2E median 0.5 s)
//   2   3.8    0.15 s    0.7 s
//   4   7.0    0.30 s    0.9 s
//   8   10.0   0.70 s    1.5 s
std::vector<BenchPoint> Basic() {
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_basic.json");
  EXPECT_TRUE(points.ok()) << points.status().ToString();
  return points.ok() ? *points : std::vector<BenchPoint>{};
}

PlanRequest Request(double qps, double slo_ttft) {
  PlanRequest r;
  r.target_qps = qps;
  r.slo_ttft_p95_s = slo_ttft;
  return r;
}

TEST(PlannerTest, ReadsTheBenchReportSortedByConcurrency) {
  std::vector<BenchPoint> points = Basic();
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].label, "c=1");
  EXPECT_DOUBLE_EQ(points[0].ttft_median_s, 0.08);
  EXPECT_DOUBLE_EQ(points[3].concurrency, 8);
  EXPECT_DOUBLE_EQ(points[3].ttft_p95_s, 0.7);
  EXPECT_FALSE(points[3].concurrency_estimated);
}

TEST(PlannerTest, InterpolatesToWhereTtftReachesTheSlo) {
  // c=4 meets 0.5 s, c=8 does not: (0.5 - 0.3) / (0.7 - 0.3) = half way.
  StatusOr<InstanceCapacity> c = MaxInstanceThroughput(Basic(), 0.5, std::nullopt);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NEAR(c->qps, 8.5, 1e-9);
  EXPECT_NEAR(c->concurrency, 6, 1e-9);
  EXPECT_NEAR(c->e2e_p95_s, 1.2, 1e-9);
  EXPECT_EQ(c->source, "interpolated between c=4 and c=8");
  // An SLO above every point: the heaviest measured point.
  StatusOr<InstanceCapacity> loose = MaxInstanceThroughput(Basic(), 5, std::nullopt);
  EXPECT_DOUBLE_EQ(loose->qps, 10);
  EXPECT_EQ(loose->source, "measured at c=8");
}

TEST(PlannerTest, TheTighterOfTtftAndE2eDecides) {
  // E2E 1.0 s: (1.0 - 0.9) / (1.5 - 0.9) = 1/6 of the way, before TTFT's half.
  StatusOr<InstanceCapacity> c = MaxInstanceThroughput(Basic(), 0.5, 1.0);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->qps, 7.5, 1e-12);
  EXPECT_NEAR(c->concurrency, 4 + 4.0 / 6, 1e-12);
}

TEST(PlannerTest, FlatPlanWithPrices) {
  PlanRequest r = Request(100, 0.5);
  r.usd_per_hour = {{"spot", 0.9}, {"on-demand", 3.2}};
  StatusOr<PlanResult> plan = Plan(Basic(), r);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->scenarios.size(), 1u);
  const PlanScenario& s = plan->scenarios[0];
  EXPECT_EQ(s.peak_instances, 12);  // ceil(100 / 8.5) = ceil(11.76)
  EXPECT_DOUBLE_EQ(s.instance_hours_per_day, 288);
  EXPECT_NEAR(s.usd_per_month[0].second, 12 * 730 * 0.9, 1e-6);   // 7884
  EXPECT_NEAR(s.usd_per_month[1].second, 12 * 730 * 3.2, 1e-6);   // 28032
  std::string text = FormatPlan(*plan, r);
  EXPECT_NE(text.find("instances at peak      12"), std::string::npos) << text;
  EXPECT_NE(text.find("$7884.00"), std::string::npos) << text;
  EXPECT_NE(text.find("concurrency per instance: 6"), std::string::npos) << text;
  nlohmann::json json = nlohmann::json::parse(PlanJson(*plan, r));
  EXPECT_EQ(json["scenarios"][0]["peak_instances"], 12);
  EXPECT_NEAR(json["capacity"]["qps"].get<double>(), 8.5, 1e-9);
}

TEST(PlannerTest, CachesReduceTheEngineLoad) {
  PlanRequest r = Request(100, 0.5);
  r.cache_hit_rate = 0.2;
  r.prefix_hit_rate = 0.5;
  StatusOr<PlanResult> plan = Plan(Basic(), r);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->scenarios.size(), 2u);
  EXPECT_EQ(plan->scenarios[0].peak_instances, 12);
  const PlanScenario& cached = plan->scenarios[1];
  EXPECT_DOUBLE_EQ(plan->prefill_share, 0.16);                // 0.08 s / 0.5 s at c=1
  EXPECT_NEAR(cached.throughput_factor, 1 / (1 - 0.08), 1e-12);  // share 0.16 * hit rate 0.5
  EXPECT_DOUBLE_EQ(cached.peak_engine_qps, 80);
  EXPECT_EQ(cached.peak_instances, 9);  // ceil(80 / (8.5 / 0.92)) = ceil(8.66)
  r.prefix_hit_rate = 0;
  EXPECT_EQ(Plan(Basic(), r)->scenarios[1].peak_instances, 10);  // ceil(80 / 8.5) = ceil(9.41)
}

TEST(PlannerTest, HourlyProfile) {
  PlanRequest r = Request(100, 0.5);
  r.usd_per_hour = {{"spot", 0.9}};
  StatusOr<std::vector<double>> weights = LoadHourlyProfile("autoscale/testdata/profile_half_day.json");
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  r.hourly_weights = *weights;  // 12 hours at the peak, 12 at half
  StatusOr<PlanResult> plan = Plan(Basic(), r);
  ASSERT_TRUE(plan.ok());
  const PlanScenario& s = plan->scenarios[0];
  ASSERT_EQ(s.hours.size(), 24u);
  EXPECT_EQ(s.hours[0].num_instances, 12);
  EXPECT_EQ(s.hours[23].num_instances, 6);  // ceil(50 / 8.5) = ceil(5.88)
  EXPECT_DOUBLE_EQ(s.instance_hours_per_day, 12 * 12 + 12 * 6);
  EXPECT_NEAR(s.usd_per_month[0].second, 216.0 / 24 * 730 * 0.9, 1e-6);  // 5913
  // The shipped example (the seed's day: 10 QPS at night, 500 at the peak) loads.
  StatusOr<std::vector<double>> diurnal = LoadHourlyProfile("autoscale/examples/diurnal_profile.json");
  ASSERT_TRUE(diurnal.ok()) << diurnal.status().ToString();
  EXPECT_DOUBLE_EQ((*diurnal)[0] * 500, 10);
  EXPECT_FALSE(ParseHourlyProfile("[1, 2]").ok());
  EXPECT_FALSE(ParseHourlyProfile("[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]").ok());
}

TEST(PlannerTest, FailedRequestsDisqualifyAPoint) {
  // bench_failed.json: c=4 had 3 failed requests; c=2 is the best, no interpolation past a failure.
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_failed.json");
  ASSERT_TRUE(points.ok());
  StatusOr<InstanceCapacity> c = MaxInstanceThroughput(*points, 0.5, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->qps, 3.8);
  EXPECT_EQ(c->source, "measured at c=2");
}

TEST(PlannerTest, RequestRateRoundsEstimateConcurrency) {
  // rate=4: 4 req/s, mean E2E 0.9 s -> 3.6 in flight; rate=8: 7.5 req/s, 1.8 s -> 13.5.
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_rate.json");
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  EXPECT_TRUE((*points)[0].concurrency_estimated);
  EXPECT_DOUBLE_EQ((*points)[0].concurrency, 3.6);
  StatusOr<InstanceCapacity> c = MaxInstanceThroughput(*points, 0.5, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->qps, 4 + 3.5 * 3 / 7, 1e-12);  // TTFT 0.2 -> 0.9: 3/7 of the way
  EXPECT_NEAR(c->concurrency, 3.6 + 9.9 * 3 / 7, 1e-12);
}

TEST(PlannerTest, ClearErrors) {
  StatusOr<InstanceCapacity> none = MaxInstanceThroughput(Basic(), 0.05, std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "no measured point meets the SLO (P95 TTFT <= 0.05 s): the lowest P95 TTFT measured is 0.1 s (P95 E2E "
            "0.6 s, 0 failed) at c=1; measure lighter loads or relax the SLO");
  EXPECT_EQ(LoadBenchReport("autoscale/testdata/bench_missing_field.json").status().message(),
            "autoscale/testdata/bench_missing_field.json: bench report: rounds[2].ttft_ms.p95: missing");
  EXPECT_EQ(LoadBenchReport("autoscale/testdata/bench_compare.json").status().message(),
            "autoscale/testdata/bench_compare.json: bench report: compares 2 servers; plan needs the rounds of one "
            "(rerun surge bench against one URL)");
  EXPECT_EQ(LoadBenchReport("/nonexistent.json").status().message(), "/nonexistent.json: cannot open bench report");
  EXPECT_EQ(ParseBenchReport("{]").status().message(),
            "bench report: not valid JSON (expected `surge bench --json` output)");
  EXPECT_EQ(ParseBenchReport(R"({"rounds": []})").status().message(),
            "bench report: not a `surge bench --json` report (no \"tool\": \"surge bench\")");
  EXPECT_EQ(ParseBenchReport(R"({"tool": "surge bench", "rounds": []})").status().message(), "bench report: no rounds");
  EXPECT_EQ(ParseBenchReport(R"({"tool": "surge bench", "rounds": [{"completed": 3, "failed": 0,
             "request_throughput": "fast"}]})").status().message(),
            "bench report: rounds[0].request_throughput: not a number");
  EXPECT_EQ(Plan(Basic(), Request(0, 0.5)).status().message(), "--target-qps must be > 0");
  PlanRequest bad_rate = Request(10, 0.5);
  bad_rate.cache_hit_rate = 1;
  EXPECT_EQ(Plan(Basic(), bad_rate).status().message(), "--cache-hit-rate must be in [0, 1)");
}

}  // namespace
}  // namespace surge::autoscale
