// TripCondition: one way a backend's own requests take it out of routing (the circuit
// breaker, outlier ejection), as router/backend_health.h's BackendHealth combines them.
#pragma once

#include <cstdint>

namespace surge::router {

// How one attempt on a backend ended. kNeutral: it says nothing about the backend (our
// client left, a 429): only the in-flight count changes, and a probe slot it held is free.
enum class AttemptOutcome { kSuccess, kFailure, kNeutral };

// A condition over a backend's request outcomes that takes it out of routing.
class TripCondition {
 public:
  virtual ~TripCondition() = default;
  // May a new request go here now? Does not change state (policies ask about candidates
  // they do not pick).
  virtual bool AllowsRouting(int64_t now_ms) const = 0;
  virtual void OnSent(int64_t now_ms) = 0;
  virtual void OnOutcome(AttemptOutcome outcome, int64_t now_ms) = 0;
  // A condition that trips only with the caller's consent: true when it would now; the
  // caller then calls TakeOut. One that trips by itself answers false.
  virtual bool WantsOut(int64_t /*now_ms*/) { return false; }
  virtual void TakeOut(int64_t /*now_ms*/) {}
};

}  // namespace surge::router
