#include "obs/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "base/check.h"

namespace surge::obs {
namespace {

bool IsValidName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void CheckBounds(const std::vector<double>& bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    CHECK(std::isfinite(bounds[i])) << "histogram bounds must be finite (+Inf is implicit)";
    CHECK(i == 0 || bounds[i - 1] < bounds[i]) << "histogram bounds must increase strictly";
  }
}

// One sample line: name{labels} value.
void AppendSample(std::string* out, std::string_view name, std::string_view labels,
                  double value) {
  out->append(name);
  if (!labels.empty()) {
    out->push_back('{');
    out->append(labels);
    out->push_back('}');
  }
  out->push_back(' ');
  out->append(FormatSampleValue(value));
  out->push_back('\n');
}

std::string JoinLabels(const std::string& labels, std::string_view extra) {
  if (labels.empty()) return std::string(extra);
  return labels + "," + std::string(extra);
}

}  // namespace

void Counter::Increment(double amount) {
  // A negative increment would break rate(); it is a caller bug.
  DCHECK(amount >= 0);
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(const std::vector<double>* upper_bounds)
    : upper_bounds_(upper_bounds),
      bucket_counts_(new std::atomic<uint64_t>[upper_bounds->size() + 1]) {
  for (size_t i = 0; i <= upper_bounds->size(); ++i) bucket_counts_[i].store(0);
}

void Histogram::Observe(double value) {
  // Buckets are "le" (inclusive): the first bound >= value.
  size_t index = std::lower_bound(upper_bounds_->begin(), upper_bounds_->end(), value) -
                 upper_bounds_->begin();
  bucket_counts_[index].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

void Histogram::AddCounts(std::span<const uint64_t> bucket_counts, double sum) {
  CHECK_EQ(bucket_counts.size(), upper_bounds_->size() + 1) << "bucket counts do not match the bounds";
  for (size_t i = 0; i < bucket_counts.size(); ++i) {
    if (bucket_counts[i] > 0) bucket_counts_[i].fetch_add(bucket_counts[i], std::memory_order_relaxed);
  }
  sum_.fetch_add(sum, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snapshot;
  snapshot.cumulative_counts.resize(upper_bounds_->size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= upper_bounds_->size(); ++i) {
    running += bucket_counts_[i].load(std::memory_order_relaxed);
    snapshot.cumulative_counts[i] = running;
  }
  // _count is derived from the buckets so that it always equals the +Inf bucket.
  snapshot.count = running;
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

namespace internal {

FamilyBase::FamilyBase(std::string name, std::string help, std::string type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      label_names_(std::move(label_names)) {
  CHECK(IsValidName(name_, /*allow_colon=*/true)) << "bad metric name '" << name_ << "'";
  std::set<std::string> seen;
  for (const std::string& label : label_names_) {
    CHECK(IsValidName(label, /*allow_colon=*/false) && !label.starts_with("__"))
        << "bad label name '" << label << "' for " << name_;
    CHECK(seen.insert(label).second) << "duplicate label '" << label << "' for " << name_;
    CHECK(type_ != "histogram" || label != "le") << "'le' is reserved in histograms";
  }
}

void FamilyBase::AppendText(std::string* out) const {
  out->append("# HELP ").append(name_).append(" ").append(EscapeHelp(help_)).append("\n");
  out->append("# TYPE ").append(name_).append(" ").append(type_).append("\n");
  AppendSamples(out);
}

std::string FamilyBase::RenderLabels(const std::vector<std::string>& values) const {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text.push_back(',');
    text.append(label_names_[i]).append("=\"").append(EscapeLabelValue(values[i])).append("\"");
  }
  return text;
}

void FamilyBase::CheckArity(size_t num_values) const {
  CHECK_EQ(num_values, label_names_.size())
      << name_ << " takes " << label_names_.size() << " label values, got " << num_values;
}

}  // namespace internal

namespace {
std::string TypeName(const Counter*) { return "counter"; }
std::string TypeName(const Gauge*) { return "gauge"; }
std::string TypeName(const Histogram*) { return "histogram"; }

std::unique_ptr<Counter> MakeMetric(const Counter*, const std::vector<double>*) {
  return std::make_unique<Counter>();
}
std::unique_ptr<Gauge> MakeMetric(const Gauge*, const std::vector<double>*) {
  return std::make_unique<Gauge>();
}
std::unique_ptr<Histogram> MakeMetric(const Histogram*, const std::vector<double>* bounds) {
  return std::make_unique<Histogram>(bounds);
}

void AppendMetric(std::string* out, const std::string& name, const std::string& labels,
                  const Counter& counter) {
  AppendSample(out, name, labels, counter.value());
}
void AppendMetric(std::string* out, const std::string& name, const std::string& labels,
                  const Gauge& gauge) {
  AppendSample(out, name, labels, gauge.value());
}
void AppendMetric(std::string* out, const std::string& name, const std::string& labels,
                  const Histogram& histogram) {
  Histogram::Snapshot snapshot = histogram.Read();
  const std::vector<double>& bounds = histogram.upper_bounds();
  std::string bucket_name = name + "_bucket";
  for (size_t i = 0; i <= bounds.size(); ++i) {
    std::string le = i < bounds.size() ? FormatSampleValue(bounds[i]) : "+Inf";
    AppendSample(out, bucket_name, JoinLabels(labels, "le=\"" + le + "\""),
                 static_cast<double>(snapshot.cumulative_counts[i]));
  }
  AppendSample(out, name + "_sum", labels, snapshot.sum);
  AppendSample(out, name + "_count", labels, static_cast<double>(snapshot.count));
}
}  // namespace

template <typename Metric>
Family<Metric>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                       std::vector<double> upper_bounds)
    : FamilyBase(std::move(name), std::move(help), TypeName(static_cast<Metric*>(nullptr)),
                 std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {
  CheckBounds(upper_bounds_);
}

template <typename Metric>
Metric& Family<Metric>::WithLabels(const std::vector<std::string>& values) {
  CheckArity(values.size());
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Metric>& child = children_[values];
  if (!child) child = MakeMetric(static_cast<Metric*>(nullptr), &upper_bounds_);
  return *child;
}

template <typename Metric>
Metric& Family<Metric>::WithLabels(std::initializer_list<std::string_view> values) {
  return WithLabels(std::vector<std::string>(values.begin(), values.end()));
}

template <typename Metric>
void Family<Metric>::Remove(const std::vector<std::string>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  children_.erase(values);
}

template <typename Metric>
void Family<Metric>::AppendSamples(std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, child] : children_) {
    AppendMetric(out, name_, RenderLabels(values), *child);
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

template <typename F>
F& Registry::AddFamily(std::unique_ptr<F> family) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& existing : families_) {
    CHECK(existing->name() != family->name()) << "metric '" << family->name() << "' registered twice";
  }
  F& result = *family;
  families_.push_back(std::move(family));
  return result;
}

Counter& Registry::AddCounter(std::string name, std::string help) {
  return AddCounterFamily(std::move(name), std::move(help), {}).WithLabels({});
}

CounterFamily& Registry::AddCounterFamily(std::string name, std::string help,
                                          std::vector<std::string> label_names) {
  return AddFamily(std::make_unique<CounterFamily>(std::move(name), std::move(help),
                                                   std::move(label_names)));
}

Gauge& Registry::AddGauge(std::string name, std::string help) {
  return AddGaugeFamily(std::move(name), std::move(help), {}).WithLabels({});
}

GaugeFamily& Registry::AddGaugeFamily(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
  return AddFamily(std::make_unique<GaugeFamily>(std::move(name), std::move(help),
                                                 std::move(label_names)));
}

Histogram& Registry::AddHistogram(std::string name, std::string help,
                                  std::vector<double> upper_bounds) {
  return AddHistogramFamily(std::move(name), std::move(help), {}, std::move(upper_bounds))
      .WithLabels({});
}

HistogramFamily& Registry::AddHistogramFamily(std::string name, std::string help,
                                              std::vector<std::string> label_names,
                                              std::vector<double> upper_bounds) {
  return AddFamily(std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(label_names), std::move(upper_bounds)));
}

std::string Registry::Expose() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& family : families_) family->AppendText(&out);
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  CHECK(start > 0 && factor > 1 && count > 0);
  std::vector<double> bounds;
  for (int i = 0; i < count; ++i) bounds.push_back(start * std::pow(factor, i));
  return bounds;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  CHECK(width > 0 && count > 0);
  std::vector<double> bounds;
  for (int i = 0; i < count; ++i) bounds.push_back(start + width * i);
  return bounds;
}

std::vector<double> RequestLatencyBuckets() {
  return {0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1,
          1.5,   2,    2.5,  3,    4,    5,    7.5,   10,  15,   20,  30,  45,  60,  120};
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out.push_back(c);
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out.push_back(c);
  }
  return out;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Whole numbers (counts) print as integers: "100000", not the shorter "1e+05".
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[64];
  // Shortest text that reads back to the same double.
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  DCHECK(ec == std::errc());
  return std::string(buffer, end);
}

}  // namespace surge::obs
