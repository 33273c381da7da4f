// SampleHistory: the last few scrapes of this process's own metrics, bounded to what the
// rules' longest window needs, and the window reads the expressions are made of.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "obs/alarms/alarm_rules.h"
#include "obs/exposition.h"

namespace surge::obs {

class SampleHistory {
 public:
  struct Snapshot {
    int64_t time_ms = 0;  // unix milliseconds of the scrape
    std::map<std::string, std::map<Labels, double>> series;  // metric name -> labels -> value
  };

  // Keeps snapshots no older than `keep` before the newest (and at most max_snapshots),
  // holding only the sample names in `wanted`.
  SampleHistory(std::chrono::milliseconds keep, std::set<std::string> wanted, size_t max_snapshots = 100'000);

  // Snapshots must come in increasing time order.
  void Add(int64_t time_ms, const Exposition& exposition);
  const Snapshot* Latest() const { return snapshots_.empty() ? nullptr : &snapshots_.back(); }
  size_t num_snapshots() const { return snapshots_.size(); }

  // Per series `name` matching `selector` (its labels, "le" included): the increase over
  // the snapshots of the last `window`, counter resets handled (a drop restarts from 0). A
  // series missing from the window's first snapshot but present later was created in the
  // window and starts from 0 (this process's registry never drops a child it had). Empty
  // when fewer than two snapshots fall in the window; *span_s gets their time span.
  std::map<Labels, double> Increases(const std::string& name, const Selector& selector,
                                     std::chrono::milliseconds window, double* span_s) const;

 private:
  const std::chrono::milliseconds keep_;
  const std::set<std::string> wanted_;
  const size_t max_snapshots_;
  std::deque<Snapshot> snapshots_;
};

// The sample names a rule reads ("x", or "x_bucket" for a quantile), for `wanted`.
std::set<std::string> SampleNamesOf(const AlarmConfig& config);

// Evaluates one expression on the history's newest snapshot: one value per group (the
// group_by labels' values; an empty map when there is no group_by). No entry for a group
// without data (nothing matches, too few snapshots, 0/0, no observations).
std::map<Labels, double> EvaluateExpression(const Expression& expr, const SampleHistory& history);

// Prometheus histogram_quantile over (upper bound, cumulative count) pairs sorted by
// bound, the last one +Inf: NaN when there are no observations.
double HistogramQuantile(double q, const std::vector<std::pair<double, double>>& buckets);

}  // namespace surge::obs
