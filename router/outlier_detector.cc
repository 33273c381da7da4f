#include "router/outlier_detector.h"

namespace surge::router {

void OutlierDetector::Record(bool failed, int64_t now_ms) {
  Trim(now_ms);
  window_.push_back({now_ms, failed});
  num_failed_ += failed ? 1 : 0;
  // Bounded even when a backend is hammered: the newest outcomes are what matters.
  constexpr size_t kMaxOutcomes = 4096;
  if (window_.size() > kMaxOutcomes) {
    num_failed_ -= window_.front().failed ? 1 : 0;
    window_.pop_front();
  }
}

bool OutlierDetector::ShouldEject(int64_t now_ms) {
  Trim(now_ms);
  if (IsEjected(now_ms) || static_cast<int64_t>(window_.size()) < config_.min_requests) return false;
  return static_cast<double>(num_failed_) / static_cast<double>(window_.size()) > config_.max_error_rate;
}

void OutlierDetector::Eject(int64_t now_ms) {
  ejected_until_ms_ = now_ms + config_.duration_ms;
  window_.clear();
  num_failed_ = 0;
}

void OutlierDetector::Trim(int64_t now_ms) {
  while (!window_.empty() && now_ms - window_.front().at_ms >= config_.window_ms) {
    num_failed_ -= window_.front().failed ? 1 : 0;
    window_.pop_front();
  }
}

}  // namespace surge::router
