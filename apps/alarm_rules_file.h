// --alarm-rules FILE (surge serve, surge route, surge alarms export): a YAML or JSON rule
// file read into obs::AlarmConfig (obs/README.md "Alarms").
#pragma once

#include <string>

#include "base/status.h"
#include "obs/alarms/alarm_rules.h"

namespace surge {

// Errors name the file: "deploy/alarms/seed_rules.yaml: rules[1] (ErrorRatio).for: ...".
StatusOr<obs::AlarmConfig> LoadAlarmRulesFile(const std::string& path);

}  // namespace surge
