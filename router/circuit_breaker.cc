#include "router/circuit_breaker.h"

namespace surge::router {

std::string_view BreakerStateName(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed: return "closed";
    case BreakerState::kOpen: return "open";
    case BreakerState::kHalfOpen: return "half-open";
  }
  return "closed";
}

bool CircuitBreaker::CanRoute(int64_t now_ms) const {
  switch (state_) {
    case BreakerState::kClosed: return true;
    case BreakerState::kOpen: return now_ms - opened_at_ms_ >= config_.cooldown_ms;
    case BreakerState::kHalfOpen: return !probe_in_flight_;
  }
  return true;
}

void CircuitBreaker::OnOutcome(AttemptOutcome outcome, int64_t now_ms) {
  switch (outcome) {
    case AttemptOutcome::kSuccess: return OnSuccess(now_ms);
    case AttemptOutcome::kFailure: return OnFailure(now_ms);
    case AttemptOutcome::kNeutral: return OnAbandoned();
  }
}

void CircuitBreaker::OnSent(int64_t now_ms) {
  if (state_ == BreakerState::kOpen && now_ms - opened_at_ms_ >= config_.cooldown_ms) {
    state_ = BreakerState::kHalfOpen;
    num_probe_successes_ = 0;
  }
  if (state_ == BreakerState::kHalfOpen) probe_in_flight_ = true;
}

void CircuitBreaker::OnSuccess(int64_t /*now_ms*/) {
  num_consecutive_failures_ = 0;
  if (state_ != BreakerState::kHalfOpen) return;
  probe_in_flight_ = false;
  if (++num_probe_successes_ >= config_.success_threshold) state_ = BreakerState::kClosed;
}

void CircuitBreaker::OnFailure(int64_t now_ms) {
  ++num_consecutive_failures_;
  // A failed probe reopens at once; a closed breaker waits for N in a row.
  if (state_ == BreakerState::kHalfOpen || num_consecutive_failures_ >= config_.failure_threshold) {
    Open(now_ms);
  }
}

void CircuitBreaker::Open(int64_t now_ms) {
  state_ = BreakerState::kOpen;
  opened_at_ms_ = now_ms;
  probe_in_flight_ = false;
  num_probe_successes_ = 0;
}

}  // namespace surge::router
