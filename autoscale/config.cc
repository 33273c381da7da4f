// The JSON policy file: every key is read through a Fields object that refuses the ones it
// was not asked for, so a misspelled key fails loudly instead of silently doing nothing.
#include <cctype>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "autoscale/autoscaler.h"
#include "autoscale/read_file.h"
#include "base/duration.h"

namespace surge::autoscale {
namespace {

using Json = nlohmann::json;
constexpr size_t kMaxPolicyBytes = 1 << 20;

// One JSON object at a path ("pools.default.scale_up"); typed getters that name the key.
class Fields {
 public:
  Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  Status CheckObject() const {
    return object_.is_object() ? OkStatus() : Error("", "expected an object");
  }
  // Refuses every key no getter asked for.
  Status CheckNoUnknownKeys() const {
    for (const auto& [key, value] : object_.items()) {
      if (!asked_.count(key)) return Error("", "unknown key '" + key + "'");
    }
    return OkStatus();
  }
  const Json* Find(const std::string& key) {
    asked_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  Status Number(const std::string& key, double* out) {
    const Json* v = Find(key);
    if (!v) return OkStatus();
    if (!v->is_number() || !std::isfinite(v->get<double>())) return Error(key, "expected a number");
    *out = v->get<double>();
    return OkStatus();
  }
  Status Number(const std::string& key, std::optional<double>* out) {
    double value = 0;
    if (!Find(key)) return OkStatus();
    RETURN_IF_ERROR(Number(key, &value));
    *out = value;
    return OkStatus();
  }
  Status Int(const std::string& key, int* out) {
    const Json* v = Find(key);
    if (!v) return OkStatus();
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1000000) {
      return Error(key, "expected a non-negative integer");
    }
    *out = static_cast<int>(v->get<int64_t>());
    return OkStatus();
  }
  Status Int(const std::string& key, std::optional<int>* out) {
    int value = 0;
    if (!Find(key)) return OkStatus();
    RETURN_IF_ERROR(Int(key, &value));
    *out = value;
    return OkStatus();
  }
  Status Bool(const std::string& key, bool* out) {
    const Json* v = Find(key);
    if (!v) return OkStatus();
    if (!v->is_boolean()) return Error(key, "expected true or false");
    *out = v->get<bool>();
    return OkStatus();
  }
  Status String(const std::string& key, std::string* out) {
    const Json* v = Find(key);
    if (!v) return OkStatus();
    if (!v->is_string()) return Error(key, "expected a string");
    *out = v->get<std::string>();
    return OkStatus();
  }
  Status Time(const std::string& key, Duration* out) {
    const Json* v = Find(key);
    if (!v) return OkStatus();
    if (!v->is_string()) return Error(key, "expected a duration string like \"30s\" or \"5m\"");
    StatusOr<Duration> parsed = ParseDuration(v->get<std::string>());
    if (!parsed.ok()) return Error(key, parsed.status().message());
    *out = *parsed;
    return OkStatus();
  }
  Status Error(const std::string& key, const std::string& what) const {
    std::string where = path_.empty() ? key : (key.empty() ? path_ : path_ + "." + key);
    return InvalidArgumentError("autoscale policy: " + (where.empty() ? "" : where + ": ") + what);
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const Json& object_;
  std::string path_;
  std::set<std::string> asked_;
};

Status ReadTargets(const Json& json, const std::string& path, ScalingTargets* t) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  RETURN_IF_ERROR(f.Number("queue_depth_per_replica", &t->queue_depth_per_replica));
  RETURN_IF_ERROR(f.Number("kv_usage", &t->kv_usage));
  RETURN_IF_ERROR(f.Number("busy_fraction", &t->busy_fraction));
  if (f.Find("ttft_p95")) {
    Duration ttft{0};
    RETURN_IF_ERROR(f.Time("ttft_p95", &ttft));
    t->ttft_p95_s = std::chrono::duration<double>(ttft).count();
  }
  return f.CheckNoUnknownKeys();
}

Status ReadBehavior(const Json& json, const std::string& path, bool up, ScalingPolicyConfig* c) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  if (up) {
    RETURN_IF_ERROR(f.Time("stabilization", &c->scale_up.stabilization));
    RETURN_IF_ERROR(f.Number("max_factor", &c->scale_up.max_factor));
    RETURN_IF_ERROR(f.Int("max_step_replicas", &c->scale_up.max_step_replicas));
    RETURN_IF_ERROR(f.Time("period", &c->scale_up.period));
  } else {
    RETURN_IF_ERROR(f.Time("stabilization", &c->scale_down.stabilization));
    RETURN_IF_ERROR(f.Number("max_percent", &c->scale_down.max_percent));
    RETURN_IF_ERROR(f.Time("period", &c->scale_down.period));
  }
  return f.CheckNoUnknownKeys();
}

Status ReadClass(const Json& json, const std::string& path, CapacityClassConfig* c) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  std::optional<int> max_replicas;
  RETURN_IF_ERROR(f.String("name", &c->name));
  RETURN_IF_ERROR(f.Int("max_replicas", &max_replicas));
  RETURN_IF_ERROR(f.Number("usd_per_hour", &c->usd_per_hour));
  RETURN_IF_ERROR(f.Bool("preemptible", &c->preemptible));
  RETURN_IF_ERROR(f.Time("initial_backoff", &c->initial_backoff));
  RETURN_IF_ERROR(f.Time("max_backoff", &c->max_backoff));
  RETURN_IF_ERROR(f.Time("backoff_reset", &c->backoff_reset));
  RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  if (!max_replicas) return f.Error("max_replicas", "required");
  c->max_replicas = *max_replicas;
  return OkStatus();
}

Status ReadRule(const Json& json, const std::string& path, std::vector<ScheduleRule>* rules) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  std::string name, cron;
  std::optional<int> min_replicas, max_replicas, replicas;
  RETURN_IF_ERROR(f.String("name", &name));
  RETURN_IF_ERROR(f.String("cron", &cron));
  RETURN_IF_ERROR(f.Int("min_replicas", &min_replicas));
  RETURN_IF_ERROR(f.Int("max_replicas", &max_replicas));
  RETURN_IF_ERROR(f.Int("replicas", &replicas));
  RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  if (name.empty()) return f.Error("name", "required");
  if (cron.empty()) return f.Error("cron", "required");
  StatusOr<CronExpr> expr = CronExpr::Parse(cron);
  if (!expr.ok()) return f.Error("cron", expr.status().message());
  if (replicas && (min_replicas || max_replicas)) {
    return f.Error("replicas", "a fixed count excludes min_replicas and max_replicas");
  }
  if (!replicas && !min_replicas && !max_replicas) return f.Error("", "set min_replicas, max_replicas or replicas");
  if (min_replicas && max_replicas && *min_replicas > *max_replicas) {
    return f.Error("min_replicas", "is above max_replicas");
  }
  rules->push_back(ScheduleRule{name, *expr, min_replicas, max_replicas, replicas});
  return OkStatus();
}

Status ReadSchedule(const Json& json, const std::string& path, std::string_view zoneinfo_dir, Schedule* out) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  std::string zone_name = "UTC";
  RETURN_IF_ERROR(f.String("time_zone", &zone_name));
  TimeZone zone = TimeZone::Utc();
  if (zone_name != "UTC") {
    StatusOr<TimeZone> loaded = TimeZone::Load(zone_name, zoneinfo_dir);
    if (!loaded.ok()) return f.Error("time_zone", loaded.status().message());
    zone = *loaded;
  }
  std::vector<ScheduleRule> rules;
  const Json* list = f.Find("rules");
  if (!list || !list->is_array()) return f.Error("rules", "expected an array of rules");
  for (size_t i = 0; i < list->size(); ++i) {
    RETURN_IF_ERROR(ReadRule((*list)[i], f.Path("rules") + "[" + std::to_string(i) + "]", &rules));
  }
  RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  *out = Schedule(std::move(zone), std::move(rules));
  return OkStatus();
}

Status ReadPool(const Json& json, const std::string& name, std::string_view zoneinfo_dir, PoolConfig* pool) {
  std::string path = "pools." + name;
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  pool->name = name;
  ScalingPolicyConfig& c = pool->policy;
  RETURN_IF_ERROR(f.Int("min_replicas", &c.min_replicas));
  RETURN_IF_ERROR(f.Int("max_replicas", &c.max_replicas));
  RETURN_IF_ERROR(f.Number("tolerance", &c.tolerance));
  if (const Json* v = f.Find("targets")) RETURN_IF_ERROR(ReadTargets(*v, f.Path("targets"), &c.targets));
  if (const Json* v = f.Find("scale_up")) RETURN_IF_ERROR(ReadBehavior(*v, f.Path("scale_up"), true, &c));
  if (const Json* v = f.Find("scale_down")) RETURN_IF_ERROR(ReadBehavior(*v, f.Path("scale_down"), false, &c));
  if (const Json* v = f.Find("classes")) {
    if (!v->is_array()) return f.Error("classes", "expected an array");
    for (size_t i = 0; i < v->size(); ++i) {
      pool->classes.emplace_back();
      RETURN_IF_ERROR(ReadClass((*v)[i], f.Path("classes") + "[" + std::to_string(i) + "]", &pool->classes.back()));
    }
  }
  if (const Json* v = f.Find("schedule")) RETURN_IF_ERROR(ReadSchedule(*v, f.Path("schedule"), zoneinfo_dir, &pool->schedule));
  RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  Status valid = ValidatePolicyConfig(c);
  if (valid.ok()) valid = ValidateCapacityClasses(pool->classes);
  return valid.ok() ? OkStatus() : valid.WithContext("autoscale policy: " + path);
}

}  // namespace

StatusOr<Duration> ParseDuration(std::string_view text) { return surge::ParseDuration(text); }

StatusOr<AutoscaleConfig> ParseAutoscaleConfig(std::string_view json_text, std::string_view zoneinfo_dir) {
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgumentError("autoscale policy: not valid JSON");
  Fields f(root, "");
  RETURN_IF_ERROR(f.CheckObject());
  AutoscaleConfig config;
  RETURN_IF_ERROR(f.Time("interval", &config.interval));
  if (config.interval.count() <= 0) return f.Error("interval", "must be > 0");
  const Json* pools = f.Find("pools");
  RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  if (!pools || !pools->is_object() || pools->empty()) return f.Error("pools", "expected an object with at least one pool");
  for (const auto& [name, pool_json] : pools->items()) {
    config.pools.emplace_back();
    RETURN_IF_ERROR(ReadPool(pool_json, name, zoneinfo_dir, &config.pools.back()));
  }
  return config;
}

StatusOr<AutoscaleConfig> LoadAutoscaleConfig(const std::string& path, std::string_view zoneinfo_dir) {
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kMaxPolicyBytes, "the autoscale policy file"));
  StatusOr<AutoscaleConfig> config = ParseAutoscaleConfig(text, zoneinfo_dir);
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

}  // namespace surge::autoscale
