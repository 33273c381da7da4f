// Percentiles of latency samples, and a bounded window of recent samples to take them from.
#pragma once

#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

namespace surge::obs {

// The q-quantile (q in [0, 1]) with linear interpolation between closest ranks (numpy's
// default), so P50 of {1, 2} is 1.5. NaN for an empty sample. `samples` need not be sorted.
double Percentile(std::span<const double> samples, double q);
// Same, for samples already sorted ascending: O(1), for taking several quantiles of one set.
double PercentileOfSorted(std::span<const double> sorted, double q);

// The last `capacity` samples (a ring buffer), for "P95 TTFT over the recent window".
// Thread-safe; Add is a lock and a store.
class SampleWindow {
 public:
  explicit SampleWindow(size_t capacity);
  void Add(double sample);
  // Samples currently held, oldest first.
  std::vector<double> Snapshot() const;
  double Percentile(double q) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::vector<double> samples_;  // [capacity], ring
  size_t next_ = 0;
  size_t num_samples_ = 0;
};

}  // namespace surge::obs
