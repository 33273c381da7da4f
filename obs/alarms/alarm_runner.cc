#include "obs/alarms/alarm_runner.h"

#include <chrono>
#include <cstdio>

#include "obs/metrics.h"

namespace surge::obs {
namespace {

int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string GroupText(const Labels& group) {
  std::string text;
  for (const auto& [name, value] : group) text += (text.empty() ? "{" : ",") + name + "=\"" + value + "\"";
  return text.empty() ? text : text + "}";
}

// Which events an action acts on: log on every change; webhook on firing and resolved;
// scale_up on firing and again on every evaluation while it fires (a level input to the
// autoscaler, as the tiers' needs-capacity signal is); restart_instance once per firing.
bool ActsOn(AlarmAction::Type type, const AlertEvent& event) {
  switch (type) {
    case AlarmAction::Type::kLog: return !event.repeat;
    case AlarmAction::Type::kWebhook: return !event.repeat && (event.to == AlertState::kFiring || event.to == AlertState::kResolved);
    case AlarmAction::Type::kScaleUp: return event.to == AlertState::kFiring;
    case AlarmAction::Type::kRestartInstance: return !event.repeat && event.to == AlertState::kFiring;
  }
  return false;
}

// The metric types an expression kind can read ("untyped" always passes).
bool TypeFits(ExprKind kind, const std::string& type) {
  if (type == "untyped") return true;
  switch (kind) {
    case ExprKind::kValue: return type == "gauge" || type == "counter";
    case ExprKind::kRate:
    case ExprKind::kRatio: return type == "counter";
    case ExprKind::kQuantile: return type == "histogram";
  }
  return false;
}

}  // namespace

Status CheckRuleMetrics(const AlarmConfig& config, const Exposition& exposition, std::vector<std::string>* missing) {
  for (const AlarmRule& rule : config.rules) {
    std::vector<std::string> metrics{rule.expr.selector.metric};
    if (rule.expr.kind == ExprKind::kRatio) metrics.push_back(rule.expr.denominator.metric);
    for (const std::string& metric : metrics) {
      auto it = exposition.types.find(metric);
      if (it == exposition.types.end()) {
        missing->push_back("rule " + rule.name + ": this process has no metric '" + metric + "' (yet)");
      } else if (!TypeFits(rule.expr.kind, it->second)) {
        return InvalidArgumentError("rule " + rule.name + ": expr: '" + metric + "' is a " + it->second +
                                    ", which this expression kind cannot read");
      }
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<AlarmRunner>> AlarmRunner::Start(AlarmConfig config, AlarmRunnerOptions options) {
  std::vector<AlarmActionFunction> actions;
  for (const AlarmRule& rule : config.rules) {
    if (rule.action.type == AlarmAction::Type::kLog) {
      actions.emplace_back();
      continue;
    }
    auto factory = options.factories.find(rule.action.type);
    if (factory == options.factories.end()) {
      return InvalidArgumentError("rule " + rule.name + ": action " + std::string(ActionTypeName(rule.action.type)) +
                                  " is not available in " + options.process_name);
    }
    StatusOr<AlarmActionFunction> action = factory->second(rule);
    if (!action.ok()) return action.status().WithContext("rule " + rule.name + ": action");
    actions.push_back(std::move(action).value());
  }
  StatusOr<Exposition> first = ParseExposition(options.scrape());
  if (!first.ok()) return first.status().WithContext("alarm rules: reading this process's metrics");
  std::vector<std::string> missing;
  RETURN_IF_ERROR(CheckRuleMetrics(config, *first, &missing));
  for (const std::string& line : missing) std::fprintf(stderr, "%s: alarm %s\n", options.process_name.c_str(), line.c_str());
  std::unique_ptr<AlarmRunner> runner(new AlarmRunner(std::move(config), std::move(options)));
  runner->actions_ = std::move(actions);
  runner->next_ms_ = UnixNowMs();
  runner->thread_.Start([raw = runner.get()] { return raw->Tick(); });
  return runner;
}

AlarmRunner::AlarmRunner(AlarmConfig config, AlarmRunnerOptions options)
    : options_(std::move(options)),
      config_(config),
      alarms_(options_.registry->AddGaugeFamily("surge_alarms",
                                                "Alerts of each alarm rule in each state (pending, firing)",
                                                {"alarm", "severity", "state"})),
      transitions_(options_.registry->AddCounterFamily(
          "surge_alarm_transitions_total", "Alert state changes by rule and new state", {"alarm", "to"})),
      action_results_(options_.registry->AddCounterFamily(
          "surge_alarm_actions_total", "Alarm actions run, by rule, action type and result (ok, error)",
          {"alarm", "action", "result"})),
      evaluation_errors_(options_.registry->AddCounterFamily(
          "surge_alarm_evaluation_errors_total",
          "Alarm rule evaluations that failed (the rule had no value that time; the others went on)", {"alarm"})),
      evaluator_(std::move(config)) {
  std::lock_guard<std::mutex> lock(mu_);
  RefreshStateGauges();
}

AlarmRunner::~AlarmRunner() {
  Stop();
  // Webhook senders finish (or drop) their queue here and report back while we still exist.
  actions_.clear();
}

void AlarmRunner::Stop() { thread_.Stop(); }

nlohmann::json AlarmRunner::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evaluator_.ToJson();
}

PeriodicThread::Duration AlarmRunner::Tick() {
  // Evaluations keep to a fixed cadence (start + k * interval, as Prometheus aligns its
  // rule groups), so that `for` and keep_firing_for compare exact multiples of it.
  const int64_t interval_ms = config_.interval.count();
  EvaluateOnce(next_ms_);
  next_ms_ += interval_ms;
  const int64_t now_ms = UnixNowMs();
  if (next_ms_ < now_ms) next_ms_ += (now_ms - next_ms_) / interval_ms * interval_ms + interval_ms;  // fell behind
  return std::chrono::milliseconds(next_ms_ - now_ms);
}

void AlarmRunner::EvaluateOnce(int64_t now_ms) {
  StatusOr<Exposition> exposition = ParseExposition(options_.scrape());
  if (!exposition.ok()) {
    std::fprintf(stderr, "%s: alarms: cannot read the metrics: %s\n", options_.process_name.c_str(),
                 exposition.status().message().c_str());
    return;
  }
  std::vector<AlertEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events = evaluator_.Evaluate(now_ms, *exposition);
    for (const auto& [rule_index, error] : evaluator_.last_errors()) {
      std::fprintf(stderr, "%s: alarm %s: evaluation failed: %s\n", options_.process_name.c_str(),
                   config_.rules[rule_index].name.c_str(), error.c_str());
      evaluation_errors_.WithLabels({config_.rules[rule_index].name}).Increment();
    }
    for (const AlertEvent& event : events) {
      if (!event.repeat) transitions_.WithLabels({config_.rules[event.rule_index].name, AlertStateName(event.to)}).Increment();
    }
    RefreshStateGauges();
  }
  // Outside the lock: an action may report back at once (OnActionDone locks).
  for (const AlertEvent& event : events) {
    try {
      Dispatch(event);
    } catch (const std::exception& e) {  // that action fails (counted as an error), the rest go on
      OnActionDone(event, InternalError(std::string("the action threw: ") + e.what()), "");
    }
  }
}

void AlarmRunner::Dispatch(const AlertEvent& event) {
  const AlarmRule& rule = config_.rules[event.rule_index];
  if (!ActsOn(rule.action.type, event)) return;
  if (rule.action.type == AlarmAction::Type::kLog) {
    std::fprintf(stderr, "%s: alarm %s%s %s (severity %s, value %g %s %g)%s%s\n", options_.process_name.c_str(),
                 rule.name.c_str(), GroupText(event.group).c_str(), std::string(AlertStateName(event.to)).c_str(),
                 rule.severity.c_str(), event.value, std::string(ComparisonText(rule.comparison)).c_str(),
                 rule.threshold, rule.summary.empty() ? "" : ": ", rule.summary.c_str());
    return OnActionDone(event, OkStatus(), "logged");
  }
  actions_[event.rule_index](rule, event, [this, event](const Status& result, const std::string& detail) {
    OnActionDone(event, result, detail);
  });
}

void AlarmRunner::OnActionDone(const AlertEvent& event, const Status& result, const std::string& detail) {
  const AlarmRule& rule = config_.rules[event.rule_index];
  const std::string text = result.ok() ? "ok: " + detail : "error: " + result.message();
  if (!result.ok()) {
    std::fprintf(stderr, "%s: alarm %s%s: %s %s\n", options_.process_name.c_str(), rule.name.c_str(),
                 GroupText(event.group).c_str(), std::string(ActionTypeName(rule.action.type)).c_str(), text.c_str());
  }
  action_results_.WithLabels({rule.name, ActionTypeName(rule.action.type), result.ok() ? "ok" : "error"}).Increment();
  std::lock_guard<std::mutex> lock(mu_);
  evaluator_.SetActionResult(event.rule_index, event.group, text, UnixNowMs());
}

void AlarmRunner::RefreshStateGauges() {
  for (size_t i = 0; i < config_.rules.size(); ++i) {
    const AlarmRule& rule = config_.rules[i];
    for (AlertState state : {AlertState::kPending, AlertState::kFiring}) {
      alarms_.WithLabels({rule.name, rule.severity, AlertStateName(state)}).Set(evaluator_.NumInState(i, state));
    }
  }
}

}  // namespace surge::obs
