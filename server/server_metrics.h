// ServerMetrics: the Prometheus metrics of `surge serve` — HTTP requests by endpoint and
// status, errors by kind, latency histograms measured at the HTTP edge, token counters,
// and the engine's own gauges and step histograms (running, waiting, KV usage, batch
// sizes) refreshed from EngineStats at each scrape. docs/METRICS.md lists every family.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine_client.h"
#include "obs/metrics.h"
#include "obs/process_metrics.h"
#include "obs/span_exporter.h"
#include "server/vllm_metrics.h"

namespace surge {

// The `kind` label of surge_request_errors_total for an HTTP status: invalid_request (400
// and other 4xx), not_found (404), overloaded (429), disconnected (499), unavailable (503),
// timeout (504), internal (other 5xx); "" below 400.
const char* ErrorKindForStatus(int http_status);

class ServerMetrics {
 public:
  ServerMetrics();

  // One answered request; `http_status` 499 when the client left first (nginx's code).
  // A status >= 400 also counts under its error kind (ErrorKindForStatus).
  void CountRequest(std::string_view endpoint, int http_status);
  // An error that reached the client inside a 200 (a stream's error event): its kind.
  void CountError(std::string_view kind) { errors_.WithLabels({kind}).Increment(); }
  // A request ended by its deadline (`timeout` or --request-timeout), streamed or not.
  void CountTimeout() { timeouts_.Increment(); }
  // An output constraint's way through the compiled-grammar cache: compiled, failed,
  // cancelled (its client left), cache_hit, cache_hit_failure (a failure kept, not redone).
  void CountConstraintCompile(std::string_view outcome) { constraint_compiles_.WithLabels({outcome}).Increment(); }
  void SetConstraintCacheBytes(int64_t bytes) { constraint_cache_bytes_.Set(static_cast<double>(bytes)); }
  // The time between two consecutive outputs that carried tokens to one choice.
  void ObserveInterTokenLatency(double seconds) {
    inter_token_latency_.Observe(seconds);
    if (vllm_) vllm_->ObserveInterTokenLatency(seconds);
  }
  // Adds vLLM's families (server/vllm_metrics.h) for `model_name`; before serving.
  void EnableVllmCompat(const std::string& model_name) { vllm_ = std::make_unique<VllmMetrics>(registry_, model_name); }
  // A completion or chat request ended: its (first choice's) finish reason, "" on error.
  void CountFinished(std::string_view finish_reason) {
    if (vllm_) vllm_->CountFinished(finish_reason);
  }
  void SetActiveConnections(int64_t num_connections) {
    active_connections_.Set(static_cast<double>(num_connections));
  }
  // Per finished generation: seconds from arrival to the first token and to the end,
  // the mean time between its output tokens, and its token counts.
  // `tier` ("realtime", "normal", "batch") labels the per-tier TTFT histogram.
  // `queue_seconds`: until the engine first scheduled it (negative: unknown).
  void ObserveGeneration(double ttft_seconds, double e2e_seconds, int64_t num_prompt_tokens,
                         int64_t num_completion_tokens, std::string_view tier = "normal", double queue_seconds = -1);
  // Per engine request: seconds from Submit until the engine first scheduled it.
  void ObserveQueueTime(std::string_view tier, double seconds);
  void SetInFlight(int64_t num_generations) { in_flight_.Set(static_cast<double>(num_generations)); }

  // Refreshes the engine gauges from `stats` (and the trace export counters from `traces`
  // when tracing is on) and renders the text exposition.
  std::string Expose(const EngineStats& stats, const obs::SpanExporterStats* traces = nullptr);
  // For other parts' families (the alarm rules').
  obs::Registry& registry() { return registry_; }

 private:
  obs::Registry registry_;
  obs::CounterFamily& requests_;
  obs::CounterFamily& errors_;
  obs::Counter& timeouts_;
  obs::CounterFamily& constraint_compiles_;
  obs::Gauge& constraint_cache_bytes_;
  obs::Gauge& active_connections_;
  obs::Gauge& in_flight_;
  obs::Gauge& running_;
  obs::Gauge& waiting_;
  obs::Gauge& kv_usage_;
  obs::Gauge& kv_free_blocks_;
  obs::Gauge& kv_total_blocks_;
  obs::Gauge& kv_used_bytes_;
  obs::Gauge& kv_total_bytes_;
  obs::Counter& prompt_tokens_;
  obs::Counter& generation_tokens_;
  obs::Histogram& ttft_;
  obs::Histogram& e2e_;
  obs::Histogram& tpot_;
  obs::Histogram& inter_token_latency_;
  obs::HistogramFamily& queue_time_by_tier_;
  obs::HistogramFamily& ttft_by_tier_;
  obs::Gauge& prefix_cache_hit_rate_;
  obs::Gauge& prefix_cache_blocks_;
  // Busy fraction: time in engine steps / wall time, as a counter (rate() it) and as the
  // fraction since the previous scrape (what a router or autoscaler reads directly).
  obs::Counter& busy_seconds_;
  obs::Counter& steps_;
  obs::Gauge& busy_fraction_;
  int64_t last_busy_us_ = 0;    // guarded by scrape_mu_
  int64_t last_steps_ = 0;      // guarded by scrape_mu_
  int64_t last_scrape_us_ = 0;  // guarded by scrape_mu_ (steady clock)
  obs::ProcessMetrics process_;
  // Engine counters, mirrored: each scrape adds what the engine's total grew by.
  struct Mirror {
    obs::Counter* counter;
    int64_t EngineStats::*total;
    int64_t last = 0;  // guarded by scrape_mu_
  };
  std::vector<Mirror> mirrors_;
  struct TraceMirror {
    obs::Counter* counter;
    int64_t obs::SpanExporterStats::*total;
    int64_t last = 0;  // guarded by scrape_mu_
  };
  std::vector<TraceMirror> trace_mirrors_;
  // The engine's step-size bucket counts, mirrored the same way, bucket by bucket.
  struct StepMirror {
    obs::Histogram* histogram;
    StepSizeHistogram EngineStats::*total;
    StepSizeHistogram last;  // guarded by scrape_mu_
  };
  std::vector<StepMirror> step_mirrors_;
  // Speculative decoding, by method (vLLM's spec_decode names), mirrored as the others.
  obs::CounterFamily& spec_drafts_;
  obs::CounterFamily& spec_draft_tokens_;
  obs::CounterFamily& spec_accepted_tokens_;
  obs::CounterFamily& spec_accepted_per_pos_;
  obs::GaugeFamily& spec_acceptance_rate_;
  obs::GaugeFamily& spec_mean_accepted_length_;
  int64_t last_spec_drafts_ = 0;           // guarded by scrape_mu_
  int64_t last_spec_draft_tokens_ = 0;     // guarded by scrape_mu_
  int64_t last_spec_accepted_tokens_ = 0;  // guarded by scrape_mu_
  std::vector<int64_t> last_spec_per_pos_;  // guarded by scrape_mu_
  void RefreshSpecDecode(const EngineStats& stats);  // scrape_mu_ held
  void RefreshBusy(const EngineStats& stats);  // scrape_mu_ held
  void RefreshKv(const EngineStats& stats);    // scrape_mu_ held
  void RefreshMirrors(const EngineStats& stats, const obs::SpanExporterStats* traces);  // scrape_mu_ held
  std::mutex scrape_mu_;            // one scrape at a time turns engine totals into deltas
  std::unique_ptr<VllmMetrics> vllm_;  // --metrics-compat vllm; set before serving
};

}  // namespace surge
