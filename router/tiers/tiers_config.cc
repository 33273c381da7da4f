#include "router/tiers/tiers_config.h"

#include <array>
#include <functional>

namespace surge::router {
namespace {

using Json = nlohmann::json;

Status Unknown(const std::string& path) { return InvalidArgumentError("unknown config key '" + path + "'"); }
Status Bad(const std::string& path, const std::string& what) { return InvalidArgumentError(path + " " + what); }

// A per-tier object: {"realtime": v, ...}; `read` parses one value.
Status ReadPerTier(const Json& value, const std::string& path,
                   const std::function<Status(const Json&, const std::string&, int)>& read) {
  if (!value.is_object()) return Bad(path, "must be an object keyed by tier (realtime, normal, batch)");
  for (const auto& [name, item] : value.items()) {
    const std::optional<Tier> tier = ParseTierName(name);
    if (!tier) return Unknown(path + "." + name);
    RETURN_IF_ERROR(read(item, path + "." + name, TierIndex(*tier)));
  }
  return OkStatus();
}

Status ReadInt(const Json& value, const std::string& path, int64_t* out) {
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<uint64_t>() > INT32_MAX)) {
    return Bad(path, "must be an integer");
  }
  *out = value.get<int64_t>();
  return OkStatus();
}

template <typename T>
Status ReadIntAs(const Json& value, const std::string& path, T* out) {
  int64_t number = 0;
  RETURN_IF_ERROR(ReadInt(value, path, &number));
  if (number < INT32_MIN || number > INT32_MAX) return Bad(path, "is out of range");
  *out = static_cast<T>(number);
  return OkStatus();
}

Status ReadNumber(const Json& value, const std::string& path, double* out) {
  if (!value.is_number()) return Bad(path, "must be a number");
  *out = value.get<double>();
  return OkStatus();
}

Status ReadPoolName(const Json& value, const std::string& path, std::string* out) {
  if (!value.is_string() || value.get<std::string>().empty()) return Bad(path, "must be a non-empty string");
  *out = value.get<std::string>();
  return OkStatus();
}

// One top-level key of the section.
Status ReadKey(const std::string& key, const Json& value, const std::string& path, TiersConfig* config) {
  const std::string at = path + "." + key;
  if (key == "weights") {
    return ReadPerTier(value, at, [config](const Json& v, const std::string& p, int i) {
      return ReadIntAs(v, p, &config->admission.weights[i]);
    });
  }
  if (key == "max_queued") {
    return ReadPerTier(value, at, [config](const Json& v, const std::string& p, int i) {
      return ReadIntAs(v, p, &config->admission.max_queued[i]);
    });
  }
  if (key == "pools") {
    return ReadPerTier(value, at, [config](const Json& v, const std::string& p, int i) {
      return ReadPoolName(v, p, &config->borrow.pools[i]);
    });
  }
  if (key == "threshold_ms") {
    return ReadPerTier(value, at, [config](const Json& v, const std::string& p, int i) {
      return ReadNumber(v, p, &config->borrow.threshold_ms[i]);
    });
  }
  if (key == "window_ms") return ReadInt(value, at, &config->window.window_ms);
  if (key == "max_samples") return ReadIntAs(value, at, &config->window.max_samples);
  if (key == "min_samples") return ReadIntAs(value, at, &config->borrow.min_samples);
  if (key == "hysteresis") return ReadNumber(value, at, &config->borrow.hysteresis);
  if (key == "hold_ms") return ReadInt(value, at, &config->borrow.hold_ms);
  if (key == "eval_interval_ms") return ReadInt(value, at, &config->borrow.eval_interval_ms);
  if (key == "initial_hold_ms") return ReadInt(value, at, &config->admission.initial_hold_ms);
  return Unknown(at);
}

// The option structs' own validation names fields as the config does ("weights.batch").
Status Validate(const TiersConfig& config, const std::string& path) {
  TierAdmissionOptions admission = config.admission;
  admission.now_ms = [] { return int64_t{0}; };
  TtftWindowOptions window = config.window;
  window.now_ms = admission.now_ms;
  for (const Status& status : {ValidateTierAdmissionOptions(admission), ValidateTtftWindowOptions(window),
                               ValidateBorrowPolicyOptions(config.borrow)}) {
    if (!status.ok()) return InvalidArgumentError(path + "." + status.message());
  }
  return OkStatus();
}

}  // namespace

Status ParseTiersConfig(const Json& object, const std::string& path, TiersConfig* config) {
  if (!object.is_object()) return Bad(path, "must be an object");
  for (const auto& [key, value] : object.items()) {
    if (value.is_null()) continue;  // as RouteConfig: null = the default
    RETURN_IF_ERROR(ReadKey(key, value, path, config));
  }
  return Validate(*config, path);
}

}  // namespace surge::router
