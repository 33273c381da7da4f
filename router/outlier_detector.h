// OutlierDetector: passive ejection of one backend whose error / timeout rate over a
// sliding window is too high, for a fixed period (Envoy's outlier detection, simplified).
// Whether ejecting is allowed (never the last routable backend of a pool) is the caller's
// call: it asks ShouldEject and then Eject. Times are passed in.
#pragma once

#include <cstdint>
#include <deque>

#include "router/route_config.h"
#include "router/trip_condition.h"

namespace surge::router {

// A trip condition of BackendHealth that trips with the caller's consent (WantsOut ->
// TakeOut). Not thread-safe: the owner holds a lock around it.
class OutlierDetector final : public TripCondition {
 public:
  explicit OutlierDetector(EjectionConfig config) : config_(config) {}

  // TripCondition: not ejected; a success or failure recorded (a neutral one says nothing);
  // ShouldEject and Eject.
  bool AllowsRouting(int64_t now_ms) const override { return !IsEjected(now_ms); }
  void OnSent(int64_t /*now_ms*/) override {}
  void OnOutcome(AttemptOutcome outcome, int64_t now_ms) override {
    if (outcome != AttemptOutcome::kNeutral) Record(outcome == AttemptOutcome::kFailure, now_ms);
  }
  bool WantsOut(int64_t now_ms) override { return ShouldEject(now_ms); }
  void TakeOut(int64_t now_ms) override { Eject(now_ms); }

  void Record(bool failed, int64_t now_ms);
  // The window holds enough requests and too many failed.
  bool ShouldEject(int64_t now_ms);
  // Out for duration_ms; the window starts empty again afterwards.
  void Eject(int64_t now_ms);
  bool IsEjected(int64_t now_ms) const { return now_ms < ejected_until_ms_; }

 private:
  void Trim(int64_t now_ms);

  struct Outcome {
    int64_t at_ms;
    bool failed;
  };
  EjectionConfig config_;
  std::deque<Outcome> window_;  // oldest first, within window_ms
  int64_t num_failed_ = 0;      // failures in window_
  int64_t ejected_until_ms_ = 0;
};

}  // namespace surge::router
