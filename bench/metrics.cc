#include "bench/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "obs/percentile.h"

namespace surge::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool MeetsSlo(const RequestRecord& record, const SloConfig& slo) {
  if (!record.ok()) return false;
  if (slo.ttft_ms && (!record.ttft_s || *record.ttft_s * 1e3 > *slo.ttft_ms)) return false;
  std::optional<double> tpot = record.tpot_s();
  if (slo.tpot_ms && tpot && *tpot * 1e3 > *slo.tpot_ms) return false;
  if (slo.e2e_ms && record.latency_s * 1e3 > *slo.e2e_ms) return false;
  return true;
}

struct Samples {
  std::vector<double> ttft_ms, tpot_ms, itl_ms, e2e_ms;
};

void AddRecord(const RequestRecord& record, const SloConfig& slo, RoundMetrics& m, Samples& samples) {
  ++m.num_requests;
  if (!record.ok()) {
    ++m.num_failed;
    ++m.errors[record.error_kind];
    m.error_examples.emplace(record.error_kind, record.error_message);
    return;
  }
  ++m.num_completed;
  if (record.usage_reported) ++m.num_usage_reported;
  m.total_input_tokens += record.prompt_tokens;
  m.total_output_tokens += record.output_tokens;
  if (MeetsSlo(record, slo)) ++m.num_good;
  if (record.ttft_s) samples.ttft_ms.push_back(*record.ttft_s * 1e3);
  if (std::optional<double> tpot = record.tpot_s()) samples.tpot_ms.push_back(*tpot * 1e3);
  for (double gap_s : record.itl_s) samples.itl_ms.push_back(gap_s * 1e3);
  samples.e2e_ms.push_back(record.latency_s * 1e3);
}

double PerSecond(double count, double wall_s) { return wall_s > 0 ? count / wall_s : 0.0; }

}  // namespace

Distribution Summarize(std::vector<double> samples_ms) {
  Distribution d{0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  if (samples_ms.empty()) return d;
  std::sort(samples_ms.begin(), samples_ms.end());
  const double n = static_cast<double>(samples_ms.size());
  d.count = static_cast<int64_t>(samples_ms.size());
  d.mean = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / n;
  d.median = obs::PercentileOfSorted(samples_ms, 0.5);
  d.p90 = obs::PercentileOfSorted(samples_ms, 0.9);
  d.p95 = obs::PercentileOfSorted(samples_ms, 0.95);
  d.p99 = obs::PercentileOfSorted(samples_ms, 0.99);
  d.min = samples_ms.front();
  d.max = samples_ms.back();
  double squares = 0;
  for (double x : samples_ms) squares += (x - d.mean) * (x - d.mean);
  d.stddev = std::sqrt(squares / n);
  return d;
}

std::vector<double> QuantileSketch(std::vector<double> samples_ms) {
  std::vector<double> sketch;
  if (samples_ms.empty()) return sketch;
  std::sort(samples_ms.begin(), samples_ms.end());
  sketch.reserve(kNumQuantiles);
  for (int i = 0; i < kNumQuantiles; ++i) {
    sketch.push_back(obs::PercentileOfSorted(samples_ms, static_cast<double>(i) / (kNumQuantiles - 1)));
  }
  return sketch;
}

RoundMetrics Aggregate(std::span<const RoundRun> runs, const SloConfig& slo) {
  RoundMetrics m;
  Samples samples;
  for (const RoundRun& run : runs) {
    ++m.num_rounds;
    m.wall_s += run.wall_s;
    m.client_cpu_s += run.client_cpu_s;
    for (const RequestRecord& record : run.records) AddRecord(record, slo, m, samples);
  }
  m.request_throughput = PerSecond(static_cast<double>(m.num_completed), m.wall_s);
  m.input_token_throughput = PerSecond(static_cast<double>(m.total_input_tokens), m.wall_s);
  m.output_token_throughput = PerSecond(static_cast<double>(m.total_output_tokens), m.wall_s);
  m.total_token_throughput = m.input_token_throughput + m.output_token_throughput;
  if (slo.any()) m.goodput = PerSecond(static_cast<double>(m.num_good), m.wall_s);
  double busy_s = 0;
  bool busy_known = !runs.empty();
  for (const RoundRun& run : runs) {
    busy_known = busy_known && run.server_busy_s.has_value();
    busy_s += run.server_busy_s.value_or(0);
  }
  if (busy_known && m.wall_s > 0) m.server_busy_fraction = std::min(1.0, std::max(0.0, busy_s / m.wall_s));
  m.client_cpu_us_per_request = m.num_requests > 0 ? m.client_cpu_s * 1e6 / static_cast<double>(m.num_requests) : 0;
  m.ttft_quantiles_ms = QuantileSketch(samples.ttft_ms);
  m.itl_quantiles_ms = QuantileSketch(samples.itl_ms);
  m.ttft_ms = Summarize(std::move(samples.ttft_ms));
  m.tpot_ms = Summarize(std::move(samples.tpot_ms));
  m.itl_ms = Summarize(std::move(samples.itl_ms));
  m.e2e_ms = Summarize(std::move(samples.e2e_ms));
  return m;
}

#define SURGE_DIST_FIELDS(dist)                                                         \
  {#dist "_mean_ms", [](const RoundMetrics& m) { return m.dist##_ms.mean; }},           \
      {#dist "_median_ms", [](const RoundMetrics& m) { return m.dist##_ms.median; }},   \
      {#dist "_p90_ms", [](const RoundMetrics& m) { return m.dist##_ms.p90; }},         \
      {#dist "_p95_ms", [](const RoundMetrics& m) { return m.dist##_ms.p95; }},         \
      {#dist "_p99_ms", [](const RoundMetrics& m) { return m.dist##_ms.p99; }},         \
      {#dist "_max_ms", [](const RoundMetrics& m) { return m.dist##_ms.max; }}

std::span<const MetricField> ScalarMetrics() {
  static const MetricField kFields[] = {
      {"request_throughput", [](const RoundMetrics& m) { return m.request_throughput; }},
      {"goodput", [](const RoundMetrics& m) { return m.goodput.value_or(kNaN); }},
      {"input_token_throughput", [](const RoundMetrics& m) { return m.input_token_throughput; }},
      {"output_token_throughput", [](const RoundMetrics& m) { return m.output_token_throughput; }},
      {"total_token_throughput", [](const RoundMetrics& m) { return m.total_token_throughput; }},
      SURGE_DIST_FIELDS(ttft),
      SURGE_DIST_FIELDS(tpot),
      SURGE_DIST_FIELDS(itl),
      SURGE_DIST_FIELDS(e2e),
      {"completed", [](const RoundMetrics& m) { return static_cast<double>(m.num_completed); }},
      {"failed", [](const RoundMetrics& m) { return static_cast<double>(m.num_failed); }},
      {"total_input_tokens", [](const RoundMetrics& m) { return static_cast<double>(m.total_input_tokens); }},
      {"total_output_tokens", [](const RoundMetrics& m) { return static_cast<double>(m.total_output_tokens); }},
      {"wall_s", [](const RoundMetrics& m) { return m.wall_s; }},
      {"client_cpu_us_per_request", [](const RoundMetrics& m) { return m.client_cpu_us_per_request; }},
  };
  return kFields;
}

#undef SURGE_DIST_FIELDS

}  // namespace surge::bench
