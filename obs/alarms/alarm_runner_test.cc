// AlarmRunner on a real Registry: its thread, its metrics, actions and start-up checks.
#include "obs/alarms/alarm_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace surge::obs {
namespace {

using std::chrono::milliseconds;

AlarmConfig OneRule(ExprKind kind, const std::string& metric, AlarmAction::Type action) {
  AlarmConfig config;
  config.interval = milliseconds(20);
  AlarmRule rule;
  rule.name = "InFlight";
  rule.expr.kind = kind;
  rule.expr.selector = *ParseSelector(metric);
  rule.expr.window = milliseconds(1000);
  rule.comparison = Comparison::kGe;
  rule.threshold = 1;
  rule.keep_firing_for = config.interval;
  rule.severity = "page";
  rule.action.type = action;
  config.rules.push_back(rule);
  return config;
}

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(milliseconds(10));
  return done();
}

TEST(AlarmRunnerTest, FiresResolvesAndCountsIntoTheRegistry) {
  Registry registry;
  Gauge& in_flight = registry.AddGauge("in_flight", "x");
  std::mutex mu;
  std::vector<std::string> seen;
  AlarmRunnerOptions options{.process_name = "test", .scrape = [&] { return registry.Expose(); }, .registry = &registry};
  options.factories[AlarmAction::Type::kWebhook] = [&](const AlarmRule&) -> StatusOr<AlarmActionFunction> {
    return AlarmActionFunction([&](const AlarmRule&, const AlertEvent& event, ActionDone done) {
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(std::string(AlertStateName(event.to)));
      }
      done(OkStatus(), "sent");
    });
  };
  auto runner = AlarmRunner::Start(OneRule(ExprKind::kValue, "in_flight", AlarmAction::Type::kWebhook), options);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  in_flight.Set(2);
  ASSERT_TRUE(WaitFor([&] { return registry.Expose().find("surge_alarms{alarm=\"InFlight\",severity=\"page\",state=\"firing\"} 1") != std::string::npos; }));
  in_flight.Set(0);
  ASSERT_TRUE(WaitFor([&] { std::lock_guard<std::mutex> lock(mu); return seen.size() == 2; }));
  EXPECT_EQ(seen, (std::vector<std::string>{"firing", "resolved"}));
  const std::string text = registry.Expose();
  EXPECT_NE(text.find("surge_alarm_transitions_total{alarm=\"InFlight\",to=\"firing\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("surge_alarm_transitions_total{alarm=\"InFlight\",to=\"resolved\"} 1"), std::string::npos);
  EXPECT_NE(text.find("surge_alarm_actions_total{alarm=\"InFlight\",action=\"webhook\",result=\"ok\"} 2"), std::string::npos);
  const nlohmann::json json = (*runner)->ToJson();
  ASSERT_EQ(json["alerts"].size(), 1u);
  EXPECT_EQ(json["alerts"][0]["state"], "resolved");
  EXPECT_EQ(json["alerts"][0]["last_action"]["result"], "ok: sent");
}

TEST(AlarmRunnerTest, RefusesWhatCannotWork) {
  Registry registry;
  registry.AddGauge("in_flight", "x");
  AlarmRunnerOptions options{.process_name = "surge serve", .scrape = [&] { return registry.Expose(); }, .registry = &registry};
  auto no_factory = AlarmRunner::Start(OneRule(ExprKind::kValue, "in_flight", AlarmAction::Type::kScaleUp), options);
  ASSERT_FALSE(no_factory.ok());
  EXPECT_EQ(no_factory.status().message(), "rule InFlight: action scale_up is not available in surge serve");
  auto rate_of_gauge = AlarmRunner::Start(OneRule(ExprKind::kRate, "in_flight", AlarmAction::Type::kLog), options);
  ASSERT_FALSE(rate_of_gauge.ok());
  EXPECT_NE(rate_of_gauge.status().message().find("'in_flight' is a gauge"), std::string::npos);
  // A metric this process does not have yet is a warning, not an error.
  Registry other;
  options.registry = &other;
  EXPECT_TRUE(AlarmRunner::Start(OneRule(ExprKind::kValue, "nothing_here", AlarmAction::Type::kLog), options).ok());
}

}  // namespace
}  // namespace surge::obs
