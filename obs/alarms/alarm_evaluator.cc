#include "obs/alarms/alarm_evaluator.h"

#include <time.h>

#include <cmath>
#include <cstdio>

#include "obs/alarms/prometheus_export.h"

namespace surge::obs {
namespace {

using Json = nlohmann::json;

// JSON has no infinities; a ratio over nothing reads +Inf.
Json NumberJson(double value) {
  if (std::isfinite(value)) return value;
  return std::isnan(value) ? Json("NaN") : Json(value > 0 ? "+Inf" : "-Inf");
}

Json AlertJson(const AlarmRule& rule, const Labels& group, const Alert& alert) {
  Labels labels = group;
  labels["alertname"] = rule.name;
  labels["severity"] = rule.severity;
  Json json{{"rule", rule.name}, {"labels", labels}, {"state", AlertStateName(alert.state)},
            {"value", NumberJson(alert.value)}, {"active_since", FormatRfc3339(alert.active_since_ms)}};
  if (alert.state == AlertState::kFiring || alert.state == AlertState::kResolved) {
    json["firing_since"] = FormatRfc3339(alert.firing_since_ms);
  }
  if (alert.state == AlertState::kResolved) json["resolved_at"] = FormatRfc3339(alert.resolved_at_ms);
  if (!alert.last_action_result.empty()) {
    json["last_action"] = {{"result", alert.last_action_result}, {"at", FormatRfc3339(alert.last_action_ms)}};
  }
  return json;
}

}  // namespace

std::string_view AlertStateName(AlertState state) {
  static constexpr std::string_view kNames[] = {"inactive", "pending", "firing", "resolved"};
  return kNames[static_cast<int>(state)];
}

std::string FormatRfc3339(int64_t unix_ms) {
  const time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(unix_ms % 1000));
  return text;
}

AlarmEvaluator::AlarmEvaluator(AlarmConfig config)
    : config_(std::move(config)),
      history_(config_.LongestWindow() + config_.interval, SampleNamesOf(config_)),
      rules_(config_.rules.size()) {}

std::vector<AlertEvent> AlarmEvaluator::Evaluate(int64_t now_ms, const Exposition& exposition) {
  history_.Add(now_ms, exposition);
  last_evaluation_ms_ = now_ms;
  std::vector<AlertEvent> events;
  last_errors_.clear();
  for (size_t i = 0; i < config_.rules.size(); ++i) {
    const AlarmRule& rule = config_.rules[i];
    RuleState& state = rules_[i];
    try {
      state.last_values = EvaluateExpression(rule.expr, history_);
    } catch (const std::exception& e) {  // one rule fails, the others go on
      state.last_values.clear();
      last_errors_.emplace_back(i, e.what());
    }
    for (const auto& [group, value] : state.last_values) {
      const bool condition = Compare(value, rule.comparison, rule.threshold);
      if (condition || state.alerts.count(group)) {
        state.alerts[group].value = value;
        Step(i, group, condition, now_ms, &events);
      }
    }
    // Groups without data this time: their condition is false (as an empty PromQL result).
    std::vector<Labels> quiet;
    for (const auto& [group, alert] : state.alerts) {
      if (!state.last_values.count(group)) quiet.push_back(group);
    }
    for (const Labels& group : quiet) Step(i, group, false, now_ms, &events);
  }
  return events;
}

void AlarmEvaluator::Step(size_t rule_index, const Labels& group, bool condition, int64_t now_ms,
                          std::vector<AlertEvent>* events) {
  const AlarmRule& rule = config_.rules[rule_index];
  std::map<Labels, Alert>& alerts = rules_[rule_index].alerts;
  Alert& alert = alerts[group];
  auto emit = [&](AlertState to, bool repeat) {
    events->push_back({rule_index, group, to, repeat, alert.value, alert.firing_since_ms, alert.resolved_at_ms});
  };
  auto fire = [&] {
    alert.state = AlertState::kFiring;
    alert.firing_since_ms = now_ms;
    alert.false_since_ms = -1;
    emit(AlertState::kFiring, false);
  };
  switch (alert.state) {
    case AlertState::kInactive:
    case AlertState::kResolved:
      if (!condition) {
        if (alert.state == AlertState::kInactive || now_ms - alert.resolved_at_ms >= kResolvedRetentionMs) {
          alerts.erase(group);
        }
        return;
      }
      alert.active_since_ms = now_ms;
      if (rule.for_duration.count() == 0) return fire();
      alert.state = AlertState::kPending;
      return emit(AlertState::kPending, false);
    case AlertState::kPending:
      if (!condition) {
        alert.state = AlertState::kInactive;
        emit(AlertState::kInactive, false);
        alerts.erase(group);
        return;
      }
      if (now_ms - alert.active_since_ms >= rule.for_duration.count()) fire();
      return;
    case AlertState::kFiring:
      if (condition) {
        alert.false_since_ms = -1;
        return emit(AlertState::kFiring, true);
      }
      if (alert.false_since_ms < 0) alert.false_since_ms = now_ms;
      if (now_ms - alert.false_since_ms < rule.keep_firing_for.count()) return;
      alert.state = AlertState::kResolved;
      alert.resolved_at_ms = now_ms;
      return emit(AlertState::kResolved, false);
  }
}

void AlarmEvaluator::SetActionResult(size_t rule_index, const Labels& group, std::string result, int64_t now_ms) {
  auto& alerts = rules_[rule_index].alerts;
  auto it = alerts.find(group);
  if (it == alerts.end()) return;
  it->second.last_action_result = std::move(result);
  it->second.last_action_ms = now_ms;
}

int AlarmEvaluator::NumInState(size_t rule_index, AlertState state) const {
  int num = 0;
  for (const auto& [group, alert] : rules_[rule_index].alerts) num += alert.state == state ? 1 : 0;
  return num;
}

Json AlarmEvaluator::ToJson() const {
  Json rules = Json::array();
  Json alerts = Json::array();
  for (size_t i = 0; i < config_.rules.size(); ++i) {
    const AlarmRule& rule = config_.rules[i];
    const char* state = NumInState(i, AlertState::kFiring) ? "firing" : NumInState(i, AlertState::kPending) ? "pending" : "inactive";
    Json values = Json::array();
    for (const auto& [group, value] : rules_[i].last_values) values.push_back({{"labels", group}, {"value", NumberJson(value)}});
    rules.push_back({{"name", rule.name}, {"expr", AlertExpressionPromQL(rule)}, {"severity", rule.severity},
                     {"for_s", rule.for_duration.count() / 1000.0}, {"keep_firing_for_s", rule.keep_firing_for.count() / 1000.0},
                     {"action", ActionTypeName(rule.action.type)}, {"state", state}, {"values", values}});
    for (const auto& [group, alert] : rules_[i].alerts) alerts.push_back(AlertJson(rule, group, alert));
  }
  return {{"interval_s", config_.interval.count() / 1000.0},
          {"last_evaluation", last_evaluation_ms_ ? Json(FormatRfc3339(last_evaluation_ms_)) : Json(nullptr)},
          {"rules", rules}, {"alerts", alerts}};
}

}  // namespace surge::obs
