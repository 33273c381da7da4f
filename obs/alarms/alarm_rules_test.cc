#include "obs/alarms/alarm_rules.h"

#include <gtest/gtest.h>

#include <limits>

#include "obs/alarms/prometheus_export.h"

namespace surge::obs {
namespace {

using Json = nlohmann::json;

Json OneRule(Json rule) { return Json{{"interval", "10s"}, {"rules", Json::array({rule})}}; }

Json GoodRule() {
  return Json::parse(R"({"name": "Errors", "expr": {"kind": "ratio", "numerator": "req_total{code=~\"5..\"}",
    "denominator": "req_total", "window": "5m"}, "comparison": ">", "threshold": 0.01, "for": "5m",
    "severity": "page", "summary": "5xx over 1%", "action": {"type": "webhook", "url": "http://127.0.0.1:9/x",
    "retries": 2, "timeout": "2s", "backoff": "100ms"}})");
}

std::string ErrorOf(const Json& root) {
  StatusOr<AlarmConfig> config = AlarmConfigFromJson(root);
  return config.ok() ? "ok" : config.status().message();
}

TEST(AlarmRulesTest, ParsesAGoodRule) {
  StatusOr<AlarmConfig> config = AlarmConfigFromJson(OneRule(GoodRule()));
  ASSERT_TRUE(config.ok()) << config.status().message();
  const AlarmRule& rule = config->rules[0];
  EXPECT_EQ(config->interval.count(), 10'000);
  EXPECT_EQ(rule.expr.kind, ExprKind::kRatio);
  EXPECT_EQ(rule.expr.window.count(), 300'000);
  EXPECT_EQ(rule.for_duration.count(), 300'000);
  EXPECT_EQ(rule.keep_firing_for.count(), 10'000);  // one interval by default
  EXPECT_EQ(rule.action.num_retries, 2);
  EXPECT_EQ(rule.action.backoff.count(), 100);
  ASSERT_EQ(rule.expr.selector.matchers.size(), 1u);
  EXPECT_EQ(rule.expr.selector.matchers[0].op, LabelMatcher::Op::kRe);
  EXPECT_EQ(AlertExpressionPromQL(rule),
            "(sum(rate(req_total{code=~\"5..\"}[5m])) / sum(rate(req_total[5m]))) > 0.01");
}

TEST(AlarmRulesTest, ErrorsNameTheRuleAndTheKey) {
  Json rule = GoodRule();
  rule["expr"]["windoww"] = "5m";
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).expr: unknown key 'windoww'");
  rule = GoodRule();
  rule["for"] = "5 minutes";
  EXPECT_NE(ErrorOf(OneRule(rule)).find("rules[0] (Errors).for: '5 minutes' is not a duration"), std::string::npos);
  rule = GoodRule();
  rule["expr"]["kind"] = "median";
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).expr.kind: 'median' is not one of value, rate, quantile, ratio");
  rule = GoodRule();
  rule["comparison"] = "=>";
  EXPECT_NE(ErrorOf(OneRule(rule)).find("(Errors).comparison: '=>' is not one of"), std::string::npos);
  rule = GoodRule();
  rule["action"]["type"] = "page";
  EXPECT_NE(ErrorOf(OneRule(rule)).find("(Errors).action.type: 'page'"), std::string::npos);
  rule = GoodRule();
  rule["action"]["pool"] = "x";
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).action: unknown key 'pool'");
  rule = GoodRule();
  rule["expr"]["numerator"] = "req_total{code=~\"(\"}";
  EXPECT_NE(ErrorOf(OneRule(rule)).find("(Errors).expr.numerator: selector"), std::string::npos);
  rule = GoodRule();
  rule["color"] = "red";
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors): unknown key 'color'");
  rule = GoodRule();
  rule.erase("threshold");
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).threshold: missing");
  EXPECT_EQ(ErrorOf(Json{{"rules", Json::array({GoodRule(), GoodRule()})}}), "alarm rules.rules: two rules named 'Errors'");
  EXPECT_EQ(ErrorOf(Json{{"rules", Json::array()}, {"x", 1}}), "alarm rules: unknown key 'x'");
  EXPECT_EQ(ErrorOf(Json{{"rules", Json::array()}}), "alarm rules.rules: expected a list of at least one rule");
}

TEST(AlarmRulesTest, KindSpecificKeys) {
  Json rule = GoodRule();
  rule["expr"] = {{"kind", "value"}, {"metric", "g"}, {"window", "5m"}};
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).expr: unknown key 'window'");
  rule["expr"] = {{"kind", "quantile"}, {"metric", "h"}, {"window", "5m"}, {"quantile", 1.5}};
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).expr.quantile: must be in (0, 1]");
  rule["expr"] = {{"kind", "rate"}, {"metric", "c"}};
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).expr.window: missing");
  rule["expr"] = {{"kind", "value"}, {"metric", "up"}, {"group_by", {"pool"}}};
  rule["action"] = {{"type", "restart_instance"}};
  EXPECT_NE(ErrorOf(OneRule(rule)).find("restart_instance needs expr.group_by to hold 'backend'"), std::string::npos);
  rule["expr"]["group_by"] = {"backend"};
  EXPECT_EQ(ErrorOf(OneRule(rule)), "ok");
  rule["action"] = {{"type", "scale_up"}};
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).action.pool: missing");
}

// Issue 31: a 309-digit duration made std::stod throw (an abort, not a config error), and
// std::regex overflowed on `a{99999999999999999999}` and 50k nested '('. Each is now an error
// naming the key.
TEST(AlarmRulesTest, OutsideValuesPastTheLimitsAreErrorsNamingTheKey) {
  Json root = OneRule(GoodRule());
  root["interval"] = std::string(400, '9') + "s";
  EXPECT_EQ(ErrorOf(root).rfind("alarm rules.interval: '999", 0), 0u) << ErrorOf(root);
  Json rule = GoodRule();
  rule["expr"]["numerator"] = R"(req_total{code=~"a{99999999999999999999}"})";
  EXPECT_NE(ErrorOf(OneRule(rule)).find("rules[0] (Errors).expr.numerator: selector"), std::string::npos) << ErrorOf(OneRule(rule));
  rule["expr"]["numerator"] = "req_total{code=~\"" + std::string(50'000, '(') + "\"}";
  EXPECT_NE(ErrorOf(OneRule(rule)).find("bad regex"), std::string::npos);
  EXPECT_LT(ErrorOf(OneRule(rule)).size(), 1000u) << "the pattern is shown shortened";
  rule = GoodRule();
  rule["threshold"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ErrorOf(OneRule(rule)), "rules[0] (Errors).threshold: must be a finite number");
  rule = GoodRule();
  rule["expr"]["group_by"] = Json::array({std::string("a\xff")});
  EXPECT_NE(ErrorOf(OneRule(rule)).find("is not a label name"), std::string::npos);
}

TEST(SelectorTest, ARegexPastItsMatchLimitSelectsNothing) {
  StatusOr<Selector> re = ParseSelector(R"(x{a=~"(a+)+[^a]"})");
  ASSERT_TRUE(re.ok()) << re.status().message();
  EXPECT_FALSE(re->Matches({{"a", std::string(40, 'a')}}));
  StatusOr<Selector> nre = ParseSelector(R"(x{a!~"(a+)+[^a]"})");
  ASSERT_TRUE(nre.ok());
  EXPECT_FALSE(nre->Matches({{"a", std::string(40, 'a')}}));
  EXPECT_TRUE(nre->Matches({{"a", "b"}}));
}

TEST(SelectorTest, ParsesMatchersAndMatchesWholeValues) {
  StatusOr<Selector> s = ParseSelector(R"(x_total{ code =~ "5..", path!="/metrics",q="a\"b"})");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->matchers.size(), 3u);
  EXPECT_EQ(s->matchers[2].value, "a\"b");
  EXPECT_TRUE(s->Matches({{"code", "503"}, {"path", "/v1"}, {"q", "a\"b"}}));
  EXPECT_FALSE(s->Matches({{"code", "5030"}, {"path", "/v1"}, {"q", "a\"b"}}));  // full match, as PromQL
  EXPECT_FALSE(s->Matches({{"code", "503"}, {"path", "/metrics"}, {"q", "a\"b"}}));
  StatusOr<Selector> nre = ParseSelector(R"(y{a!~"b|c"})");
  ASSERT_TRUE(nre.ok());
  EXPECT_TRUE(nre->Matches({{"a", "bc"}}));
  EXPECT_TRUE(nre->Matches({}));  // absent reads ""
  EXPECT_FALSE(nre->Matches({{"a", "c"}}));
  for (const char* bad : {"", "{a=\"b\"}", "x{a=b}", "x{a=\"b\"", "x{a~\"b\"}", "x y", "x{a=\"\\q\"}"}) {
    EXPECT_FALSE(ParseSelector(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace surge::obs
