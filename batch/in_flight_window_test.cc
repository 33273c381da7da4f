#include "batch/in_flight_window.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace surge::batch
