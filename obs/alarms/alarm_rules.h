// Alarm rules (`--alarm-rules FILE`, obs/README.md "Alarms"): what a rule file holds once
// parsed and checked. Parsed from the JSON tree that YAML or JSON files both become.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/bounded_regex.h"
#include "base/status.h"
#include "obs/exposition.h"  // Labels

namespace surge::obs {

// One PromQL label matcher: = != =~ !~ (regexes match the whole value, as in PromQL).
struct LabelMatcher {
  enum class Op { kEq, kNe, kRe, kNre };
  std::string name;
  Op op = Op::kEq;
  std::string value;
  std::shared_ptr<const BoundedRegex> regex;  // kRe / kNre only: PCRE2, bounded (never std::regex)

  // An absent label reads "". A regex match that passes its limits matches neither =~ nor !~.
  bool Matches(const Labels& labels) const;
};

// `metric{a="x",b=~"y.*"}`: a metric name and its matchers.
struct Selector {
  std::string metric;
  std::vector<LabelMatcher> matchers;

  bool Matches(const Labels& labels) const;
  std::string ToPromQL() const;  // the selector as PromQL writes it
};

// Parses `name` or `name{label op "value", ...}` (PromQL string escapes \" \\ \n).
StatusOr<Selector> ParseSelector(std::string_view text);

enum class ExprKind {
  kValue,     // aggregate of the matching series' current values (gauge or counter)
  kRate,      // per-second increase of a counter over `window`, summed
  kQuantile,  // histogram quantile of the buckets' increase over `window`
  kRatio,     // rate(numerator) / rate(denominator) over `window`
};
enum class Aggregate { kSum, kAvg, kMax, kMin };  // kValue only; the others sum

struct Expression {
  ExprKind kind = ExprKind::kValue;
  Selector selector;     // the metric (kRatio: the numerator); kQuantile: the histogram's base name
  Selector denominator;  // kRatio only
  double quantile = 0;   // kQuantile only, in (0, 1]
  std::chrono::milliseconds window{0};  // kRate, kQuantile, kRatio
  Aggregate aggregate = Aggregate::kSum;
  std::vector<std::string> group_by;  // each group is its own alert
};

enum class Comparison { kGt, kGe, kLt, kLe, kEq, kNe };
std::string_view ComparisonText(Comparison comparison);  // ">", ">=", ...
bool Compare(double value, Comparison comparison, double threshold);

struct AlarmAction {
  enum class Type { kLog, kWebhook, kScaleUp, kRestartInstance };
  Type type = Type::kLog;
  // webhook
  std::string url;
  int32_t num_retries = 3;  // attempts after the first, on no answer, 429 or 5xx
  std::chrono::milliseconds timeout{5000};
  std::chrono::milliseconds backoff{1000};  // before the first retry; doubled after each
  // scale_up
  std::string pool;
};
std::string_view ActionTypeName(AlarmAction::Type type);  // "log", "webhook", ...

struct AlarmRule {
  std::string name;
  Expression expr;
  Comparison comparison = Comparison::kGt;
  double threshold = 0;
  std::chrono::milliseconds for_duration{0};  // true this long before firing
  // A firing alert resolves once the condition has been false this long, measured from
  // the first false evaluation (0 in the file: one interval).
  std::chrono::milliseconds keep_firing_for{0};
  std::string severity;
  std::string summary;
  AlarmAction action;
};

struct AlarmConfig {
  std::chrono::milliseconds interval{15'000};
  std::vector<AlarmRule> rules;

  // The longest window any rule reads (the history must cover it).
  std::chrono::milliseconds LongestWindow() const;
};

// Checks the whole tree: every unknown key, wrong type, bad duration, selector or kind is
// INVALID_ARGUMENT "rules[2] (name): expr.window: ...". Rule names are unique.
StatusOr<AlarmConfig> AlarmConfigFromJson(const nlohmann::json& root);

}  // namespace surge::obs
