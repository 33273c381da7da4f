// The alarm rules' webhook action over net::HttpClient: POSTs an Alertmanager-style JSON
// alert on firing and on resolved, retrying on no answer, 429 and 5xx with doubling
// back-off, on a thread of its own (the evaluator only queues). Its own library: obs/
// itself depends on base/ only.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "obs/alarms/alarm_runner.h"

namespace surge::obs {

// The factory for AlarmRunnerOptions::factories[kWebhook]. Each rule gets its own sender
// (a queue of at most 256 POSTs; past it an alert is dropped and reported as an error).
StatusOr<AlarmActionFunction> MakeWebhookAction(const AlarmRule& rule);

// The POST body: Alertmanager's webhook payload (version 4) with this one alert, whose
// status, labels (alertname, severity, the group), annotations (summary, description),
// startsAt, endsAt and value are set; `generator` names the process.
nlohmann::json WebhookPayload(const AlarmRule& rule, const AlertEvent& event, const std::string& generator);

}  // namespace surge::obs
