// AlarmRunner: `--alarm-rules` in a running process. A thread of its own scrapes the
// process's own metrics text every interval, runs the AlarmEvaluator, keeps the
// surge_alarms / surge_alarm_transitions_total / surge_alarm_actions_total /
// surge_alarm_evaluation_errors_total families and
// hands each event to its rule's action. Nothing here blocks a request or the engine: the
// scrape is the same read /metrics does, and actions must return at once (a webhook queues).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/periodic_thread.h"
#include "base/status.h"
#include "obs/alarms/alarm_evaluator.h"
#include "obs/metrics.h"

namespace surge::obs {

// An action's outcome: OK (detail says what was done) or the error. Called exactly once.
using ActionDone = std::function<void(const Status& result, const std::string& detail)>;
// Performs `rule`'s action for `event`. Must not block; may call `done` before returning
// or later from another thread.
using AlarmActionFunction = std::function<void(const AlarmRule& rule, const AlertEvent& event, ActionDone done)>;
// Builds the action function of one rule at start-up, or refuses the rule (why it cannot
// act in this process: no autoscaler for the pool, no spawned workers, a bad URL).
using AlarmActionFactory = std::function<StatusOr<AlarmActionFunction>(const AlarmRule& rule)>;

struct AlarmRunnerOptions {
  std::string process_name;  // "surge serve", "surge route": in log lines and errors
  // The process's metrics text, as GET /metrics renders it (gauges refreshed).
  std::function<std::string()> scrape;
  Registry* registry = nullptr;  // gets the surge_alarm* families
  // Action types other than log (built in); a type without a factory is refused.
  std::map<AlarmAction::Type, AlarmActionFactory> factories;
};

class AlarmRunner {
 public:
  // Builds every rule's action (errors name the rule), scrapes once to check that each
  // metric a rule reads has the right type (a metric this process does not expose yet is
  // a warning on stderr, not an error), and starts evaluating.
  static StatusOr<std::unique_ptr<AlarmRunner>> Start(AlarmConfig config, AlarmRunnerOptions options);
  ~AlarmRunner();  // Stop()
  void Stop();

  // GET /alarms.
  nlohmann::json ToJson() const;

 private:
  AlarmRunner(AlarmConfig config, AlarmRunnerOptions options);
  // One evaluation; returns the wait until the next one on the fixed cadence.
  PeriodicThread::Duration Tick();
  void EvaluateOnce(int64_t now_ms);
  void Dispatch(const AlertEvent& event);
  void OnActionDone(const AlertEvent& event, const Status& result, const std::string& detail);
  void RefreshStateGauges();  // mu_ held

  const AlarmRunnerOptions options_;
  const AlarmConfig config_;
  std::vector<AlarmActionFunction> actions_;  // per rule; empty function: log
  GaugeFamily& alarms_;
  CounterFamily& transitions_;
  CounterFamily& action_results_;
  CounterFamily& evaluation_errors_;  // surge_alarm_evaluation_errors_total{alarm}
  mutable std::mutex mu_;
  AlarmEvaluator evaluator_;  // guarded by mu_
  int64_t next_ms_ = 0;       // the next evaluation's time on the cadence; the thread's own
  PeriodicThread thread_;
};

// Each metric a rule reads, checked against the TYPE lines of one scrape: INVALID_ARGUMENT
// naming the rule when the type cannot work (rate of a gauge, quantile of a non-histogram);
// `missing` gets the rules whose metric is not there at all.
Status CheckRuleMetrics(const AlarmConfig& config, const Exposition& exposition, std::vector<std::string>* missing);

}  // namespace surge::obs
