// BackendHealth: the one health mechanism of a backend -- may a new request go to it now?
// Its inputs are the active checks (GET /health, BackendMonitor) and what its requests did;
// the requests reach it through trip conditions, each of which can take the backend out:
// the circuit breaker (N failures in a row; out for a cool-down, then probed back in) and
// outlier ejection (too high an error rate over a window; out for a fixed period, and only
// when the caller agrees: never the pool's last routable backend). Times are passed in.
#pragma once

#include <array>
#include <cstdint>

#include "router/circuit_breaker.h"
#include "router/outlier_detector.h"
#include "router/route_config.h"
#include "router/trip_condition.h"

namespace surge::router {

// Not thread-safe: the owner (Backend) holds a lock around it.
class BackendHealth {
 public:
  explicit BackendHealth(const RouteConfig& config);
  BackendHealth(const BackendHealth&) = delete;
  BackendHealth& operator=(const BackendHealth&) = delete;

  // Active: one /health result (200 ok, 503 alive but draining, anything else failed).
  void OnHealthCheck(int http_status, const HealthConfig& health);
  bool healthy() const { return healthy_; }
  bool draining() const { return draining_; }

  // Passive: the request path's events, fed to every trip condition.
  void OnSent(int64_t now_ms);
  void OnOutcome(AttemptOutcome outcome, int64_t now_ms);
  bool WantsOut(int64_t now_ms);  // a consent-needing condition would take it out now
  void TakeOut(int64_t now_ms);

  // Healthy, not draining, and every trip condition allows it.
  bool AllowsRouting(int64_t now_ms) const;
  bool IsEjected(int64_t now_ms) const { return outliers_.IsEjected(now_ms); }
  BreakerState breaker_state() const { return breaker_.state(); }

 private:
  bool healthy_ = true;  // optimistic: a new backend is routable at once
  bool draining_ = false;
  int64_t num_good_checks_ = 0;  // consecutive
  int64_t num_bad_checks_ = 0;
  CircuitBreaker breaker_;
  OutlierDetector outliers_;
  const std::array<TripCondition*, 2> conditions_{&breaker_, &outliers_};
};

}  // namespace surge::router
