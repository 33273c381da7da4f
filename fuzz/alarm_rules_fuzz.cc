// libFuzzer target: an alarm rules file (`--alarm-rules FILE`): YamlToJson, then
// AlarmConfigFromJson, whose selectors compile their =~ / !~ regexes with PCRE2's limits
// (base/bounded_regex.h). A config that parses must export as Prometheus rules, and every
// selector must match a few label sets (the regexes run, bounded) without throwing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "fuzz/fuzz_yaml.h"
#include "obs/alarms/alarm_rules.h"
#include "obs/alarms/prometheus_export.h"

namespace {

void MatchSome(const surge::obs::Selector& selector) {
  (void)selector.ToPromQL();
  for (const surge::obs::Labels& labels : {surge::obs::Labels{}, surge::obs::Labels{{"code", "503"}, {"pool", "a"}},
                                           surge::obs::Labels{{"backend", std::string(64, 'a')}}}) {
    (void)selector.Matches(labels);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tree = surge::fuzz::ParseFuzzYaml(data, size);
  if (!tree.ok()) return 0;
  auto config = surge::obs::AlarmConfigFromJson(*tree);
  if (!config.ok()) {
    CHECK(config.status().code() == surge::StatusCode::kInvalidArgument) << config.status().ToString();
    return 0;
  }
  CHECK(!config->rules.empty());
  CHECK(config->interval.count() >= 10);
  for (const surge::obs::AlarmRule& rule : config->rules) {
    MatchSome(rule.expr.selector);
    if (rule.expr.kind == surge::obs::ExprKind::kRatio) MatchSome(rule.expr.denominator);
  }
  (void)surge::obs::PrometheusRulesYaml(*config);
  return 0;
}
