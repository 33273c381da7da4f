// EvaluateExpression: the four expression kinds over a SampleHistory.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "obs/alarms/sample_history.h"

namespace surge::obs {
namespace {

Labels GroupOf(const Labels& labels, const std::vector<std::string>& group_by) {
  Labels group;
  for (const std::string& name : group_by) {
    auto it = labels.find(name);
    group[name] = it == labels.end() ? "" : it->second;
  }
  return group;
}

std::map<Labels, double> Value(const Expression& e, const SampleHistory& history) {
  std::map<Labels, double> result;
  const SampleHistory::Snapshot* latest = history.Latest();
  if (latest == nullptr) return result;
  auto family = latest->series.find(e.selector.metric);
  if (family == latest->series.end()) return result;
  std::map<Labels, std::vector<double>> groups;
  for (const auto& [labels, value] : family->second) {
    if (e.selector.Matches(labels)) groups[GroupOf(labels, e.group_by)].push_back(value);
  }
  for (const auto& [group, values] : groups) {
    double sum = 0;
    for (double v : values) sum += v;
    switch (e.aggregate) {
      case Aggregate::kSum: result[group] = sum; break;
      case Aggregate::kAvg: result[group] = sum / static_cast<double>(values.size()); break;
      case Aggregate::kMax: result[group] = *std::max_element(values.begin(), values.end()); break;
      case Aggregate::kMin: result[group] = *std::min_element(values.begin(), values.end()); break;
    }
  }
  return result;
}

std::map<Labels, double> Rate(const Selector& selector, const Expression& e, const SampleHistory& history) {
  std::map<Labels, double> result;
  double span_s = 0;
  const std::map<Labels, double> increases = history.Increases(selector.metric, selector, e.window, &span_s);
  if (increases.empty() || span_s <= 0) return result;
  for (const auto& [labels, increase] : increases) result[GroupOf(labels, e.group_by)] += increase / span_s;
  return result;
}

std::map<Labels, double> Quantile(const Expression& e, const SampleHistory& history) {
  std::map<Labels, double> result;
  double span_s = 0;
  const std::map<Labels, double> increases =
      history.Increases(e.selector.metric + "_bucket", e.selector, e.window, &span_s);
  std::map<Labels, std::map<double, double>> groups;  // group -> le -> summed increase
  for (const auto& [labels, increase] : increases) {
    auto le = labels.find("le");
    if (le == labels.end()) continue;
    double bound = std::numeric_limits<double>::infinity();
    if (le->second != "+Inf") {
      // from_chars, not std::stod: a bucket bound that is not a number skips its series
      // instead of throwing on the alarm thread.
      const std::string& text = le->second;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bound);
      if (ec != std::errc() || end != text.data() + text.size() || std::isnan(bound)) continue;
    }
    groups[GroupOf(labels, e.group_by)][bound] += increase;
  }
  for (const auto& [group, buckets] : groups) {
    const double q = HistogramQuantile(e.quantile, {buckets.begin(), buckets.end()});
    if (!std::isnan(q)) result[group] = q;
  }
  return result;
}

std::map<Labels, double> Ratio(const Expression& e, const SampleHistory& history) {
  std::map<Labels, double> result;
  const std::map<Labels, double> numerator = Rate(e.selector, e, history);
  for (const auto& [group, denominator] : Rate(e.denominator, e, history)) {
    auto it = numerator.find(group);
    const double num = it == numerator.end() ? 0.0 : it->second;
    if (denominator > 0) result[group] = num / denominator;
    else if (num > 0) result[group] = std::numeric_limits<double>::infinity();
    // 0/0: nothing happened in the window, no data.
  }
  return result;
}

}  // namespace

std::map<Labels, double> EvaluateExpression(const Expression& expr, const SampleHistory& history) {
  switch (expr.kind) {
    case ExprKind::kValue: return Value(expr, history);
    case ExprKind::kRate: return Rate(expr.selector, expr, history);
    case ExprKind::kQuantile: return Quantile(expr, history);
    case ExprKind::kRatio: return Ratio(expr, history);
  }
  return {};
}

}  // namespace surge::obs
