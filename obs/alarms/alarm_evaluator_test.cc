// The state machine on scripted series: `for` honoured, no flapping, resolve, groups.
#include "obs/alarms/alarm_evaluator.h"

#include <gtest/gtest.h>

namespace surge::obs {
namespace {

using std::chrono::seconds;

AlarmConfig Config(seconds for_duration, seconds keep_firing_for = seconds(0), std::vector<std::string> by = {}) {
  AlarmConfig config;
  config.interval = seconds(10);
  AlarmRule rule;
  rule.name = "Busy";
  rule.expr.kind = ExprKind::kValue;
  rule.expr.selector = *ParseSelector("busy");
  rule.expr.group_by = std::move(by);
  rule.comparison = Comparison::kGt;
  rule.threshold = 0.9;
  rule.for_duration = for_duration;
  rule.keep_firing_for = keep_firing_for.count() ? keep_firing_for : config.interval;
  rule.severity = "warning";
  config.rules.push_back(rule);
  return config;
}

class Script {
 public:
  explicit Script(AlarmConfig config) : evaluator_(std::move(config)) {}
  // Evaluates at the next 10 s tick; returns the events as "state" strings ("firing+" repeats).
  std::vector<std::string> Step(const std::string& metrics) {
    StatusOr<Exposition> e = ParseExposition(metrics);
    EXPECT_TRUE(e.ok());
    std::vector<std::string> out;
    for (const AlertEvent& event : evaluator_.Evaluate(now_ms_, *e)) {
      std::string text(AlertStateName(event.to));
      for (const auto& [k, v] : event.group) text += " " + k + "=" + v;
      out.push_back(text + (event.repeat ? "+" : ""));
    }
    now_ms_ += 10'000;
    return out;
  }
  std::vector<std::string> Value(double v) { return Step("busy " + std::to_string(v) + "\n"); }
  AlarmEvaluator& evaluator() { return evaluator_; }

 private:
  AlarmEvaluator evaluator_;
  int64_t now_ms_ = 1'700'000'000'000;
};

using Events = std::vector<std::string>;

TEST(AlarmEvaluatorTest, ForIsHonoured) {
  Script s(Config(seconds(20)));
  EXPECT_EQ(s.Value(0.5), Events{});
  EXPECT_EQ(s.Value(1.0), Events{"pending"});  // t=10
  EXPECT_EQ(s.Value(1.0), Events{});           // t=20: true for 10 s only
  EXPECT_EQ(s.Value(1.0), Events{"firing"});   // t=30: true for 20 s
  EXPECT_EQ(s.Value(1.0), Events{"firing+"});
  EXPECT_EQ(s.evaluator().NumInState(0, AlertState::kFiring), 1);
}

TEST(AlarmEvaluatorTest, PendingResetsWhenTheConditionDrops) {
  Script s(Config(seconds(20)));
  EXPECT_EQ(s.Value(1.0), Events{"pending"});
  EXPECT_EQ(s.Value(1.0), Events{});
  EXPECT_EQ(s.Value(0.1), Events{"inactive"});  // one good sample: start again
  EXPECT_EQ(s.Value(1.0), Events{"pending"});
  EXPECT_EQ(s.Value(1.0), Events{});
  EXPECT_EQ(s.Value(1.0), Events{"firing"});
}

TEST(AlarmEvaluatorTest, NoFlappingAndResolve) {
  Script s(Config(seconds(0)));
  EXPECT_EQ(s.Value(1.0), Events{"firing"});  // for 0s: fires at once
  EXPECT_EQ(s.Value(0.0), Events{});         // false once: keeps firing (keep_firing_for = one interval)
  EXPECT_EQ(s.Value(1.0), Events{"firing+"});
  EXPECT_EQ(s.Value(0.0), Events{});
  EXPECT_EQ(s.Value(1.0), Events{"firing+"});  // flapping input, one firing alert throughout
  EXPECT_EQ(s.Value(0.0), Events{});
  EXPECT_EQ(s.Value(0.0), Events{"resolved"});  // false for one interval
  EXPECT_EQ(s.Value(0.0), Events{});
  ASSERT_EQ(s.evaluator().alerts(0).size(), 1u);  // kept (resolved) for GET /alarms
  EXPECT_EQ(s.evaluator().alerts(0).begin()->second.state, AlertState::kResolved);
  EXPECT_EQ(s.Value(1.0), Events{"firing"});  // a new firing after a resolve
}

TEST(AlarmEvaluatorTest, KeepFiringForLongerThanAnInterval) {
  Script s(Config(seconds(0), seconds(30)));
  EXPECT_EQ(s.Value(1.0), Events{"firing"});
  EXPECT_EQ(s.Value(0.0), Events{});  // false since t=10
  EXPECT_EQ(s.Value(0.0), Events{});
  EXPECT_EQ(s.Value(0.0), Events{});
  EXPECT_EQ(s.Value(0.0), Events{"resolved"});  // t=40: false for 30 s
}

TEST(AlarmEvaluatorTest, NoDataIsFalse) {
  Script s(Config(seconds(0)));
  EXPECT_EQ(s.Value(1.0), Events{"firing"});
  EXPECT_EQ(s.Step("other 1\n"), Events{});
  EXPECT_EQ(s.Step("other 1\n"), Events{"resolved"});
}

TEST(AlarmEvaluatorTest, EachGroupIsItsOwnAlert) {
  Script s(Config(seconds(10), seconds(0), {"backend"}));
  EXPECT_EQ(s.Step("busy{backend=\"a\"} 1\nbusy{backend=\"b\"} 0\n"), Events{"pending backend=a"});
  EXPECT_EQ(s.Step("busy{backend=\"a\"} 1\nbusy{backend=\"b\"} 1\n"), (Events{"firing backend=a", "pending backend=b"}));
  EXPECT_EQ(s.evaluator().NumInState(0, AlertState::kFiring), 1);
  EXPECT_EQ(s.evaluator().NumInState(0, AlertState::kPending), 1);
  const nlohmann::json json = s.evaluator().ToJson();
  EXPECT_EQ(json["rules"][0]["state"], "firing");
  ASSERT_EQ(json["alerts"].size(), 2u);
  EXPECT_EQ(json["alerts"][0]["labels"]["backend"], "a");
  EXPECT_EQ(json["alerts"][0]["labels"]["alertname"], "Busy");
  EXPECT_EQ(json["alerts"][0]["state"], "firing");
  EXPECT_EQ(json["rules"][0]["expr"], "sum by (backend) (busy) > 0.9");
}

TEST(AlarmEvaluatorTest, FormatsRfc3339) { EXPECT_EQ(FormatRfc3339(1'700'000'000'250), "2023-11-14T22:13:20.250Z"); }

}  // namespace
}  // namespace surge::obs
