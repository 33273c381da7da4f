// The policy against a small closed-loop model of a pool: demand ramps up and down, each
// replica serves a fixed rate, new replicas take a minute to load, a backlog builds when
// demand passes capacity. The policy must follow demand without overshoot or flapping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <deque>

#include "autoscale/policy.h"
#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

using std::chrono::seconds;

constexpr double kReplicaQps = 10;   // what one replica serves
constexpr int64_t kStepS = 5;        // evaluation interval
constexpr int64_t kLoadTimeS = 60;   // a new replica is ready after this

// Demand in req/s: 5 for 10 min, ramp to 100 over 20 min, hold 20 min, ramp down over 20 min, 5 for 30 min.
double Demand(int64_t t_s) {
  double m = t_s / 60.0;
  if (m < 10) return 5;
  if (m < 30) return 5 + 95 * (m - 10) / 20;
  if (m < 50) return 100;
  if (m < 70) return 100 - 95 * (m - 50) / 20;
  return 5;
}

struct Pool {
  int num_ready = 1;
  std::deque<int64_t> ready_at_s;  // pending replicas
  double backlog = 0;              // queued requests

  PoolMetrics Measure(int64_t t_s, double demand) {
    while (!ready_at_s.empty() && ready_at_s.front() <= t_s) {
      ready_at_s.pop_front();
      ++num_ready;
    }
    double capacity = num_ready * kReplicaQps;
    backlog = std::max(0.0, backlog + (demand - capacity) * kStepS);
    PoolMetrics m;
    m.num_ready_replicas = num_ready;
    m.num_pending_replicas = static_cast<int>(ready_at_s.size());
    m.busy_fraction = std::min(1.0, demand / capacity);
    m.queue_depth_per_replica = backlog / num_ready;
    return m;
  }
  void Apply(int64_t t_s, int desired) {
    while (num_ready + static_cast<int>(ready_at_s.size()) < desired) ready_at_s.push_back(t_s + kLoadTimeS);
    while (num_ready + static_cast<int>(ready_at_s.size()) > desired) {
      if (!ready_at_s.empty()) ready_at_s.pop_back();  // a loading replica goes first
      else --num_ready;
    }
  }
};

TEST(PolicySeriesTest, FollowsARampWithoutOvershootOrFlapping) {
  ScalingPolicyConfig config;
  config.min_replicas = 1;
  config.max_replicas = 40;
  config.targets.busy_fraction = 0.7;
  config.targets.queue_depth_per_replica = 20;
  ScalingPolicy policy(config);
  Pool pool;
  int peak = 0, num_reversals = 0, last_direction = 0;
  int64_t seconds_backlogged = 0;
  for (int64_t t = 0; t < 100 * 60; t += kStepS) {
    PoolMetrics m = pool.Measure(t, Demand(t));
    Decision d = policy.Decide(Utc(2024, 5, 6) + seconds(t), m);
    int direction = d.desired_replicas > d.current_replicas ? 1 : d.desired_replicas < d.current_replicas ? -1 : 0;
    if (direction != 0 && last_direction != 0 && direction != last_direction) ++num_reversals;
    if (direction != 0) last_direction = direction;
    pool.Apply(t, d.desired_replicas);
    peak = std::max(peak, d.desired_replicas);
    seconds_backlogged += pool.backlog > 0 ? kStepS : 0;
  }
  // At the peak 100 req/s at 70% busy needs 100 / 7 = 14.3 replicas; the 10% tolerance band
  // accepts 13 (busy 0.77) and up.
  EXPECT_GE(peak, 13);
  EXPECT_LE(peak, 17) << "overshoot: replicas still loading were not counted";
  EXPECT_EQ(num_reversals, 1) << "one way up, one way down";
  EXPECT_EQ(pool.num_ready + static_cast<int>(pool.ready_at_s.size()), 1);  // back to one at 5 req/s
  EXPECT_LT(seconds_backlogged, 20 * 60) << "the pool lagged demand for most of the ramp";
  std::printf("peak %d replicas, %d reversals, backlogged %lld s\n", peak, num_reversals,
              static_cast<long long>(seconds_backlogged));
}

}  // namespace
}  // namespace surge::autoscale
