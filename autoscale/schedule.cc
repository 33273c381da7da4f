#include "autoscale/schedule.h"

#include <algorithm>

namespace surge::autoscale {

bool Schedule::MatchesMinute(const ScheduleRule& rule, int64_t minute_start_s) const {
  return rule.cron.Matches(zone_.ToLocal(minute_start_s));
}

std::optional<ActiveRule> Schedule::Active(Instant now) const {
  int64_t now_s = UnixSeconds(now);
  int64_t minute_s = now_s - ((now_s % 60) + 60) % 60;
  std::optional<ActiveRule> best;
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (!MatchesMinute(rules_[i], minute_s)) continue;
    // Walk back over real (UTC) minutes: a DST overlap's repeated local hour is two runs of
    // minutes, a gap's missing hour none.
    int64_t start_s = minute_s;
    for (int step = 0; step < kMaxLookbackMinutes && MatchesMinute(rules_[i], start_s - 60); ++step) start_s -= 60;
    Instant started = FromUnixSeconds(start_s);
    if (!best || started > best->started) best = ActiveRule{i, started};
  }
  return best;
}

ReplicaBounds Schedule::Bounds(Instant now, int pool_min_replicas, int pool_max_replicas) const {
  ReplicaBounds bounds{pool_min_replicas, pool_max_replicas, "pool"};
  std::optional<ActiveRule> active = Active(now);
  if (!active) return bounds;
  const ScheduleRule& rule = rules_[active->index];
  bounds.source = "schedule '" + rule.name + "'";
  if (rule.replicas) {
    bounds.min_replicas = bounds.max_replicas = *rule.replicas;
    return bounds;
  }
  if (rule.min_replicas) bounds.min_replicas = *rule.min_replicas;
  if (rule.max_replicas) bounds.max_replicas = *rule.max_replicas;
  // The value the rule set wins over the pool's: a rule max below the pool min lowers the min,
  // a rule min above the pool max raises the max.
  if (rule.max_replicas && !rule.min_replicas) bounds.min_replicas = std::min(bounds.min_replicas, bounds.max_replicas);
  bounds.max_replicas = std::max(bounds.max_replicas, bounds.min_replicas);
  return bounds;
}

}  // namespace surge::autoscale
