#include "obs/percentile.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/check.h"

namespace surge::obs {

double PercentileOfSorted(std::span<const double> sorted, double q) {
  CHECK(q >= 0.0 && q <= 1.0) << "quantile " << q << " outside [0, 1]";
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  double rank = q * static_cast<double>(sorted.size() - 1);
  size_t lower = static_cast<size_t>(std::floor(rank));
  size_t upper = std::min(lower + 1, sorted.size() - 1);
  double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

double Percentile(std::span<const double> samples, double q) {
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return PercentileOfSorted(sorted, q);
}

SampleWindow::SampleWindow(size_t capacity) : samples_(capacity) {
  CHECK_GT(capacity, 0u);
}

void SampleWindow::Add(double sample) {
  std::lock_guard<std::mutex> lock(mu_);
  samples_[next_] = sample;
  next_ = (next_ + 1) % samples_.size();
  num_samples_ = std::min(num_samples_ + 1, samples_.size());
}

std::vector<double> SampleWindow::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<double> out;
  out.reserve(num_samples_);
  size_t start = (next_ + samples_.size() - num_samples_) % samples_.size();
  for (size_t i = 0; i < num_samples_; ++i) out.push_back(samples_[(start + i) % samples_.size()]);
  return out;
}

double SampleWindow::Percentile(double q) const {
  std::vector<double> samples = Snapshot();
  return obs::Percentile(samples, q);
}

size_t SampleWindow::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_samples_;
}

}  // namespace surge::obs
