// FlagParser's sources below the command line: SURGE_<FLAG> environment variables and the
// --config file (base/flags.h has the precedence).
#include <unistd.h>  // environ (g++ defines _GNU_SOURCE)

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "base/flags.h"
#include "base/yaml/yaml_to_json.h"

namespace surge {
namespace {

// "max_model_len" and "max-model-len" are the same key (vLLM's config files use either).
std::string KeyToFlagName(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// A config value as the text the command line would carry: scalars as written, a list of
// scalars joined with commas (for flags that take several values, e.g. api-key).
StatusOr<std::string> ConfigValueText(const std::string& key, const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return std::string(value.get<bool>() ? "true" : "false");
  if (value.is_number()) return value.dump();
  if (value.is_array()) {
    std::string joined;
    for (const nlohmann::json& item : value) {
      if (item.is_array() || item.is_object() || item.is_null()) break;
      ASSIGN_OR_RETURN(std::string text, ConfigValueText(key, item));
      joined += (joined.empty() ? "" : ",") + text;
    }
    if (std::all_of(value.begin(), value.end(), [](const nlohmann::json& item) { return item.is_primitive() && !item.is_null(); })) {
      return joined;
    }
  }
  return InvalidArgumentError("key '" + key + "': expected a string, number, boolean or list of them");
}

}  // namespace

std::string FlagEnvironmentName(const std::string& flag) {
  std::string name = "SURGE_";
  for (char c : flag) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const size_t eq = text.find('=');
    if (eq != std::string::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

// Unknown SURGE_ variables are left alone: other commands' flags and the test harness's
// settings share the prefix.
Status FlagParser::ApplyEnvironment(const Environment& env, std::string* config_path) {
  if (OwnsConfigFlag() && config_path->empty()) {
    if (auto it = env.find("SURGE_CONFIG"); it != env.end()) *config_path = it->second;
  }
  for (auto& [name, flag] : flags_) {
    if (flag.source == FlagSource::kCommandLine) continue;
    std::vector<std::string> variables = {FlagEnvironmentName(name)};
    variables.insert(variables.end(), flag.env_aliases.begin(), flag.env_aliases.end());
    for (const std::string& variable : variables) {
      auto it = env.find(variable);
      if (it == env.end()) continue;
      if (Status status = Assign(name, flag, it->second, FlagSource::kEnvironment); !status.ok()) {
        return status.WithContext(variable);
      }
      break;
    }
  }
  return OkStatus();
}

Status FlagParser::ApplyConfigFile(const std::string& path) {
  StatusOr<nlohmann::json> tree = LoadConfigFile(path);
  if (!tree.ok()) return tree.status().WithContext("--config");
  if (tree->is_null()) return OkStatus();  // an empty file
  if (!tree->is_object()) return InvalidArgumentError("--config " + path + ": expected a mapping of flag names to values");
  for (const auto& [key, value] : tree->items()) {
    std::string canonical;
    bool negated = false;
    Flag* flag = Find(KeyToFlagName(key), &canonical, &negated);
    if (flag == nullptr || negated) {
      return InvalidArgumentError("--config " + path + ": unknown key '" + key + "' (not a flag of `surge " +
                                  command_ + "`)");
    }
    StatusOr<std::string> text = ConfigValueText(key, value);
    if (!text.ok()) return text.status().WithContext("--config " + path);
    if (flag->source == FlagSource::kConfigFile) {
      return InvalidArgumentError("--config " + path + ": --" + canonical + " given twice (key '" + key + "')");
    }
    if (flag->source != FlagSource::kDefault) continue;  // the command line or environment gave it
    if (Status status = Assign(canonical, *flag, *text, FlagSource::kConfigFile); !status.ok()) {
      return status.WithContext("--config " + path + ": key '" + key + "'");
    }
  }
  return OkStatus();
}

}  // namespace surge
