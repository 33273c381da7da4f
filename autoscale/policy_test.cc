#include "autoscale/policy.h"

#include <gtest/gtest.h>

#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

using std::chrono::seconds;

Instant T(int64_t s) { return Utc(2024, 5, 6) + seconds(s); }

ScalingPolicyConfig QueueConfig() {
  ScalingPolicyConfig c;
  c.min_replicas = 1;
  c.max_replicas = 40;
  c.targets.queue_depth_per_replica = 4;
  c.scale_up.max_step_replicas = 100;  // tests of the step limit set it back
  c.scale_down.stabilization = seconds(0);
  c.scale_down.max_percent = 100;
  return c;
}

PoolMetrics Queue(int ready, double per_replica, int pending = 0) {
  PoolMetrics m;
  m.num_ready_replicas = ready;
  m.num_pending_replicas = pending;
  m.queue_depth_per_replica = per_replica;
  return m;
}

TEST(ScalingPolicyTest, HpaFormula) {
  ScalingPolicy policy(QueueConfig());
  Decision d = policy.Decide(T(0), Queue(4, 10));  // ceil(4 * 10 / 4)
  EXPECT_EQ(d.desired_replicas, 10);
  EXPECT_EQ(d.recommended_replicas, 10);
  ScalingPolicy down(QueueConfig());
  EXPECT_EQ(down.Decide(T(0), Queue(6, 1)).desired_replicas, 2);  // ceil(6 * 1 / 4)
}

TEST(ScalingPolicyTest, NoFlappingInsideTheToleranceBand) {
  ScalingPolicy policy(QueueConfig());
  for (int i = 0; i < 200; ++i) {
    double wobble = 3.6 + 0.8 * ((i * 37) % 11) / 10.0;  // 3.6 .. 4.4: within +-10% of 4
    Decision d = policy.Decide(T(i * 5), Queue(5, wobble));
    ASSERT_EQ(d.desired_replicas, 5) << "step " << i << " metric " << wobble << ": " << d.reason;
  }
  // Just outside the band it moves.
  EXPECT_EQ(policy.Decide(T(2000), Queue(5, 4.5)).desired_replicas, 6);
}

TEST(ScalingPolicyTest, NoCascadeWhileReplicasLoad) {
  ScalingPolicy policy(QueueConfig());
  Decision first = policy.Decide(T(0), Queue(2, 8));  // ceil(2 * 8 / 4) = 4
  ASSERT_EQ(first.desired_replicas, 4);
  // The two new replicas take a minute to load; the queue on the old two keeps growing a little
  // (up to 7.5%: within tolerance of what the four will carry). Counting only the ready two
  // would add two more every period.
  for (int s = 5; s <= 60; s += 5) {
    Decision d = policy.Decide(T(s), Queue(2, 8 + s / 100.0, /*pending=*/2));
    ASSERT_EQ(d.desired_replicas, 4) << "at " << s << " s: " << d.reason;
  }
  // High load with replicas loading never removes a loading replica.
  EXPECT_EQ(policy.Decide(T(65), Queue(2, 5, 2)).desired_replicas, 4);
  // Once they are ready and the load is real, scaling resumes.
  EXPECT_EQ(policy.Decide(T(70), Queue(4, 8)).desired_replicas, 8);
}

TEST(ScalingPolicyTest, ScaleUpStabilizationTakesTheWindowMinimum) {
  ScalingPolicyConfig c = QueueConfig();
  c.scale_up.stabilization = seconds(30);
  ScalingPolicy policy(c);
  for (int s = 0; s <= 60; s += 5) ASSERT_EQ(policy.Decide(T(s), Queue(2, 4)).desired_replicas, 2);
  // A burst at 65 s: the window (now - 30 s, now] still holds a calm recommendation until 90 s.
  for (int s = 65; s < 90; s += 5) {
    Decision d = policy.Decide(T(s), Queue(2, 16));
    ASSERT_EQ(d.desired_replicas, 2) << "at " << s << " s: " << d.reason;
    EXPECT_NE(d.reason.find("scale-up stabilization"), std::string::npos) << d.reason;
  }
  EXPECT_EQ(policy.Decide(T(90), Queue(2, 16)).desired_replicas, 8);
  // A one-sample spike inside the window never scales.
  ScalingPolicy spiky(c);
  for (int s = 0; s <= 120; s += 5) {
    ASSERT_EQ(spiky.Decide(T(s), Queue(2, s == 60 ? 40 : 4)).desired_replicas, 2) << s;
  }
}

TEST(ScalingPolicyTest, ScaleDownStabilizationTakesTheWindowMaximum) {
  ScalingPolicyConfig c = QueueConfig();
  c.scale_down = ScaleDownBehavior{};  // 300 s window, 50% per 60 s
  ScalingPolicy policy(c);
  ASSERT_EQ(policy.Decide(T(0), Queue(8, 4)).desired_replicas, 8);
  for (int s = 15; s < 300; s += 15) ASSERT_EQ(policy.Decide(T(s), Queue(8, 1)).desired_replicas, 8) << s;
  // 300 s after the last busy sample: down, at most half per minute.
  Decision d = policy.Decide(T(300), Queue(8, 1));
  EXPECT_EQ(d.desired_replicas, 4);
  EXPECT_NE(d.reason.find("scale-down step limit"), std::string::npos) << d.reason;
  EXPECT_EQ(policy.Decide(T(330), Queue(4, 2)).desired_replicas, 4);  // same minute: 8 -> 4 already
  EXPECT_EQ(policy.Decide(T(361), Queue(4, 2)).desired_replicas, 2);
}

TEST(ScalingPolicyTest, MaxStepUpIsTimesTwoOrPlusN) {
  ScalingPolicyConfig c = QueueConfig();
  c.scale_up.max_step_replicas = 4;
  ScalingPolicy policy(c);
  EXPECT_EQ(policy.Decide(T(0), Queue(1, 40)).desired_replicas, 5);   // 1 + 4 beats 1 * 2
  EXPECT_EQ(policy.Decide(T(5), Queue(1, 40, 4)).desired_replicas, 5);  // same period: no more
  EXPECT_EQ(policy.Decide(T(16), Queue(5, 40)).desired_replicas, 10);    // 5 * 2 beats 5 + 4
  EXPECT_EQ(policy.Decide(T(31), Queue(10, 40)).desired_replicas, 20);
}

TEST(ScalingPolicyTest, LargestTargetWins) {
  ScalingPolicyConfig c = QueueConfig();
  c.targets.kv_usage = 0.5;
  c.targets.busy_fraction = 0.8;
  c.targets.ttft_p95_s = 2;
  ScalingPolicy policy(c);
  PoolMetrics m = Queue(4, 6);  // -> 6
  m.kv_usage = 0.9;             // -> ceil(4 * 1.8) = 8
  m.busy_fraction = 0.9;        // -> ceil(4 * 1.125) = 5
  m.ttft_p95_s = 1;             // -> 2
  Decision d = policy.Decide(T(0), m);
  EXPECT_EQ(d.desired_replicas, 8);
  EXPECT_EQ(d.reason.rfind("kv_usage", 0), 0u) << d.reason;
  ASSERT_EQ(d.targets.size(), 4u);
  EXPECT_EQ(d.targets[0].desired_replicas, 6);
  EXPECT_EQ(d.targets[2].desired_replicas, 5);
  EXPECT_EQ(d.targets[3].desired_replicas, 2);
  m.ttft_p95_s = 5;  // -> 10: latency now the largest
  d = policy.Decide(T(60), m);
  EXPECT_EQ(d.desired_replicas, 10);
  EXPECT_EQ(d.reason.rfind("ttft_p95_s", 0), 0u) << d.reason;
  // A target that holds beats one that wants fewer.
  ScalingPolicy hold(c);
  PoolMetrics calm = Queue(4, 4);
  calm.kv_usage = 0.1;
  EXPECT_EQ(hold.Decide(T(0), calm).desired_replicas, 4);
}

TEST(ScalingPolicyTest, NeedsCapacityAddsOneUnlessOneIsLoading) {
  ScalingPolicy policy(QueueConfig());
  PoolMetrics m = Queue(3, 4);
  m.needs_capacity = true;
  Decision d = policy.Decide(T(0), m);
  EXPECT_EQ(d.desired_replicas, 4);
  EXPECT_EQ(d.reason.rfind("needs_capacity", 0), 0u) << d.reason;
  m.num_pending_replicas = 1;
  EXPECT_EQ(policy.Decide(T(5), m).desired_replicas, 4);
}

TEST(ScalingPolicyTest, BoundsAndEmptyPools) {
  ScalingPolicyConfig c = QueueConfig();
  c.min_replicas = 0;
  c.max_replicas = 6;
  ScalingPolicy policy(c);
  EXPECT_EQ(policy.Decide(T(0), Queue(4, 40)).desired_replicas, 6);
  PoolMetrics empty;
  EXPECT_EQ(policy.Decide(T(10), empty).desired_replicas, 0);
  empty.needs_capacity = true;  // demand arrives at an empty pool
  EXPECT_EQ(policy.Decide(T(20), empty).desired_replicas, 1);
  PoolMetrics loading;
  loading.num_pending_replicas = 2;  // nothing measured yet: hold
  EXPECT_EQ(policy.Decide(T(30), loading).desired_replicas, 2);
  // A schedule's min is applied at once, past the step limit.
  Decision d = policy.Decide(T(40), Queue(2, 4), ReplicaBounds{20, 40, "schedule 'workday'"});
  EXPECT_EQ(d.desired_replicas, 20);
  EXPECT_EQ(d.reason, "min_replicas 20 (schedule 'workday')");
}

TEST(ScalingPolicyTest, ConfigValidationNamesTheField) {
  ScalingPolicyConfig c = QueueConfig();
  c.max_replicas = 0;
  EXPECT_NE(ValidatePolicyConfig(c).message().find("max_replicas"), std::string::npos);
  c = QueueConfig();
  c.targets = {};
  EXPECT_NE(ValidatePolicyConfig(c).message().find("targets"), std::string::npos);
  c = QueueConfig();
  c.targets.kv_usage = 1.5;
  EXPECT_NE(ValidatePolicyConfig(c).message().find("kv_usage"), std::string::npos);
  c = QueueConfig();
  c.scale_down.max_percent = 0;
  EXPECT_NE(ValidatePolicyConfig(c).message().find("scale_down.max_percent"), std::string::npos);
}

TEST(PoolMetricsTest, AveragesOverReadyReplicas) {
  std::vector<ReplicaSample> replicas = {{true, 6, 0.5, 0.9}, {true, 2, 0.3, std::nullopt}, {false, 0, {}, {}}};
  PoolMetrics m = PoolMetrics::FromReplicas(replicas, 1.5, false);
  EXPECT_EQ(m.num_ready_replicas, 2);
  EXPECT_EQ(m.num_pending_replicas, 1);
  EXPECT_DOUBLE_EQ(*m.queue_depth_per_replica, 4);
  EXPECT_DOUBLE_EQ(*m.kv_usage, 0.4);
  EXPECT_DOUBLE_EQ(*m.busy_fraction, 0.9);
  EXPECT_FALSE(PoolMetrics::FromReplicas({{false, 0, {}, {}}}, {}, false).queue_depth_per_replica);
}

}  // namespace
}  // namespace surge::autoscale
