// The benchmark as a whole: probe the targets (model, tokens per word), build the workload,
// then run every sweep point — A and B alternating with --compare, `repeat` times each —
// and aggregate each point's rounds into a BenchReport for the reporters.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/config.h"
#include "bench/metrics.h"
#include "bench/progress.h"
#include "bench/server_probe.h"

namespace surge::bench {

struct TargetInfo {
  std::string label;  // "A", "B", or "" without --compare
  std::string url;
  std::string model;  // "" when none was given and /v1/models could not tell
};

struct BenchReport {
  BenchConfig config;  // as run (tokens_per_word filled in)
  std::vector<TargetInfo> targets;
  Calibration calibration;  // from the first target
  std::vector<RoundMetrics> rounds;  // run order; with --compare A then B for each point
  std::vector<std::string> notes;    // warnings shown while running
  std::string started_at;            // UTC, ISO 8601
};

// Fails only on a workload that cannot be built (an unreadable dataset): unreachable or
// misbehaving servers end up as error counts in the report. `progress` may be null.
StatusOr<BenchReport> RunBenchmark(BenchConfig config, ProgressSink* progress);

// With --compare: the rounds of each point as (A, B) pairs, in point order.
struct ComparedPoint {
  const RoundMetrics* a;
  const RoundMetrics* b;
};
std::vector<ComparedPoint> PairRounds(const BenchReport& report);

// a / b; NaN when either is NaN or b is 0.
double Ratio(double a, double b);

}  // namespace surge::bench
