// Metrics aggregation: one round's request records (or several repeats of it) turned into
// latency distributions (TTFT, TPOT, ITL, end-to-end), throughputs, goodput under SLOs and
// error counts by kind; plus the flat list of scalar metrics every reporter walks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/config.h"
#include "bench/load_driver.h"

namespace surge::bench {

// Summary of samples in milliseconds; every field NaN when count is 0.
struct Distribution {
  int64_t count = 0;
  double mean, median, p90, p95, p99, max, min, stddev;
};
Distribution Summarize(std::vector<double> samples_ms);

// Quantiles at 0, 0.5 %, ..., 100 % (kNumQuantiles points): the distribution's shape for
// the HTML charts and the JSON, whatever the sample count.
inline constexpr int kNumQuantiles = 201;
std::vector<double> QuantileSketch(std::vector<double> samples_ms);

struct RoundMetrics {
  std::string target_label;  // "A" / "B" with --compare, else ""
  std::string url;
  std::string model;
  LoadPoint point;
  int64_t num_rounds = 0;  // repeats merged into this one
  double wall_s = 0;       // summed over the repeats
  int64_t num_requests = 0;  // finished, failed included
  int64_t num_completed = 0;
  int64_t num_failed = 0;
  std::map<std::string, int64_t> errors;               // kind -> count
  std::map<std::string, std::string> error_examples;   // kind -> the first message
  int64_t num_usage_reported = 0;  // completed requests whose tokens came from the server
  int64_t total_input_tokens = 0;  // completed requests only
  int64_t total_output_tokens = 0;
  double request_throughput = 0;  // completed / wall
  double input_token_throughput = 0;
  double output_token_throughput = 0;
  double total_token_throughput = 0;
  std::optional<double> goodput;  // req/s meeting every SLO; absent without SLOs
  int64_t num_good = 0;
  Distribution ttft_ms, tpot_ms, itl_ms, e2e_ms;
  std::vector<double> ttft_quantiles_ms, itl_quantiles_ms;  // QuantileSketch
  double client_cpu_s = 0;
  double client_cpu_us_per_request = 0;
  // The server engine's busy seconds / wall seconds over the rounds (surge serve's
  // surge_engine_busy_seconds_total); nullopt when any round could not read it.
  std::optional<double> server_busy_fraction;
};

RoundMetrics Aggregate(std::span<const RoundRun> runs, const SloConfig& slo);

// A scalar metric by name ("ttft_p95_ms"), for tables, CSV columns and A/B ratios.
struct MetricField {
  const char* name;
  double (*get)(const RoundMetrics&);  // NaN when it does not apply
};
std::span<const MetricField> ScalarMetrics();

}  // namespace surge::bench
