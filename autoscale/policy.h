// ScalingPolicy: metric targets -> a pool's desired replica count, with Kubernetes HPA
// semantics (formula, tolerance, stabilization windows, rate limits) and a pending-replica guard.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autoscale/civil_time.h"
#include "autoscale/pool_metrics.h"
#include "autoscale/schedule.h"
#include "base/status.h"

namespace surge::autoscale {

// Per-replica targets; an unset target is not used. At least one must be set.
struct ScalingTargets {
  std::optional<double> queue_depth_per_replica;  // waiting requests per ready replica
  std::optional<double> kv_usage;                 // 0..1
  std::optional<double> busy_fraction;            // 0..1
  std::optional<double> ttft_p95_s;               // seconds
};

// Scale-up: stabilize to the MIN recommendation of the window; add at most
// max(ceil(start * max_factor), start + max_step_replicas) per period (HPA's two policies,
// selectPolicy Max), where start is the count at the period's start.
struct ScaleUpBehavior {
  Duration stabilization{0};
  double max_factor = 2.0;
  int max_step_replicas = 4;
  Duration period{std::chrono::seconds(15)};
};

// Scale-down: stabilize to the MAX recommendation of the window; remove at most
// max(1, floor(start * max_percent / 100)) per period.
struct ScaleDownBehavior {
  Duration stabilization{std::chrono::minutes(5)};
  double max_percent = 50;
  Duration period{std::chrono::seconds(60)};
};

struct ScalingPolicyConfig {
  int min_replicas = 1;
  int max_replicas = 10;
  ScalingTargets targets;
  double tolerance = 0.1;  // no change while |metric / target - 1| <= tolerance
  ScaleUpBehavior scale_up;
  ScaleDownBehavior scale_down;
};

// Errors name the offending field ("max_replicas 0 < min_replicas 1").
Status ValidatePolicyConfig(const ScalingPolicyConfig& config);

// What one target asked for.
struct TargetRecommendation {
  std::string target;  // "queue_depth_per_replica", "kv_usage", "busy_fraction", "ttft_p95_s", "needs_capacity"
  double value = 0;         // the metric (1 for needs_capacity)
  double target_value = 0;  // the target (0 for needs_capacity)
  int desired_replicas = 0;
  std::string reason;  // "9 / 4 over 2 ready -> 5", "within tolerance", ...
};

struct Decision {
  int desired_replicas = 0;
  int current_replicas = 0;  // ready + pending: what the decision is compared with
  int recommended_replicas = 0;  // the largest target's count, before windows, steps and bounds
  std::string reason;            // what set desired_replicas, for logs and /debug pages
  std::vector<TargetRecommendation> targets;
  ReplicaBounds bounds;
};

class ScalingPolicy {
 public:
  // The config must pass ValidatePolicyConfig.
  explicit ScalingPolicy(ScalingPolicyConfig config);

  // One evaluation at `now` (virtual time; calls must not go back in time). Within the pool's
  // own min/max, or within `bounds` (a schedule's). Records the recommendation and, when the
  // count changes, a scale event: the caller is expected to act on the decision.
  Decision Decide(Instant now, const PoolMetrics& metrics);
  Decision Decide(Instant now, const PoolMetrics& metrics, const ReplicaBounds& bounds);

  const ScalingPolicyConfig& config() const { return config_; }

 private:
  std::vector<TargetRecommendation> Recommend(const PoolMetrics& metrics, int current) const;
  int Stabilize(Instant now, int recommended, int current, std::string* reason);
  int LimitRate(Instant now, int stabilized, int current, std::string* reason) const;

  ScalingPolicyConfig config_;
  std::deque<std::pair<Instant, int>> recommendations_;  // unstabilized, oldest first
  std::deque<std::pair<Instant, int>> scale_events_;     // (when, replicas added (+) / removed (-))
};

}  // namespace surge::autoscale
