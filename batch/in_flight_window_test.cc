#include "batch/in_flight_window.h"

#include <gtest/gtest.h>

#include "batch/line_dispatcher.h"

namespace surge::batch {
namespace {

TEST(InFlightWindowTest, GrowsByOnePerRoundWhileAnswersStayFast) {
  InFlightWindow window(16);
  EXPECT_EQ(window.limit(), 4);
  for (int i = 0; i < 4; ++i) window.OnAnswer(10);
  EXPECT_EQ(window.limit(), 4) << "a quarter each: 4.9 after one round of 4";
  for (int i = 0; i < 200; ++i) window.OnAnswer(10);
  EXPECT_EQ(window.limit(), 16) << "never past the maximum";
}

TEST(InFlightWindowTest, HalvesOncePerRoundOnOverloadOrSlowAnswers) {
  InFlightWindow window(16);
  for (int i = 0; i < 200; ++i) window.OnAnswer(10);
  window.OnOverload();
  EXPECT_EQ(window.limit(), 8);
  for (int i = 0; i < 7; ++i) window.OnOverload();
  EXPECT_EQ(window.limit(), 8) << "the same round's refusals count once";
  window.OnOverload();
  EXPECT_EQ(window.limit(), 4);
  for (int i = 0; i < 4; ++i) window.OnAnswer(25);  // > 2x the 10 ms baseline: slow
  EXPECT_EQ(window.limit(), 2);
  for (int i = 0; i < 10; ++i) window.OnOverload();
  EXPECT_EQ(window.limit(), 1) << "never below one";
}

TEST(InFlightWindowTest, BaselineFollowsTheFastestAndDriftsUpSlowly) {
  InFlightWindow window(8);
  window.OnAnswer(10);
  window.OnAnswer(5);
  EXPECT_DOUBLE_EQ(window.baseline_cost_ms(), 5);
  window.OnAnswer(9);
  EXPECT_NEAR(window.baseline_cost_ms(), 5.04, 1e-9);
}

// An answer's cost reads usage.completion_tokens from the engine's bytes: of the wrong type,
// out of range or nested too deep, it counts as no tokens (it threw, or cast 1e300 to int64).
TEST(AnswerCostTest, UsageOfTheWrongTypeCountsAsNoTokens) {
  auto cost = [](std::string body) { return AnswerCostMs({OkStatus(), 200, "r", std::move(body)}, 100); };
  EXPECT_DOUBLE_EQ(cost(R"({"usage": {"completion_tokens": 4}})"), 25);
  EXPECT_DOUBLE_EQ(cost(R"({"usage": {"completion_tokens": "4"}})"), 100);
  EXPECT_DOUBLE_EQ(cost(R"({"usage": {"completion_tokens": 1e300}})"), 100);
  EXPECT_DOUBLE_EQ(cost(R"({"usage": [1]})"), 100);
  EXPECT_DOUBLE_EQ(cost("not json \xff"), 100);
  EXPECT_DOUBLE_EQ(cost(std::string(200'000, '[') + std::string(200'000, ']')), 100);
}

}  // namespace
}  // namespace surge::batch
