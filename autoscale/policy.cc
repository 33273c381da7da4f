#include "autoscale/policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace surge::autoscale {
namespace {

std::string Format(const char* format, double a, double b, int c, int d) {
  char buffer[160];
  std::snprintf(buffer, sizeof(buffer), format, a, b, c, d);
  return buffer;
}

// HPA's per-metric recommendation. `ratio` is metric / target averaged over READY replicas.
// Pending replicas count as capacity already coming (they carry no load yet, as HPA assumes
// for unready pods): the result is compared with ready + pending, the tolerance is applied
// to the ratio over ready + pending, and a load above target never removes a pending replica.
TargetRecommendation RecommendFor(std::string name, double value, double target, int ready, int current,
                                  double tolerance) {
  TargetRecommendation rec{std::move(name), value, target, current, ""};
  double ratio = value / target;
  if (std::fabs(ratio - 1) <= tolerance + 1e-9) {  // the epsilon keeps 4.4 / 4 inside a 10% band
    rec.reason = Format("%.3g / %.3g within tolerance (%d ready, %d total)", value, target, ready, current);
    return rec;
  }
  // Capped so an absurd metric (a stuck P95) cannot overflow the count; max_replicas bounds it later.
  int desired = static_cast<int>(std::ceil(std::min(ready * ratio, 1e6) - 1e-9));
  double ratio_over_current = current > 0 ? ready * ratio / current : ratio;
  bool reverses = (ratio > 1 && desired < current) || (ratio < 1 && desired > current);
  if (current > ready && (reverses || std::fabs(ratio_over_current - 1) <= tolerance + 1e-9)) {
    rec.reason = Format("%.3g / %.3g over %d ready: pending replicas cover it (%d total)", value, target, ready,
                        current);
    return rec;
  }
  rec.desired_replicas = desired;
  rec.reason = Format("%.3g / %.3g over %d ready -> %d", value, target, ready, desired);
  return rec;
}

// Sum of scale events after the cutoff with the given sign (+1 added, -1 removed).
int EventsSince(const std::deque<std::pair<Instant, int>>& events, Instant cutoff, int sign) {
  int total = 0;
  for (const auto& [when, delta] : events) {
    if (when > cutoff && delta * sign > 0) total += delta * sign;
  }
  return total;
}

}  // namespace

Status ValidatePolicyConfig(const ScalingPolicyConfig& c) {
  auto error = [](const std::string& what) { return InvalidArgumentError(what); };
  if (c.min_replicas < 0) return error("min_replicas must be >= 0");
  if (c.max_replicas < 1 || c.max_replicas < c.min_replicas) {
    return error("max_replicas " + std::to_string(c.max_replicas) + " must be >= 1 and >= min_replicas " +
                 std::to_string(c.min_replicas));
  }
  const ScalingTargets& t = c.targets;
  if (!t.queue_depth_per_replica && !t.kv_usage && !t.busy_fraction && !t.ttft_p95_s) {
    return error("targets: set at least one of queue_depth_per_replica, kv_usage, busy_fraction, ttft_p95");
  }
  if (t.queue_depth_per_replica && !(*t.queue_depth_per_replica > 0)) return error("targets.queue_depth_per_replica must be > 0");
  if (t.kv_usage && !(*t.kv_usage > 0 && *t.kv_usage <= 1)) return error("targets.kv_usage must be in (0, 1]");
  if (t.busy_fraction && !(*t.busy_fraction > 0 && *t.busy_fraction <= 1)) return error("targets.busy_fraction must be in (0, 1]");
  if (t.ttft_p95_s && !(*t.ttft_p95_s > 0)) return error("targets.ttft_p95 must be > 0");
  if (!(c.tolerance >= 0 && c.tolerance < 1)) return error("tolerance must be in [0, 1)");
  if (c.scale_up.stabilization.count() < 0) return error("scale_up.stabilization must be >= 0");
  if (c.scale_down.stabilization.count() < 0) return error("scale_down.stabilization must be >= 0");
  if (!(c.scale_up.max_factor >= 1)) return error("scale_up.max_factor must be >= 1");
  if (c.scale_up.max_step_replicas < 1) return error("scale_up.max_step_replicas must be >= 1");
  if (c.scale_up.period.count() <= 0) return error("scale_up.period must be > 0");
  if (!(c.scale_down.max_percent > 0 && c.scale_down.max_percent <= 100)) return error("scale_down.max_percent must be in (0, 100]");
  if (c.scale_down.period.count() <= 0) return error("scale_down.period must be > 0");
  return OkStatus();
}

ScalingPolicy::ScalingPolicy(ScalingPolicyConfig config) : config_(std::move(config)) {
  Status status = ValidatePolicyConfig(config_);
  CHECK(status.ok()) << status.ToString();
}

std::vector<TargetRecommendation> ScalingPolicy::Recommend(const PoolMetrics& m, int current) const {
  std::vector<TargetRecommendation> recs;
  const ScalingTargets& t = config_.targets;
  int ready = m.num_ready_replicas;
  auto add = [&](const char* name, const std::optional<double>& value, const std::optional<double>& target) {
    if (!value || !target || ready == 0) return;  // nothing measured: no opinion
    recs.push_back(RecommendFor(name, *value, *target, ready, current, config_.tolerance));
  };
  add("queue_depth_per_replica", m.queue_depth_per_replica, t.queue_depth_per_replica);
  add("kv_usage", m.kv_usage, t.kv_usage);
  add("busy_fraction", m.busy_fraction, t.busy_fraction);
  add("ttft_p95_s", m.ttft_p95_s, t.ttft_p95_s);
  if (m.needs_capacity) {
    // At least one more than is serving; a replica already loading satisfies it.
    int desired = std::max(current, ready + 1);
    recs.push_back({"needs_capacity", 1, 0, desired,
                    desired > current ? "router borrowed capacity: +1" : "router borrowed capacity: pending replica covers it"});
  }
  return recs;
}

int ScalingPolicy::Stabilize(Instant now, int recommended, int current, std::string* reason) {
  Duration keep = std::max(config_.scale_up.stabilization, config_.scale_down.stabilization);
  while (!recommendations_.empty() && recommendations_.front().first < now - keep) recommendations_.pop_front();
  int up = recommended, down = recommended;
  for (const auto& [when, value] : recommendations_) {
    if (when > now - config_.scale_up.stabilization) up = std::min(up, value);
    if (when > now - config_.scale_down.stabilization) down = std::max(down, value);
  }
  recommendations_.emplace_back(now, recommended);
  int stabilized = current;
  if (stabilized < up) stabilized = up;
  if (stabilized > down) stabilized = down;
  if (recommended > current && stabilized < recommended) {
    *reason = "scale-up stabilization: lowest recommendation in the window is " + std::to_string(up);
  } else if (recommended < current && stabilized > recommended) {
    *reason = "scale-down stabilization: highest recommendation in the window is " + std::to_string(down);
  }
  return stabilized;
}

int ScalingPolicy::LimitRate(Instant now, int stabilized, int current, std::string* reason) const {
  if (stabilized > current) {
    const ScaleUpBehavior& up = config_.scale_up;
    int start = current - EventsSince(scale_events_, now - up.period, +1);
    int limit = std::max(static_cast<int>(std::ceil(start * up.max_factor - 1e-9)), start + up.max_step_replicas);
    if (stabilized > limit) {
      *reason = "scale-up step limit: at most " + std::to_string(limit) + " this period";
      return limit;
    }
  } else if (stabilized < current) {
    const ScaleDownBehavior& down = config_.scale_down;
    int start = current + EventsSince(scale_events_, now - down.period, -1);
    int removable = std::max(1, static_cast<int>(std::floor(start * down.max_percent / 100 + 1e-9)));
    int limit = start - removable;
    if (stabilized < limit) {
      *reason = "scale-down step limit: at least " + std::to_string(limit) + " this period";
      return limit;
    }
  }
  return stabilized;
}

Decision ScalingPolicy::Decide(Instant now, const PoolMetrics& metrics) {
  return Decide(now, metrics, ReplicaBounds{config_.min_replicas, config_.max_replicas, "pool"});
}

Decision ScalingPolicy::Decide(Instant now, const PoolMetrics& metrics, const ReplicaBounds& bounds) {
  Decision d;
  d.bounds = bounds;
  d.current_replicas = metrics.num_ready_replicas + metrics.num_pending_replicas;
  d.targets = Recommend(metrics, d.current_replicas);
  d.recommended_replicas = d.current_replicas;
  d.reason = "no metrics: hold";
  // The largest count wins; a target within tolerance votes for the current count.
  for (size_t i = 0; i < d.targets.size(); ++i) {
    const TargetRecommendation& rec = d.targets[i];
    if (i == 0 || rec.desired_replicas > d.recommended_replicas) {
      d.recommended_replicas = rec.desired_replicas;
      d.reason = rec.target + ": " + rec.reason;
    }
  }
  int desired = Stabilize(now, d.recommended_replicas, d.current_replicas, &d.reason);
  desired = LimitRate(now, desired, d.current_replicas, &d.reason);
  if (desired < bounds.min_replicas) {
    desired = bounds.min_replicas;
    d.reason = "min_replicas " + std::to_string(desired) + " (" + bounds.source + ")";
  } else if (desired > bounds.max_replicas) {
    desired = bounds.max_replicas;
    d.reason = "max_replicas " + std::to_string(desired) + " (" + bounds.source + ")";
  }
  d.desired_replicas = desired;
  Duration keep = std::max(config_.scale_up.period, config_.scale_down.period);
  while (!scale_events_.empty() && scale_events_.front().first <= now - keep) scale_events_.pop_front();
  if (desired != d.current_replicas) scale_events_.emplace_back(now, desired - d.current_replicas);
  return d;
}

}  // namespace surge::autoscale
