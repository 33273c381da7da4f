#include "batch/in_flight_window.h"

#include <algorithm>

namespace surge::batch {
namespace {

constexpr double kSlowFactor = 2.0;       // cost above this x baseline: slow
constexpr double kBaselineDrift = 0.01;   // the baseline moves up by this share of the gap
constexpr int kInitialLimit = 4;

}  // namespace

InFlightWindow::InFlightWindow(int max_in_flight)
    : max_(std::max(1, max_in_flight)), limit_(std::min(kInitialLimit, max_)) {}

void InFlightWindow::Halve() {
  if (answers_since_halving_ < round_) return;  // this round was halved already
  limit_ = std::max(1.0, limit_ / 2);
  answers_since_halving_ = 0;
  round_ = static_cast<int64_t>(limit_);
}

void InFlightWindow::OnOverload() {
  ++answers_since_halving_;
  Halve();
}

void InFlightWindow::OnAnswer(double cost_ms) {
  ++answers_since_halving_;
  if (baseline_ms_ < 0 || cost_ms < baseline_ms_) {
    baseline_ms_ = cost_ms;
  } else {
    baseline_ms_ += (cost_ms - baseline_ms_) * kBaselineDrift;
  }
  if (cost_ms > kSlowFactor * baseline_ms_) return Halve();
  limit_ = std::min<double>(max_, limit_ + 1.0 / limit_);
}

}  // namespace surge::batch
