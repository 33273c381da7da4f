// BackendHealth: the active checks and both trip conditions answer as one (AllowsRouting);
// the breaker trips by itself, outlier ejection only through WantsOut -> TakeOut.
#include "router/backend_health.h"

#include <gtest/gtest.h>

namespace surge::router {
namespace {

constexpr AttemptOutcome kOk = AttemptOutcome::kSuccess;
constexpr AttemptOutcome kFail = AttemptOutcome::kFailure;

void Attempt(BackendHealth& health, AttemptOutcome outcome, int64_t now_ms) {
  health.OnSent(now_ms);
  health.OnOutcome(outcome, now_ms);
}

RouteConfig Config() {
  RouteConfig config;
  config.breaker = {.failure_threshold = 2, .cooldown_ms = 100, .success_threshold = 1};
  config.ejection = {.window_ms = 1000, .min_requests = 3, .max_error_rate = 0.5, .duration_ms = 500};
  return config;
}

TEST(BackendHealthTest, OutlierEjectionTripsOnlyWithConsent) {
  BackendHealth health(Config());
  EXPECT_TRUE(health.AllowsRouting(0));
  for (AttemptOutcome outcome : {kFail, kOk, kFail}) Attempt(health, outcome, 1);  // never two in a row
  EXPECT_EQ(health.breaker_state(), BreakerState::kClosed);
  EXPECT_TRUE(health.WantsOut(1));
  EXPECT_TRUE(health.AllowsRouting(1));  // no consent yet: still in
  health.TakeOut(1);
  EXPECT_FALSE(health.AllowsRouting(2));
  EXPECT_TRUE(health.IsEjected(2));
  EXPECT_TRUE(health.AllowsRouting(501));  // the period is over
  EXPECT_FALSE(health.WantsOut(501));      // with a fresh window
}

TEST(BackendHealthTest, TheBreakerTripsByItselfAndProbesBackIn) {
  BackendHealth health(Config());
  Attempt(health, kFail, 10);
  Attempt(health, kFail, 10);
  EXPECT_EQ(health.breaker_state(), BreakerState::kOpen);
  EXPECT_FALSE(health.WantsOut(10));  // nothing asks for consent: it is out already
  EXPECT_FALSE(health.AllowsRouting(50));
  EXPECT_TRUE(health.AllowsRouting(110));  // cool-down over: one probe may go
  health.OnSent(110);
  EXPECT_FALSE(health.AllowsRouting(111));  // the probe is out
  health.OnOutcome(AttemptOutcome::kNeutral, 111);  // abandoned: its slot is free again
  EXPECT_TRUE(health.AllowsRouting(111));
  Attempt(health, kOk, 112);
  EXPECT_EQ(health.breaker_state(), BreakerState::kClosed);
}

TEST(BackendHealthTest, ActiveChecksGateEverything) {
  BackendHealth health(Config());
  const HealthConfig checks{.unhealthy_threshold = 2, .healthy_threshold = 1};
  health.OnHealthCheck(500, checks);
  EXPECT_TRUE(health.AllowsRouting(0));  // one failed check is under the threshold
  health.OnHealthCheck(0, checks);
  EXPECT_FALSE(health.healthy());
  EXPECT_FALSE(health.AllowsRouting(0));
  health.OnHealthCheck(503, checks);  // alive, draining: healthy, yet nothing new
  EXPECT_TRUE(health.healthy());
  EXPECT_TRUE(health.draining());
  EXPECT_FALSE(health.AllowsRouting(0));
  health.OnHealthCheck(200, checks);
  EXPECT_TRUE(health.AllowsRouting(0));
}

}  // namespace
}  // namespace surge::router
