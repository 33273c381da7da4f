#include "router/backend_health.h"

namespace surge::router {

BackendHealth::BackendHealth(const RouteConfig& config) : breaker_(config.breaker), outliers_(config.ejection) {}

void BackendHealth::OnHealthCheck(int http_status, const HealthConfig& health) {
  // 503 = alive but draining (surge serve's shutdown): keep it healthy for its in-flight
  // requests, route nothing new to it.
  draining_ = http_status == 503;
  const bool good = http_status == 200 || http_status == 503;
  if (good) {
    num_bad_checks_ = 0;
    if (++num_good_checks_ >= health.healthy_threshold) healthy_ = true;
  } else {
    num_good_checks_ = 0;
    if (++num_bad_checks_ >= health.unhealthy_threshold) healthy_ = false;
  }
}

void BackendHealth::OnSent(int64_t now_ms) {
  for (TripCondition* condition : conditions_) condition->OnSent(now_ms);
}

void BackendHealth::OnOutcome(AttemptOutcome outcome, int64_t now_ms) {
  for (TripCondition* condition : conditions_) condition->OnOutcome(outcome, now_ms);
}

bool BackendHealth::WantsOut(int64_t now_ms) {
  for (TripCondition* condition : conditions_) {
    if (condition->WantsOut(now_ms)) return true;
  }
  return false;
}

void BackendHealth::TakeOut(int64_t now_ms) {
  for (TripCondition* condition : conditions_) {
    if (condition->WantsOut(now_ms)) condition->TakeOut(now_ms);
  }
}

bool BackendHealth::AllowsRouting(int64_t now_ms) const {
  if (!healthy_ || draining_) return false;
  for (const TripCondition* condition : conditions_) {
    if (!condition->AllowsRouting(now_ms)) return false;
  }
  return true;
}

}  // namespace surge::router
