// The alarm rules as Prometheus sees them: each rule's PromQL, and a whole rule file as a
// Prometheus alerting-rules YAML (`surge alarms export --prometheus`).
#pragma once

#include <string>

#include "obs/alarms/alarm_rules.h"

namespace surge::obs {

// The expression alone: `histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m])))`.
std::string ExpressionPromQL(const Expression& expr);
// With its comparison: `... > 2`.
std::string AlertExpressionPromQL(const AlarmRule& rule);

// One rule group named `group_name` evaluated every config.interval: alert, expr, for,
// keep_firing_for, labels.severity, annotations.summary and .action.
std::string PrometheusRulesYaml(const AlarmConfig& config, const std::string& group_name = "surge");

}  // namespace surge::obs
