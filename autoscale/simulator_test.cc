// The simulator on hand-checkable traces (a fixed fleet's queue arithmetic, a step, a ramp),
// the trace files, and the seed day (10 -> 500 QPS) through the shipped seed_day.json policy.
#include "autoscale/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/check.h"

namespace surge::autoscale {
namespace {

CapacityModel TwoPointModel(double slo_s = 1.0) {
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_two_points.json");
  CHECK(points.ok());
  StatusOr<CapacityModel> model = FitCapacityModel(*points, slo_s);
  CHECK(model.ok());
  return *model;
}

PoolConfig BusyPool(int min_replicas, int max_replicas) {
  PoolConfig pool;
  pool.name = "test";
  pool.policy.min_replicas = min_replicas;
  pool.policy.max_replicas = max_replicas;
  pool.policy.targets.busy_fraction = 0.75;
  return pool;
}

TEST(SimulatorTest, CapacityModelFromTheBenchCurve) {
  CapacityModel model = TwoPointModel();
  EXPECT_DOUBLE_EQ(model.max_qps, 20);
  EXPECT_NEAR(model.slo_qps, 15, 1e-9);  // TTFT 0.5 -> 1.5 s from c=8 to c=16: 1 s at c=12, 15 QPS
  EXPECT_DOUBLE_EQ(model.TtftP95(5), 0.5);    // flat below the lightest point
  EXPECT_DOUBLE_EQ(model.TtftP95(15), 1.0);
  EXPECT_DOUBLE_EQ(model.TtftP95(20), 1.5);
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_two_points.json");
  EXPECT_EQ(FitCapacityModel(*points, 0.1).status().code(), StatusCode::kInvalidArgument);
}

// With the engine's busy fraction in the bench rounds the model follows it (through (0, 0),
// flat past the last point); without it busy is served / max_qps. A busy target then scales
// as the measured curve says: 10 QPS on one engine is busy 0.9, over a 0.75 target -> 2.
TEST(SimulatorTest, MeasuredBusyCurve) {
  EXPECT_TRUE(TwoPointModel().busy_by_qps.empty());
  EXPECT_DOUBLE_EQ(TwoPointModel().BusyFraction(10), 0.5);
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_busy_curve.json");
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  StatusOr<CapacityModel> model = FitCapacityModel(*points, 1.0);
  ASSERT_TRUE(model.ok());
  ASSERT_EQ(model->busy_by_qps.size(), 2u);
  EXPECT_DOUBLE_EQ(model->BusyFraction(5), 0.45);
  EXPECT_DOUBLE_EQ(model->BusyFraction(10), 0.9);
  EXPECT_DOUBLE_EQ(model->BusyFraction(15), 0.95);
  EXPECT_DOUBLE_EQ(model->BusyFraction(25), 1.0);
  const std::vector<double> trace(5, 10.0);
  SimulationOptions options{.slo_ttft_p95_s = 2.0};
  EXPECT_EQ(Simulate(BusyPool(1, 4), TwoPointModel(), trace, options).peak_replicas, 1);  // 0.5 < 0.75
  EXPECT_EQ(Simulate(BusyPool(1, 4), *model, trace, options).peak_replicas, 2);
}

// One replica, 25 QPS against 20 of capacity for 10 minutes, then nothing: the backlog grows
// by 5 a second to 3000, the P95 at its end is 1.5 + 3000 / 20 s, and it drains at 20 a second.
TEST(SimulatorTest, FixedFleetQueueArithmetic) {
  std::vector<double> trace(10, 25.0);
  trace.insert(trace.end(), 10, 0.0);
  SimulationOptions options{.slo_ttft_p95_s = 1.0, .fixed_replicas = 1};
  SimulationResult r = Simulate(BusyPool(1, 1), TwoPointModel(), trace, options);
  ASSERT_EQ(r.minutes.size(), 20u);
  EXPECT_NEAR(r.minutes[0].queue, 300, 1e-6);
  EXPECT_NEAR(r.minutes[9].queue, 3000, 1e-6);
  EXPECT_NEAR(r.minutes[9].ttft_p95_s, 1.5 + 3000.0 / 20, 1e-6);
  EXPECT_NEAR(r.minutes[10].queue, 1800, 1e-6);
  EXPECT_NEAR(r.minutes[11].queue, 600, 1e-6);
  EXPECT_NEAR(r.minutes[12].queue, 0, 1e-6);
  EXPECT_EQ(r.num_minutes_meeting_slo, 7);  // minutes 13..19: idle at 0.5 s
  EXPECT_NEAR(r.replica_hours, 20.0 / 60, 1e-9);
  EXPECT_EQ(r.peak_replicas, 1);
  EXPECT_TRUE(r.decisions.empty());
}

// 10 QPS, then a step to 60: busy 0.75 per replica of 20 QPS settles at 60 / 15 = 4.
TEST(SimulatorTest, StepScalesUpWithinOneIntervalAndSettles) {
  std::vector<double> trace(10, 10.0);
  trace.insert(trace.end(), 40, 60.0);
  SimulationOptions options{.slo_ttft_p95_s = 1.0};
  SimulationResult r = Simulate(BusyPool(1, 10), TwoPointModel(), trace, options);
  for (int m = 0; m < 10; ++m) EXPECT_EQ(r.minutes[m].ready_by_class[0] + r.minutes[m].num_pending, 1) << m;
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_EQ(r.decisions[0].substr(0, 11), "00:10 1 -> ") << r.decisions[0];  // the first decision after the step
  const MinuteSample& last = r.minutes.back();
  EXPECT_EQ(last.ready_by_class[0], 4);
  EXPECT_EQ(last.num_pending, 0);
  EXPECT_NEAR(last.queue, 0, 1e-9);
  EXPECT_TRUE(last.meets_slo);
  EXPECT_LE(r.peak_replicas, 10);
}

// A ramp 10 -> 60 -> 10 QPS: the fixed fleet for the peak is ceil(60 / 15) = 4 replicas for
// 210 minutes = 14 replica-hours; the autoscaled fleet grows monotonically on the way up and
// needs fewer replica-hours.
TEST(SimulatorTest, RampAgainstTheFixedFleet) {
  StatusOr<std::vector<double>> trace = MakeTrace("ramp", 10, 60);
  ASSERT_TRUE(trace.ok());
  ASSERT_EQ(trace->size(), 210u);
  EXPECT_DOUBLE_EQ((*trace)[89], 60);
  CapacityModel model = TwoPointModel();
  EXPECT_EQ(FixedFleetForPeak(model, *trace), 4);
  PoolConfig pool = BusyPool(1, 10);
  SimulationOptions fixed_options{.slo_ttft_p95_s = 1.0, .fixed_replicas = 4};
  SimulationResult fixed = Simulate(pool, model, *trace, fixed_options);
  EXPECT_NEAR(fixed.replica_hours, 14, 1e-9);
  EXPECT_EQ(fixed.num_minutes_meeting_slo, 210);  // 60 / 4 = 15 QPS each: exactly the SLO
  SimulationResult scaled = Simulate(pool, model, *trace, {.slo_ttft_p95_s = 1.0});
  EXPECT_LT(scaled.replica_hours, fixed.replica_hours);
  for (int m = 31; m < 90; ++m) {
    auto total = [&](int i) { return scaled.minutes[i].ready_by_class[0] + scaled.minutes[i].num_pending; };
    EXPECT_GE(total(m), total(m - 1)) << "minute " << m;
  }
}

TEST(SimulatorTest, Traces) {
  EXPECT_EQ(MakeTrace("spike", 50, 500)->size(), 90u);
  StatusOr<std::vector<double>> diurnal = MakeTrace("diurnal", 10, 500);
  ASSERT_EQ(diurnal->size(), 1440u);
  EXPECT_NEAR(*std::min_element(diurnal->begin(), diurnal->end()), 10, 1e-9);
  EXPECT_NEAR(*std::max_element(diurnal->begin(), diurnal->end()), 500, 1e-9);
  EXPECT_NEAR((*diurnal)[10 * 60 + 30], 500, 1e-9);  // 10:30, the centre of a weight-1 hour
  EXPECT_EQ(MakeTrace("sine", 1, 2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseTraceCsv("minute,qps\n0,5\n1,7.5\n\n2,0\n"), (std::vector<double>{5, 7.5, 0}));
  EXPECT_EQ(*ParseTraceCsv("3\n4\n"), (std::vector<double>{3, 4}));
  StatusOr<std::vector<double>> bad = ParseTraceCsv("qps\n1\nlots\n");
  EXPECT_EQ(bad.status().message(), "trace line 3: 'lots' is not a QPS >= 0");
  EXPECT_FALSE(ParseTraceCsv("1\n-2\n").ok());
  EXPECT_FALSE(ParseTraceCsv("header only\n").ok());
}

// The seed's case study: 10 -> 500 QPS in a day through the shipped seed_day.json policy
// (schedules in Europe/Berlin, spot then on-demand) meets the 1.5 s P95 TTFT for >= 99% of
// minutes with fewer replica-hours than a fixed fleet sized for the peak.
TEST(SimulatorTest, SeedDayMeetsItsSloWithFewerReplicaHours) {
  StatusOr<AutoscaleConfig> config = LoadAutoscaleConfig("autoscale/examples/seed_day.json");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const PoolConfig& pool = config->pools[0];
  StatusOr<std::vector<BenchPoint>> points = LoadBenchReport("autoscale/testdata/bench_seed_engine.json");
  ASSERT_TRUE(points.ok());
  StatusOr<CapacityModel> model = FitCapacityModel(*points, 1.5);
  ASSERT_TRUE(model.ok());
  std::vector<double> trace = *MakeTrace("diurnal", 10, 500);
  SimulationOptions options{.interval = config->interval, .slo_ttft_p95_s = 1.5};
  SimulationResult scaled = Simulate(pool, *model, trace, options);
  int fixed_replicas = FixedFleetForPeak(*model, trace);
  options.fixed_replicas = fixed_replicas;
  SimulationResult fixed = Simulate(pool, *model, trace, options);
  EXPECT_GE(scaled.num_minutes_meeting_slo, 0.99 * 1440) << scaled.num_minutes_meeting_slo;
  EXPECT_LT(scaled.replica_hours, fixed.replica_hours);
  EXPECT_LT(scaled.cost_usd, fixed.cost_usd);
  EXPECT_NEAR(fixed.replica_hours, fixed_replicas * 24.0, 1e-6);
  // Tuesday: the workday rule holds 20 from 09:00 Berlin (08:00 UTC, the trace's minute 540).
  EXPECT_GE(scaled.minutes[9 * 60 + 5].ready_by_class[0] + scaled.minutes[9 * 60 + 5].ready_by_class[1], 20);
  std::printf("seed day: %d/1440 minutes within the SLO, %.1f replica-hours ($%.0f) vs fixed %d: %.1f ($%.0f)\n",
              scaled.num_minutes_meeting_slo, scaled.replica_hours, scaled.cost_usd, fixed_replicas,
              fixed.replica_hours, fixed.cost_usd);
}

}  // namespace
}  // namespace surge::autoscale
