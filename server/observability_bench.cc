// What the engine's metrics and traces cost on the serving path: the per-token, per-request
// and per-step records of ServerMetrics, one /metrics render, and a request's spans recorded
// and encoded as OTLP. docs/BENCH.md turns these into a share of a token's CPU time at the
// measured serving rate (issue 16's <= 2% target).
#include <benchmark/benchmark.h>

#include <vector>

#include "base/yaml/yaml_to_json.h"
#include "obs/alarms/alarm_evaluator.h"
#include "obs/exposition.h"
#include "obs/otlp_encoder.h"
#include "obs/span_exporter.h"
#include "obs/trace_context.h"
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

// A request's four spans (server, queue_wait, prefill, decode) as the engine fills them.
std::vector<obs::SpanData> OneRequestSpans() {
  std::vector<obs::SpanData> spans(4);
  const char* names[] = {"POST /v1/completions", "queue_wait", "prefill", "decode"};
  for (int i = 0; i < 4; ++i) {
    obs::SpanData& span = spans[i];
    span.trace_id = obs::RandomTraceId();
    span.span_id = obs::RandomSpanId();
    span.parent_span_id = obs::RandomSpanId();
    span.trace_flags = obs::kSampledFlag;
    span.name = names[i];
    span.start_unix_nanos = 1'700'000'000'000'000'000 + i;
    span.end_unix_nanos = span.start_unix_nanos + 1'000'000;
  }
  obs::SpanData& server = spans[0];
  server.Set("http.request.method", "POST");
  server.Set("http.route", "/v1/completions");
  server.Set("http.response.status_code", 200);
  server.Set("gen_ai.system", "surge");
  server.Set("gen_ai.operation.name", "text_completion");
  server.Set("gen_ai.request.model", "stories260K");
  server.Set("gen_ai.response.model", "stories260K");
  server.Set("gen_ai.usage.input_tokens", 32);
  server.Set("gen_ai.usage.output_tokens", 64);
  server.Set("gen_ai.latency.time_in_queue", 0.003);
  server.Set("gen_ai.latency.time_to_first_token", 0.03);
  server.Set("gen_ai.latency.e2e", 0.2);
  server.Set("gen_ai.response.finish_reasons", std::vector<std::string>{"length"});
  return spans;
}

// Per traced request on the serving threads: building its spans and handing them to the
// exporter's queue (Record), the exporter thread draining and encoding them to protobuf
// (send: a no-op). Time per request.
void BM_TraceOneRequest(benchmark::State& state) {
  obs::SpanExporterOptions options;
  options.batch_timeout_ms = 0;
  obs::SpanExporter exporter(options, [](std::string_view, const std::string& body) -> StatusOr<int> {
    benchmark::DoNotOptimize(body.data());
    return 200;
  });
  for (auto _ : state) {
    for (obs::SpanData& span : OneRequestSpans()) {
      while (!exporter.Record(std::move(span))) {}  // a full queue: wait for the exporter
    }
  }
  while (exporter.num_pending() > 0) {}
}
BENCHMARK(BM_TraceOneRequest)->UseRealTime();

// The exporter thread's share: one 512-span batch (128 requests) encoded as OTLP protobuf.
void BM_EncodeOtlpBatch(benchmark::State& state) {
  std::vector<obs::SpanData> batch;
  for (int i = 0; i < 128; ++i) {
    for (obs::SpanData& span : OneRequestSpans()) batch.push_back(std::move(span));
  }
  obs::OtlpResource resource;
  for (auto _ : state) benchmark::DoNotOptimize(obs::EncodeOtlpProtobuf(resource, batch));
  state.SetItemsProcessed(state.iterations() * 128);  // requests
}
BENCHMARK(BM_EncodeOtlpBatch);

// One alarm evaluation of the shipped engine rules (deploy/alarms/engine_rules.yaml; run from
// the repository root): the /metrics render, its parse and every rule's expression.
void BM_EvaluateEngineAlarmRules(benchmark::State& state) {
  StatusOr<nlohmann::json> tree = LoadConfigFile("deploy/alarms/engine_rules.yaml");
  StatusOr<obs::AlarmConfig> config = tree.ok() ? obs::AlarmConfigFromJson(*tree) : tree.status();
  if (!config.ok()) return state.SkipWithError(config.status().ToString().c_str());
  obs::AlarmEvaluator evaluator(*config);
  ServerMetrics metrics;
  EngineStats stats;
  stats.num_total_blocks = 4096;
  int64_t now_ms = 0;
  for (auto _ : state) {
    metrics.ObserveGeneration(0.05, 1.2, 32, 64, "normal");
    metrics.CountRequest("/v1/completions", 200);
    StatusOr<obs::Exposition> exposition = obs::ParseExposition(metrics.Expose(stats));
    benchmark::DoNotOptimize(evaluator.Evaluate(now_ms += 15'000, *exposition));
  }
}
BENCHMARK(BM_EvaluateEngineAlarmRules);

}  // namespace
}  // namespace surge
