#include "apps/alarm_rules_file.h"

#include "base/yaml/yaml_to_json.h"

namespace surge {

StatusOr<obs::AlarmConfig> LoadAlarmRulesFile(const std::string& path) {
  StatusOr<nlohmann::json> tree = LoadConfigFile(path);
  if (!tree.ok()) return tree.status();
  StatusOr<obs::AlarmConfig> config = obs::AlarmConfigFromJson(*tree);
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

}  // namespace surge
