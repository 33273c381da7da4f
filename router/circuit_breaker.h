// CircuitBreaker: per-backend closed / open / half-open state machine over request
// outcomes, so that a failing backend stops getting traffic and is probed back in. Times
// are passed in (steady milliseconds), which keeps it deterministic under test.
#pragma once

#include <cstdint>
#include <string_view>

#include "router/route_config.h"
#include "router/trip_condition.h"

namespace surge::router {

enum class BreakerState : int { kClosed = 0, kOpen = 1, kHalfOpen = 2 };  // the metric's values
std::string_view BreakerStateName(BreakerState state);

// A trip condition of BackendHealth that trips by itself. Not thread-safe: the owner
// holds a lock around it.
class CircuitBreaker final : public TripCondition {
 public:
  explicit CircuitBreaker(BreakerConfig config) : config_(config) {}

  // TripCondition: CanRoute, OnSent, and the outcome as OnSuccess / OnFailure / OnAbandoned.
  bool AllowsRouting(int64_t now_ms) const override { return CanRoute(now_ms); }
  void OnOutcome(AttemptOutcome outcome, int64_t now_ms) override;

  // May a new request go here now? Closed: yes. Open: only once the cool-down passed (the
  // next request is the probe). Half-open: only while no probe is out. Does not change
  // state, so a policy may ask about candidates it does not pick.
  bool CanRoute(int64_t now_ms) const;
  // A request was sent here: an open breaker past its cool-down becomes half-open and the
  // request counts as its probe.
  void OnSent(int64_t now_ms) override;
  void OnSuccess(int64_t now_ms);
  void OnFailure(int64_t now_ms);
  // The request ended without saying anything about the backend (its client left): a
  // probe slot it held is free again.
  void OnAbandoned() { probe_in_flight_ = false; }

  BreakerState state() const { return state_; }

 private:
  void Open(int64_t now_ms);

  BreakerConfig config_;
  BreakerState state_ = BreakerState::kClosed;
  int64_t num_consecutive_failures_ = 0;
  int64_t num_probe_successes_ = 0;
  int64_t opened_at_ms_ = 0;
  bool probe_in_flight_ = false;
};

}  // namespace surge::router
