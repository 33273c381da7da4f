// Aggregation of request records: definitions of TTFT, TPOT, ITL, throughput and goodput.
#include "bench/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace surge::bench {
namespace {

RequestRecord Ok(double ttft_s, double latency_s, int64_t output_tokens, std::vector<double> itl_s) {
  RequestRecord r;
  r.ttft_s = ttft_s;
  r.latency_s = latency_s;
  r.output_tokens = output_tokens;
  r.prompt_tokens = 10;
  r.itl_s = std::move(itl_s);
  r.usage_reported = true;
  return r;
}

RequestRecord Failed(std::string kind, std::string message) {
  RequestRecord r;
  r.error_kind = std::move(kind);
  r.error_message = std::move(message);
  return r;
}

TEST(MetricsTest, SummarizeMatchesNumpyPercentiles) {
  Distribution d = Summarize({4, 1, 3, 2});
  EXPECT_EQ(d.count, 4);
  EXPECT_DOUBLE_EQ(d.mean, 2.5);
  EXPECT_DOUBLE_EQ(d.median, 2.5);
  EXPECT_DOUBLE_EQ(d.p90, 3.7);
  EXPECT_DOUBLE_EQ(d.max, 4);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_TRUE(std::isnan(Summarize({}).mean));
  std::vector<double> sketch = QuantileSketch({5, 1, 3});
  ASSERT_EQ(sketch.size(), static_cast<size_t>(kNumQuantiles));
  EXPECT_EQ(sketch.front(), 1);
  EXPECT_EQ(sketch[kNumQuantiles / 2], 3);
  EXPECT_EQ(sketch.back(), 5);
}

TEST(MetricsTest, AggregateOneRound) {
  RoundRun run;
  run.wall_s = 2.0;
  run.client_cpu_s = 0.004;
  run.records = {Ok(0.1, 1.1, 11, {0.1, 0.1}), Ok(0.3, 0.7, 5, {0.1}), Ok(0.2, 0.2, 1, {}),
                 Failed("http_500", "boom"), Failed("http_500", "boom again"), Failed("truncated", "cut")};
  SloConfig slo;
  slo.ttft_ms = 250;
  slo.tpot_ms = 90;
  RoundMetrics m = Aggregate(std::span<const RoundRun>(&run, 1), slo);
  EXPECT_EQ(m.num_requests, 6);
  EXPECT_EQ(m.num_completed, 3);
  EXPECT_EQ(m.num_failed, 3);
  EXPECT_EQ(m.errors.at("http_500"), 2);
  EXPECT_EQ(m.errors.at("truncated"), 1);
  EXPECT_EQ(m.error_examples.at("http_500"), "boom");
  EXPECT_DOUBLE_EQ(m.request_throughput, 1.5);
  EXPECT_DOUBLE_EQ(m.output_token_throughput, 17 / 2.0);
  EXPECT_DOUBLE_EQ(m.input_token_throughput, 30 / 2.0);
  EXPECT_DOUBLE_EQ(m.ttft_ms.mean, 200);
  // TPOT: (1.1 - 0.1) / 10 = 100 ms and (0.7 - 0.3) / 4 = 100 ms; one-token requests have none.
  EXPECT_EQ(m.tpot_ms.count, 2);
  EXPECT_NEAR(m.tpot_ms.mean, 100, 1e-9);
  EXPECT_EQ(m.itl_ms.count, 3);
  EXPECT_NEAR(m.itl_ms.mean, 100, 1e-9);
  EXPECT_NEAR(m.e2e_ms.max, 1100, 1e-9);
  // Goodput: the TPOT objective (90 ms) fails the first two; the third meets TTFT and has no TPOT.
  EXPECT_EQ(m.num_good, 1);
  EXPECT_DOUBLE_EQ(*m.goodput, 0.5);
  EXPECT_NEAR(m.client_cpu_us_per_request, 4000.0 / 6, 1e-6);
  EXPECT_FALSE(Aggregate(std::span<const RoundRun>(&run, 1), SloConfig{}).goodput.has_value());
}

TEST(MetricsTest, RepeatsMergeOverTheirSummedWallTime) {
  std::vector<RoundRun> runs(2);
  runs[0].wall_s = 1;
  runs[0].records = {Ok(0.1, 0.5, 4, {})};
  runs[1].wall_s = 3;
  runs[1].records = {Ok(0.3, 0.5, 4, {}), Ok(0.2, 0.5, 4, {})};
  RoundMetrics m = Aggregate(runs, SloConfig{});
  EXPECT_EQ(m.num_rounds, 2);
  EXPECT_DOUBLE_EQ(m.request_throughput, 3 / 4.0);
  EXPECT_DOUBLE_EQ(m.ttft_ms.median, 200);
  EXPECT_FALSE(m.server_busy_fraction.has_value());  // neither round could read it
  runs[0].server_busy_s = 0.5;
  EXPECT_FALSE(Aggregate(runs, SloConfig{}).server_busy_fraction.has_value()) << "one round without it";
  runs[1].server_busy_s = 2.5;
  EXPECT_DOUBLE_EQ(*Aggregate(runs, SloConfig{}).server_busy_fraction, 3.0 / 4);  // busy over wall, summed
}

TEST(MetricsTest, EveryScalarMetricHasAUniqueName) {
  std::set<std::string> names;
  RoundMetrics m;
  for (const MetricField& field : ScalarMetrics()) {
    EXPECT_TRUE(names.insert(field.name).second) << field.name;
    (void)field.get(m);
  }
  EXPECT_TRUE(names.count("ttft_p99_ms") && names.count("goodput") && names.count("itl_max_ms"));
}

}  // namespace
}  // namespace surge::bench
