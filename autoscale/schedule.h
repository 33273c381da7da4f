// Schedule: cron rules in an IANA time zone that set a pool's replica bounds by time and day
// (workday min 20, night min 5, weekend min 8); the metric policy runs inside those bounds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "autoscale/civil_time.h"
#include "autoscale/cron.h"
#include "autoscale/time_zone.h"

namespace surge::autoscale {

// A rule is in force during every minute whose local wall-clock reading its cron matches
// ("* 9-17 * * MON-FRI" = weekdays 09:00-17:59). It sets min and/or max replicas, or a fixed
// count (min = max = replicas).
struct ScheduleRule {
  std::string name;
  CronExpr cron;
  std::optional<int> min_replicas;
  std::optional<int> max_replicas;
  std::optional<int> replicas;  // fixed count; excludes min/max
};

struct ReplicaBounds {
  int min_replicas = 1;
  int max_replicas = 1;
  std::string source = "pool";  // "pool" or "schedule 'NAME'"
};

struct ActiveRule {
  size_t index = 0;  // into rules()
  Instant started;   // first minute of the current run of matching minutes
};

class Schedule {
 public:
  // How far back the start of a run of matching minutes is looked for; a rule matching for
  // longer than this (e.g. "* * * * *") counts as started this long ago.
  static constexpr int kMaxLookbackMinutes = 8 * 24 * 60;

  Schedule() = default;
  Schedule(TimeZone zone, std::vector<ScheduleRule> rules) : zone_(std::move(zone)), rules_(std::move(rules)) {}

  // Of the rules matching the minute containing `now`, the one whose run of matching minutes
  // started latest (the most specific override: "night" inside "weekend" wins at night);
  // ties go to the rule listed first. nullopt when no rule matches.
  std::optional<ActiveRule> Active(Instant now) const;
  // The pool's bounds with the active rule's values laid over them. What the rule sets wins
  // (the schedule is the operator's explicit intent): its min above the pool's max raises the
  // max, its max below the pool's min lowers the min.
  ReplicaBounds Bounds(Instant now, int pool_min_replicas, int pool_max_replicas) const;

  const std::vector<ScheduleRule>& rules() const { return rules_; }
  const TimeZone& zone() const { return zone_; }
  bool empty() const { return rules_.empty(); }

 private:
  bool MatchesMinute(const ScheduleRule& rule, int64_t minute_start_s) const;

  TimeZone zone_ = TimeZone::Utc();
  std::vector<ScheduleRule> rules_;
};

}  // namespace surge::autoscale
