// Metrics registry: counters, gauges and histograms (optionally labelled), exposed as
// Prometheus text format 0.0.4 for /metrics.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace surge::obs {

// A value that only goes up (requests, tokens). Increment is one atomic add.
class Counter {
 public:
  void Increment(double amount = 1.0);  // amount >= 0
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down (running requests, KV blocks in use).
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Increment(double amount = 1.0) { value_.fetch_add(amount, std::memory_order_relaxed); }
  void Decrement(double amount = 1.0) { value_.fetch_sub(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observations counted into fixed buckets (upper bounds, inclusive, given at creation).
// Observe is a binary search plus two atomic adds; no lock.
class Histogram {
 public:
  // `upper_bounds` must be strictly increasing and finite; +Inf is implicit. The vector is
  // owned by the family and outlives the histogram.
  explicit Histogram(const std::vector<double>* upper_bounds);
  void Observe(double value);
  // Adds observations counted elsewhere into the same buckets (a component that keeps
  // its own fixed bucket counts, as the engine does for its steps): `bucket_counts`
  // [num_bounds + 1], not cumulative, the last one +Inf; `sum` of their values.
  void AddCounts(std::span<const uint64_t> bucket_counts, double sum);

  struct Snapshot {
    std::vector<uint64_t> cumulative_counts;  // [num_bounds + 1]; the last one is +Inf
    double sum = 0.0;
    uint64_t count = 0;  // equals cumulative_counts.back()
  };
  Snapshot Read() const;
  const std::vector<double>& upper_bounds() const { return *upper_bounds_; }

 private:
  const std::vector<double>* upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> bucket_counts_;  // [num_bounds + 1], not cumulative
  std::atomic<double> sum_{0.0};
};

namespace internal {

// What every family shares: name, help, label names and the text exposition.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::string type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  // Appends "# HELP", "# TYPE" and one line per sample.
  void AppendText(std::string* out) const;
  const std::string& name() const { return name_; }

 protected:
  // Appends this family's sample lines, children in label-value order.
  virtual void AppendSamples(std::string* out) const = 0;
  // `a="x",b="y"` for the given values (no braces); empty when there are no labels.
  std::string RenderLabels(const std::vector<std::string>& values) const;
  void CheckArity(size_t num_values) const;

  std::string name_;
  std::string help_;
  std::string type_;
  std::vector<std::string> label_names_;
};

}  // namespace internal

// All children of one metric name, one per tuple of label values. WithLabels takes a lock;
// the returned reference stays valid for the registry's lifetime, so hot paths look the
// child up once and keep it.
template <typename Metric>
class Family final : public internal::FamilyBase {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> upper_bounds = {});
  Metric& WithLabels(const std::vector<std::string>& values);
  Metric& WithLabels(std::initializer_list<std::string_view> values);
  // Drops the child of `values`: its series leaves the exposition. A reference WithLabels
  // returned for it dangles afterwards, so only for children nobody keeps (the router's
  // per-backend gauges, set at each scrape, for a backend that left).
  void Remove(const std::vector<std::string>& values);

 private:
  void AppendSamples(std::string* out) const override;

  std::vector<double> upper_bounds_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;  // sorted: stable output
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// Owns the families; Expose() renders them in registration order. Names must be valid
// Prometheus names and unique (a duplicate is a bug: CHECK). Thread-safe.
class Registry {
 public:
  Counter& AddCounter(std::string name, std::string help);
  CounterFamily& AddCounterFamily(std::string name, std::string help,
                                  std::vector<std::string> label_names);
  Gauge& AddGauge(std::string name, std::string help);
  GaugeFamily& AddGaugeFamily(std::string name, std::string help,
                              std::vector<std::string> label_names);
  Histogram& AddHistogram(std::string name, std::string help, std::vector<double> upper_bounds);
  HistogramFamily& AddHistogramFamily(std::string name, std::string help,
                                      std::vector<std::string> label_names,
                                      std::vector<double> upper_bounds);

  // Prometheus text exposition format 0.0.4 (Content-Type: kPrometheusContentType).
  std::string Expose() const;

 private:
  template <typename F>
  F& AddFamily(std::unique_ptr<F> family);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<internal::FamilyBase>> families_;  // registration order
};

inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// Bucket bounds: start, start*factor, ... (`count` of them).
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// Bucket bounds: start, start+width, ... (`count` of them).
std::vector<double> LinearBuckets(double start, double width, int count);
// Request latencies in seconds (TTFT, end-to-end, queue time; the router's time to first
// byte and duration): 5 ms .. 120 s, fine enough for P95/P99 across 10 ms .. 60 s. One
// list for engine and router, so that their quantiles compare bucket for bucket.
std::vector<double> RequestLatencyBuckets();

// Text helpers, exposed for tests and for other exposition code.
std::string EscapeLabelValue(std::string_view value);  // \ " newline
std::string EscapeHelp(std::string_view help);         // \ newline
std::string FormatSampleValue(double value);           // 3, 0.25, +Inf, -Inf, NaN

}  // namespace surge::obs
