// AlarmEvaluator: the rules' state machines, one alert per rule and group, driven by one
// scrape per evaluation. No threads and no clock of its own (AlarmRunner supplies both),
// so tests script the series and the times.
//
//   inactive --true--> pending --true for `for`--> firing --false for keep_firing_for--> resolved
//   pending --false--> inactive (gone);  resolved --true--> pending (or firing when for is 0)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "obs/alarms/alarm_rules.h"
#include "obs/exposition.h"
#include "obs/alarms/sample_history.h"

namespace surge::obs {

enum class AlertState { kInactive, kPending, kFiring, kResolved };
std::string_view AlertStateName(AlertState state);  // "inactive", "pending", ...

struct Alert {
  AlertState state = AlertState::kInactive;
  double value = 0;                // the expression's last value for this group
  int64_t active_since_ms = 0;     // the condition turned true (unix ms)
  int64_t firing_since_ms = 0;     // it started firing (Alertmanager's startsAt)
  int64_t false_since_ms = -1;     // firing, the condition false since (-1: it is true)
  int64_t resolved_at_ms = 0;      // Alertmanager's endsAt
  std::string last_action_result;  // "" until an action ran: "ok: ...", "error: ..."
  int64_t last_action_ms = 0;
};

// One change of an alert (or, with `repeat`, a firing alert still firing: scale_up asks
// again each evaluation) for the actions to act on.
struct AlertEvent {
  size_t rule_index = 0;
  Labels group;  // the group_by labels' values
  AlertState to = AlertState::kInactive;
  bool repeat = false;
  double value = 0;
  int64_t firing_since_ms = 0;
  int64_t resolved_at_ms = 0;
};

class AlarmEvaluator {
 public:
  // Resolved alerts stay visible (GET /alarms) this long, then are dropped.
  static constexpr int64_t kResolvedRetentionMs = 15 * 60 * 1000;

  explicit AlarmEvaluator(AlarmConfig config);

  // One evaluation at `now_ms` (increasing) on a fresh scrape; the events in rule order. A
  // rule whose expression throws has no values this time (its alerts go quiet) and its error
  // is in last_errors(); the other rules are evaluated all the same.
  std::vector<AlertEvent> Evaluate(int64_t now_ms, const Exposition& exposition);
  // The rules that failed in the last Evaluate: (rule index, error).
  const std::vector<std::pair<size_t, std::string>>& last_errors() const { return last_errors_; }
  // Records what an action did with an event's alert (when it still exists).
  void SetActionResult(size_t rule_index, const Labels& group, std::string result, int64_t now_ms);

  const AlarmConfig& config() const { return config_; }
  const std::map<Labels, Alert>& alerts(size_t rule_index) const { return rules_[rule_index].alerts; }
  // Alerts of the rule in `state` now.
  int NumInState(size_t rule_index, AlertState state) const;
  // GET /alarms: every rule (with its last values per group) and every alert.
  nlohmann::json ToJson() const;

 private:
  struct RuleState {
    std::map<Labels, Alert> alerts;
    std::map<Labels, double> last_values;  // the last evaluation's value per group
  };
  // Steps one alert with this evaluation's condition; appends what changed.
  void Step(size_t rule_index, const Labels& group, bool condition, int64_t now_ms, std::vector<AlertEvent>* events);

  const AlarmConfig config_;
  SampleHistory history_;
  std::vector<RuleState> rules_;
  int64_t last_evaluation_ms_ = 0;
  std::vector<std::pair<size_t, std::string>> last_errors_;
};

// RFC 3339 in UTC with milliseconds: "2024-05-01T12:00:00.250Z".
std::string FormatRfc3339(int64_t unix_ms);

}  // namespace surge::obs
