// What the engine's metrics cost on the serving path: the per-token, per-request and per-step
// records of ServerMetrics, and one /metrics render. docs/BENCH.md turns these into a share
// of a token's time at the measured serving rate (issue 16's <= 2% target).
#include <benchmark/benchmark.h>

#include "server/server_metrics.h"

namespace surge {
namespace {

// Per streamed token: one inter-token-latency observation.
void BM_ObserveInterTokenLatency(benchmark::State& state) {
  ServerMetrics metrics;
  double seconds = 0.0001;
  for (auto _ : state) {
    metrics.ObserveInterTokenLatency(seconds);
    seconds = seconds < 1 ? seconds * 1.07 : 0.0001;  // walks the buckets
  }
}
BENCHMARK(BM_ObserveInterTokenLatency);

// Per finished request: the request counter by endpoint and status, queue time by tier, and
// the generation's TTFT / E2E / TPOT histograms and token counters.
void BM_RecordOneRequest(benchmark::State& state) {
  ServerMetrics metrics;
  for (auto _ : state) {
    metrics.ObserveQueueTime("normal", 0.003);
    metrics.ObserveGeneration(0.05, 1.2, 32, 64, "normal");
    metrics.CountRequest("/v1/completions", 200);
  }
}
BENCHMARK(BM_RecordOneRequest);

// Per engine step: the two batch-size histograms (a plain struct on the engine thread).
void BM_RecordOneStep(benchmark::State& state) {
  StepSizeHistogram sequences, tokens;
  int64_t size = 1;
  for (auto _ : state) {
    sequences.Observe(size);
    tokens.Observe(size * 3);
    size = size < 256 ? size + 1 : 1;
  }
  benchmark::DoNotOptimize(sequences.sum + tokens.sum);
}
BENCHMARK(BM_RecordOneStep);

// One scrape: gauges refreshed from EngineStats and the whole text exposition rendered.
void BM_ExposeMetrics(benchmark::State& state) {
  ServerMetrics metrics;
  for (int i = 0; i < 1000; ++i) {
    metrics.ObserveGeneration(0.05 + i * 1e-4, 1.2, 32, 64, i % 3 == 0 ? "realtime" : "normal");
    metrics.CountRequest(i % 2 ? "/v1/completions" : "/v1/chat/completions", i % 50 ? 200 : 429);
  }
  EngineStats stats;
  stats.num_total_blocks = 4096;
  stats.num_free_blocks = 1024;
  stats.kv_bytes_per_block = 65536;
  for (auto _ : state) {
    stats.num_steps += 10;
    stats.busy_us += 10'000;
    benchmark::DoNotOptimize(metrics.Expose(stats));
  }
}
BENCHMARK(BM_ExposeMetrics);

}  // namespace
}  // namespace surge
