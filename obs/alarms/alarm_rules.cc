#include "obs/alarms/alarm_rules.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "base/duration.h"
#include "base/json_access.h"

namespace surge::obs {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

bool IsName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (allow_colon && c == ':') ||
                    (i > 0 && std::isdigit(static_cast<unsigned char>(c)));
    if (!ok) return false;
  }
  return true;
}

// Reads one JSON object's keys by name and refuses the ones nobody asked for.
class Fields {
 public:
  Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  Status Error(const std::string& key, const std::string& what) const {
    return InvalidArgumentError(path_ + (key.empty() ? "" : (path_.empty() ? "" : ".") + key) + ": " + what);
  }
  Status CheckObject() const { return object_.is_object() ? OkStatus() : Error("", "expected an object"); }
  const Json* Find(const std::string& key) {
    asked_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  Status String(const std::string& key, std::string* out, bool required) {
    const Json* v = Find(key);
    if (!v) return required ? Error(key, "missing") : OkStatus();
    if (!v->is_string()) return Error(key, "expected a string");
    *out = v->get<std::string>();
    return OkStatus();
  }
  Status Number(const std::string& key, double* out, bool required) {
    const Json* v = Find(key);
    if (!v) return required ? Error(key, "missing") : OkStatus();
    if (!v->is_number()) return Error(key, "expected a number");
    *out = v->get<double>();
    return OkStatus();
  }
  Status Time(const std::string& key, milliseconds* out, bool required) {
    const Json* v = Find(key);
    if (!v) return required ? Error(key, "missing") : OkStatus();
    if (!v->is_string()) return Error(key, "expected a duration string like \"30s\" or \"5m\"");
    StatusOr<milliseconds> parsed = ParseDuration(v->get<std::string>());
    if (!parsed.ok()) return Error(key, parsed.status().message());
    *out = *parsed;
    return OkStatus();
  }
  Status CheckNoUnknownKeys() const {
    for (const auto& [key, value] : object_.items()) {
      if (!asked_.count(key)) return Error("", "unknown key '" + key + "'");
    }
    return OkStatus();
  }

 private:
  const Json& object_;
  std::string path_;
  std::set<std::string> asked_;
};

template <typename T>
Status OneOf(Fields& f, const std::string& key, const std::vector<std::pair<const char*, T>>& names, T* out,
             bool required) {
  std::string text;
  RETURN_IF_ERROR(f.String(key, &text, required));
  if (text.empty() && !required) return OkStatus();
  std::string all;
  for (const auto& [name, value] : names) {
    if (text == name) return *out = value, OkStatus();
    all += (all.empty() ? "" : ", ") + std::string(name);
  }
  return f.Error(key, "'" + text + "' is not one of " + all);
}

Status ReadSelector(Fields& f, const std::string& key, Selector* out) {
  std::string text;
  RETURN_IF_ERROR(f.String(key, &text, true));
  StatusOr<Selector> selector = ParseSelector(text);
  if (!selector.ok()) return f.Error(key, selector.status().message());
  *out = std::move(selector).value();
  return OkStatus();
}

Status ReadGroupBy(Fields& f, std::vector<std::string>* out) {
  const Json* v = f.Find("group_by");
  if (!v) return OkStatus();
  if (!v->is_array()) return f.Error("group_by", "expected a list of label names");
  for (const Json& name : *v) {
    if (!name.is_string() || !IsName(name.get<std::string>(), false) || name.get<std::string>() == "le") {
      return f.Error("group_by", "'" + json::Dump(name).substr(0, 64) + "' is not a label name");
    }
    out->push_back(name.get<std::string>());
  }
  return OkStatus();
}

Status ReadExpression(const Json& json, const std::string& path, Expression* e) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  RETURN_IF_ERROR(OneOf<ExprKind>(f, "kind",
                                  {{"value", ExprKind::kValue}, {"rate", ExprKind::kRate},
                                   {"quantile", ExprKind::kQuantile}, {"ratio", ExprKind::kRatio}},
                                  &e->kind, true));
  if (e->kind == ExprKind::kRatio) {
    RETURN_IF_ERROR(ReadSelector(f, "numerator", &e->selector));
    RETURN_IF_ERROR(ReadSelector(f, "denominator", &e->denominator));
  } else {
    RETURN_IF_ERROR(ReadSelector(f, "metric", &e->selector));
  }
  if (e->kind == ExprKind::kQuantile) {
    RETURN_IF_ERROR(f.Number("quantile", &e->quantile, true));
    if (!(e->quantile > 0 && e->quantile <= 1)) return f.Error("quantile", "must be in (0, 1]");
  }
  if (e->kind == ExprKind::kValue) {
    RETURN_IF_ERROR(OneOf<Aggregate>(f, "aggregate",
                                     {{"sum", Aggregate::kSum}, {"avg", Aggregate::kAvg},
                                      {"max", Aggregate::kMax}, {"min", Aggregate::kMin}},
                                     &e->aggregate, false));
  } else {
    RETURN_IF_ERROR(f.Time("window", &e->window, true));
    if (e->window.count() <= 0) return f.Error("window", "must be > 0");
  }
  RETURN_IF_ERROR(ReadGroupBy(f, &e->group_by));
  return f.CheckNoUnknownKeys();
}

Status ReadAction(const Json& json, const std::string& path, AlarmAction* a) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  using Type = AlarmAction::Type;
  RETURN_IF_ERROR(OneOf<Type>(f, "type",
                              {{"log", Type::kLog}, {"webhook", Type::kWebhook}, {"scale_up", Type::kScaleUp},
                               {"restart_instance", Type::kRestartInstance}},
                              &a->type, true));
  if (a->type == Type::kWebhook) {
    RETURN_IF_ERROR(f.String("url", &a->url, true));
    if (a->url.rfind("http://", 0) != 0) return f.Error("url", "expected an http:// URL");
    double retries = a->num_retries;
    RETURN_IF_ERROR(f.Number("retries", &retries, false));
    if (!(retries >= 0 && retries <= 100 && retries == std::floor(retries))) {
      return f.Error("retries", "must be a whole number in [0, 100]");
    }
    a->num_retries = static_cast<int32_t>(retries);
    RETURN_IF_ERROR(f.Time("timeout", &a->timeout, false));
    if (a->timeout.count() <= 0) return f.Error("timeout", "must be > 0");
    RETURN_IF_ERROR(f.Time("backoff", &a->backoff, false));
  }
  if (a->type == Type::kScaleUp) RETURN_IF_ERROR(f.String("pool", &a->pool, true));
  return f.CheckNoUnknownKeys();
}

Status ReadRule(const Json& json, const std::string& path, AlarmRule* r) {
  Fields f(json, path);
  RETURN_IF_ERROR(f.CheckObject());
  RETURN_IF_ERROR(f.String("name", &r->name, true));
  if (!IsName(r->name, false)) return f.Error("name", "'" + r->name + "' is not a name ([A-Za-z_][A-Za-z0-9_]*)");
  // From here on errors name the rule, not only its index.
  Fields g(json, path + " (" + r->name + ")");
  g.Find("name");
  const Json* expr = g.Find("expr");
  if (!expr) return g.Error("expr", "missing");
  RETURN_IF_ERROR(ReadExpression(*expr, path + " (" + r->name + ").expr", &r->expr));
  RETURN_IF_ERROR(OneOf<Comparison>(g, "comparison",
                                    {{">", Comparison::kGt}, {">=", Comparison::kGe}, {"<", Comparison::kLt},
                                     {"<=", Comparison::kLe}, {"==", Comparison::kEq}, {"!=", Comparison::kNe}},
                                    &r->comparison, true));
  RETURN_IF_ERROR(g.Number("threshold", &r->threshold, true));
  if (!std::isfinite(r->threshold)) return g.Error("threshold", "must be a finite number");
  RETURN_IF_ERROR(g.Time("for", &r->for_duration, false));
  RETURN_IF_ERROR(g.Time("keep_firing_for", &r->keep_firing_for, false));
  r->severity = "warning";
  RETURN_IF_ERROR(g.String("severity", &r->severity, false));
  if (r->severity.empty()) return g.Error("severity", "must not be empty");
  RETURN_IF_ERROR(g.String("summary", &r->summary, false));
  const Json* action = g.Find("action");
  if (!action) return g.Error("action", "missing");
  RETURN_IF_ERROR(ReadAction(*action, path + " (" + r->name + ").action", &r->action));
  const std::vector<std::string>& by = r->expr.group_by;
  if (r->action.type == AlarmAction::Type::kRestartInstance && std::find(by.begin(), by.end(), "backend") == by.end()) {
    return g.Error("action", "restart_instance needs expr.group_by to hold 'backend' (the worker it restarts)");
  }
  return g.CheckNoUnknownKeys();
}

}  // namespace

std::string_view ComparisonText(Comparison comparison) {
  static constexpr std::string_view kTexts[] = {">", ">=", "<", "<=", "==", "!="};
  return kTexts[static_cast<int>(comparison)];
}

bool Compare(double value, Comparison comparison, double threshold) {
  switch (comparison) {
    case Comparison::kGt: return value > threshold;
    case Comparison::kGe: return value >= threshold;
    case Comparison::kLt: return value < threshold;
    case Comparison::kLe: return value <= threshold;
    case Comparison::kEq: return value == threshold;
    case Comparison::kNe: return value != threshold;
  }
  return false;
}

std::string_view ActionTypeName(AlarmAction::Type type) {
  static constexpr std::string_view kNames[] = {"log", "webhook", "scale_up", "restart_instance"};
  return kNames[static_cast<int>(type)];
}

milliseconds AlarmConfig::LongestWindow() const {
  milliseconds longest{0};
  for (const AlarmRule& rule : rules) longest = std::max(longest, rule.expr.window);
  return longest;
}

StatusOr<AlarmConfig> AlarmConfigFromJson(const Json& root) {
  Fields f(root, "alarm rules");
  RETURN_IF_ERROR(f.CheckObject());
  AlarmConfig config;
  RETURN_IF_ERROR(f.Time("interval", &config.interval, false));
  if (config.interval.count() < 10) return f.Error("interval", "must be at least 10ms");
  const Json* rules = f.Find("rules");
  RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  if (!rules || !rules->is_array() || rules->empty()) return f.Error("rules", "expected a list of at least one rule");
  std::set<std::string> names;
  for (size_t i = 0; i < rules->size(); ++i) {
    AlarmRule rule;
    RETURN_IF_ERROR(ReadRule((*rules)[i], "rules[" + std::to_string(i) + "]", &rule));
    if (!names.insert(rule.name).second) return f.Error("rules", "two rules named '" + rule.name + "'");
    if (rule.keep_firing_for.count() == 0) rule.keep_firing_for = config.interval;
    config.rules.push_back(std::move(rule));
  }
  return config;
}

}  // namespace surge::obs
