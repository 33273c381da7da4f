// PoolAutoscaler: one pool's policy, schedule and capacity classes together, and the JSON
// policy file (`--autoscale POLICY_FILE`) they are read from.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "autoscale/capacity_classes.h"
#include "autoscale/policy.h"
#include "autoscale/schedule.h"
#include "base/status.h"

namespace surge::autoscale {

struct PoolConfig {
  std::string name;
  ScalingPolicyConfig policy;
  std::vector<CapacityClassConfig> classes;  // empty: one unpriced class without a limit
  Schedule schedule;
};

struct AutoscaleConfig {
  Duration interval{std::chrono::seconds(15)};  // how often an actuator calls Decide
  std::vector<PoolConfig> pools;                // ordered by name
};

// "500ms", "30s", "5m", "1h30m": a sequence of number+unit (ms, s, m, h); no bare numbers.
StatusOr<Duration> ParseDuration(std::string_view text);

// Parses a policy file's text. Every unknown key is refused by its path
// ("pools.default.scale_up: unknown key 'stabilisation'"); time zones are read from
// zoneinfo_dir. The format is in autoscale/README.md and autoscale/examples/.
StatusOr<AutoscaleConfig> ParseAutoscaleConfig(std::string_view json_text,
                                               std::string_view zoneinfo_dir = kZoneinfoDir);
// Reads and parses a file (at most 1 MiB); errors start with the path.
StatusOr<AutoscaleConfig> LoadAutoscaleConfig(const std::string& path,
                                              std::string_view zoneinfo_dir = kZoneinfoDir);

class PoolAutoscaler {
 public:
  explicit PoolAutoscaler(const PoolConfig& config);

  // The schedule's bounds at `now` (or the pool's), capped by what the classes can hold,
  // then the metric policy inside them.
  Decision Decide(Instant now, const PoolMetrics& metrics);
  ReplicaBounds BoundsAt(Instant now) const;

  const std::string& name() const { return name_; }
  CapacityClasses& classes() { return classes_; }
  const CapacityClasses& classes() const { return classes_; }
  const Schedule& schedule() const { return schedule_; }

 private:
  std::string name_;
  ScalingPolicy policy_;
  Schedule schedule_;
  CapacityClasses classes_;
  bool has_classes_ = false;
};

}  // namespace surge::autoscale
