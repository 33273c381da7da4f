#include "obs/alarms/sample_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace surge::obs {

SampleHistory::SampleHistory(std::chrono::milliseconds keep, std::set<std::string> wanted, size_t max_snapshots)
    : keep_(keep), wanted_(std::move(wanted)), max_snapshots_(std::max<size_t>(max_snapshots, 2)) {}

void SampleHistory::Add(int64_t time_ms, const Exposition& exposition) {
  Snapshot snapshot;
  snapshot.time_ms = time_ms;
  for (const Sample& sample : exposition.samples) {
    if (wanted_.count(sample.name)) snapshot.series[sample.name][sample.labels] = sample.value;
  }
  snapshots_.push_back(std::move(snapshot));
  // One extra snapshot older than `keep` stays, so that a full window always has its start.
  while (snapshots_.size() > max_snapshots_ ||
         (snapshots_.size() > 2 && snapshots_[1].time_ms < time_ms - keep_.count())) {
    snapshots_.pop_front();
  }
}

std::map<Labels, double> SampleHistory::Increases(const std::string& name, const Selector& selector,
                                                  std::chrono::milliseconds window, double* span_s) const {
  std::map<Labels, double> increases;
  if (snapshots_.empty()) return increases;
  const int64_t start_ms = snapshots_.back().time_ms - window.count();
  auto first = std::find_if(snapshots_.begin(), snapshots_.end(), [&](const Snapshot& s) { return s.time_ms >= start_ms; });
  if (std::distance(first, snapshots_.end()) < 2) return increases;
  *span_s = static_cast<double>(snapshots_.back().time_ms - first->time_ms) / 1000.0;
  std::map<Labels, double> last;  // per series: its value at the previous snapshot
  for (auto it = first; it != snapshots_.end(); ++it) {
    auto family = it->series.find(name);
    if (family == it->series.end()) continue;
    for (const auto& [labels, value] : family->second) {
      if (!selector.Matches(labels)) continue;
      auto [previous, inserted] = last.try_emplace(labels, it == first ? value : 0.0);
      double& increase = increases[labels];
      increase += value >= previous->second ? value - previous->second : value;
      previous->second = value;
    }
  }
  return increases;
}

std::set<std::string> SampleNamesOf(const AlarmConfig& config) {
  std::set<std::string> names;
  for (const AlarmRule& rule : config.rules) {
    const Expression& e = rule.expr;
    names.insert(e.kind == ExprKind::kQuantile ? e.selector.metric + "_bucket" : e.selector.metric);
    if (e.kind == ExprKind::kRatio) names.insert(e.denominator.metric);
  }
  return names;
}

double HistogramQuantile(double q, const std::vector<std::pair<double, double>>& buckets) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (buckets.size() < 2 || !std::isinf(buckets.back().first)) return nan;
  const double total = buckets.back().second;
  if (!(total > 0)) return nan;
  const double rank = q * total;
  size_t b = 0;
  while (b < buckets.size() && buckets[b].second < rank) ++b;
  if (b == buckets.size() - 1) return buckets[buckets.size() - 2].first;  // in +Inf: the highest finite bound
  if (b == 0 && buckets[0].first <= 0) return buckets[0].first;
  const double start = b == 0 ? 0 : buckets[b - 1].first;
  const double below = b == 0 ? 0 : buckets[b - 1].second;
  const double count = buckets[b].second - below;
  return count > 0 ? start + (buckets[b].first - start) * ((rank - below) / count) : start;
}

}  // namespace surge::obs
