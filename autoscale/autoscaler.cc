#include "autoscale/autoscaler.h"

#include <algorithm>
#include <limits>

namespace surge::autoscale {
namespace {

std::vector<CapacityClassConfig> ClassesOrDefault(const std::vector<CapacityClassConfig>& classes) {
  if (!classes.empty()) return classes;
  return {CapacityClassConfig{"default", std::numeric_limits<int>::max(), 0}};
}

}  // namespace

PoolAutoscaler::PoolAutoscaler(const PoolConfig& config)
    : name_(config.name),
      policy_(config.policy),
      schedule_(config.schedule),
      classes_(ClassesOrDefault(config.classes)),
      has_classes_(!config.classes.empty()) {}

ReplicaBounds PoolAutoscaler::BoundsAt(Instant now) const {
  const ScalingPolicyConfig& c = policy_.config();
  ReplicaBounds bounds = schedule_.Bounds(now, c.min_replicas, c.max_replicas);
  if (has_classes_ && classes_.Capacity() < bounds.max_replicas) {
    bounds.max_replicas = classes_.Capacity();
    bounds.min_replicas = std::min(bounds.min_replicas, bounds.max_replicas);
    bounds.source += ", capped by the capacity classes";
  }
  return bounds;
}

Decision PoolAutoscaler::Decide(Instant now, const PoolMetrics& metrics) {
  return policy_.Decide(now, metrics, BoundsAt(now));
}

}  // namespace surge::autoscale
