// InFlightWindow: how many batch requests may be in flight at once, adapted to what the
// answers say, so that batch work takes the capacity live traffic leaves idle and gives it
// back when live traffic comes (additive increase, multiplicative decrease, as TCP does).
//
// The rule, per answer:
//   - refused for load (429, 503) or past the server's reach (a transport error): halve
//     the window (never below 1);
//   - slow: its cost (latency per generated token, ms) above 2x the baseline (the lowest
//     cost seen, which drifts up by 1% of the gap per answer so that it follows a slower
//     machine): halve the window;
//   - otherwise grow it by 1/limit (one more request per round trip of the whole window),
//     up to the maximum.
// At most one halving per round (as many answers as the window held when it was last
// halved), so that one burst of slow answers counts once.
#pragma once

#include <cstdint>

namespace surge::batch {

class InFlightWindow {
 public:
  // Starts at min(4, max_in_flight): batch work creeps up rather than arriving in a flood.
  explicit InFlightWindow(int max_in_flight);

  int limit() const { return static_cast<int>(limit_); }
  void OnAnswer(double cost_ms);
  void OnOverload();
  double baseline_cost_ms() const { return baseline_ms_; }

 private:
  void Halve();

  int max_;
  double limit_;
  double baseline_ms_ = -1;  // < 0: no answer yet
  int64_t answers_since_halving_ = 0;
  int64_t round_ = 0;  // answers that make one round since the last halving
};

}  // namespace surge::batch
