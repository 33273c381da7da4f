#include "server/server_metrics.h"

#include <algorithm>
#include <array>
#include <chrono>

namespace surge {
namespace {

std::vector<double> LatencyBuckets() { return obs::RequestLatencyBuckets(); }

// 0.1 ms ... 2.5 s per output token (TPOT and inter-token latency).
std::vector<double> TokenLatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
}

std::vector<double> StepSizeBuckets() {
  std::vector<double> bounds;
  for (int64_t bound : StepSizeHistogram::UpperBounds()) bounds.push_back(static_cast<double>(bound));
  return bounds;
}

// What the engine's total grew by since `last` (which then catches up); never negative.
int64_t Grown(int64_t total, int64_t* last) {
  const int64_t delta = std::max<int64_t>(total - *last, 0);
  *last = std::max(*last, total);
  return delta;
}

}  // namespace

const char* ErrorKindForStatus(int http_status) {
  switch (http_status) {
    case 404: return "not_found";
    case 429: return "overloaded";
    case 499: return "disconnected";
    case 503: return "unavailable";
    case 504: return "timeout";
    default: break;
  }
  if (http_status >= 500) return "internal";
  return http_status >= 400 ? "invalid_request" : "";
}

ServerMetrics::ServerMetrics()
    : requests_(registry_.AddCounterFamily("surge_http_requests_total",
                                           "HTTP requests answered, by endpoint and status code",
                                           {"endpoint", "code"})),
      errors_(registry_.AddCounterFamily("surge_request_errors_total",
                                         "Requests that ended in an error, by kind (invalid_request, not_found, "
                                         "overloaded, disconnected, unavailable, timeout, internal); a stream's "
                                         "error event counts too",
                                         {"kind"})),
      timeouts_(registry_.AddCounter("surge_request_timeouts_total",
                                     "Requests ended by their deadline (body timeout or --request-timeout)")),
      constraint_compiles_(registry_.AddCounterFamily(
          "surge_constraint_compiles_total",
          "Output constraints by outcome: compiled, failed, cancelled (client gone), cache_hit, cache_hit_failure, "
          "joined, joined_failure (the outcome of an identical compile in flight)",
          {"outcome"})),
      constraint_cache_bytes_(registry_.AddGauge("surge_constraint_cache_bytes",
                                                 "Bytes held by the compiled-grammar cache (--constraint-cache-size)")),
      active_connections_(registry_.AddGauge("surge_http_active_connections",
                                             "Open client connections (the scraper's own included)")),
      in_flight_(registry_.AddGauge("surge_generations_in_flight",
                                    "Completion, chat and embedding requests in flight (being computed or sent)")),
      running_(registry_.AddGauge("surge_num_requests_running", "Sequences in the engine's running batch")),
      waiting_(registry_.AddGauge("surge_num_requests_waiting", "Sequences waiting for the engine")),
      kv_usage_(registry_.AddGauge("surge_kv_cache_usage_ratio", "Fraction of KV cache blocks in use (0..1)")),
      kv_free_blocks_(registry_.AddGauge("surge_kv_cache_free_blocks", "Free KV cache blocks")),
      kv_total_blocks_(registry_.AddGauge("surge_kv_cache_total_blocks", "KV cache blocks in the pool")),
      kv_used_bytes_(registry_.AddGauge("surge_kv_cache_used_bytes",
                                        "Bytes of the KV cache in blocks in use (blocks x bytes per block)")),
      kv_total_bytes_(registry_.AddGauge("surge_kv_cache_total_bytes",
                                         "Bytes of the KV cache pool, in its KV dtype (scales included)")),
      prompt_tokens_(registry_.AddCounter("surge_prompt_tokens_total", "Prompt tokens of finished requests")),
      generation_tokens_(registry_.AddCounter("surge_generation_tokens_total",
                                              "Tokens generated for finished requests")),
      ttft_(registry_.AddHistogram("surge_time_to_first_token_seconds",
                                   "From request arrival to its first output token", LatencyBuckets())),
      e2e_(registry_.AddHistogram("surge_e2e_request_latency_seconds",
                                  "From request arrival to its last output token", LatencyBuckets())),
      tpot_(registry_.AddHistogram("surge_time_per_output_token_seconds",
                                   "Mean time between output tokens of a request", TokenLatencyBuckets())),
      inter_token_latency_(registry_.AddHistogram("surge_inter_token_latency_seconds",
                                                  "Time between consecutive outputs carrying tokens to a choice, "
                                                  "at the HTTP edge",
                                                  TokenLatencyBuckets())),
      queue_time_by_tier_(registry_.AddHistogramFamily(
          "surge_request_queue_time_seconds",
          "From submission to the engine until first scheduled, by priority tier", {"tier"}, LatencyBuckets())),
      ttft_by_tier_(registry_.AddHistogramFamily("surge_time_to_first_token_by_tier_seconds",
                                                 "From request arrival to its first output token, by priority tier",
                                                 {"tier"}, LatencyBuckets())),
      prefix_cache_hit_rate_(registry_.AddGauge(
          "surge_prefix_cache_hit_rate", "Prompt tokens found in the prefix cache / tokens looked up, since start-up")),
      prefix_cache_blocks_(registry_.AddGauge("surge_prefix_cache_cached_blocks",
                                              "KV blocks whose contents the prefix cache names (held or not)")),
      busy_seconds_(registry_.AddCounter("surge_engine_busy_seconds_total",
                                         "Wall time the engine loop spent in steps (forward pass and sampling); "
                                         "rate() of it is the busy fraction")),
      steps_(registry_.AddCounter("surge_engine_steps_total", "Engine steps (forward passes) run")),
      busy_fraction_(registry_.AddGauge("surge_engine_busy_fraction",
                                        "Fraction of wall time in engine steps since the previous scrape (0..1): "
                                        "the CPU/GPU-utilisation analogue an autoscaler reads")),
      process_(&registry_),
      spec_drafts_(registry_.AddCounterFamily("surge_spec_decode_num_drafts_total",
                                              "Decodes that carried a speculative proposal", {"method"})),
      spec_draft_tokens_(registry_.AddCounterFamily("surge_spec_decode_num_draft_tokens_total",
                                                    "Tokens proposed by speculative decoding", {"method"})),
      spec_accepted_tokens_(registry_.AddCounterFamily("surge_spec_decode_num_accepted_tokens_total",
                                                       "Proposed tokens the target model accepted", {"method"})),
      spec_accepted_per_pos_(registry_.AddCounterFamily(
          "surge_spec_decode_num_accepted_tokens_per_pos_total",
          "Proposed tokens accepted at each draft position (0: the first)", {"method", "position"})),
      spec_acceptance_rate_(registry_.AddGaugeFamily("surge_spec_decode_acceptance_rate",
                                                     "Accepted / proposed tokens since start-up", {"method"})),
      spec_mean_accepted_length_(registry_.AddGaugeFamily(
          "surge_spec_decode_mean_acceptance_length",
          "Tokens a speculating decode produced on average: 1 + accepted / drafts, since start-up", {"method"})) {
  auto mirror = [&](const char* name, const char* help, int64_t EngineStats::*total) {
    mirrors_.push_back({&registry_.AddCounter(name, help), total});
  };
  mirror("surge_num_preemptions_total", "Sequences preempted by the scheduler", &EngineStats::num_preemptions);
  mirror("surge_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache at admission",
         &EngineStats::prefix_cache_queried_tokens);
  mirror("surge_prefix_cache_hits_total", "Prompt tokens served from the prefix cache (not computed)",
         &EngineStats::prefix_cache_hit_tokens);
  mirror("surge_prefix_cache_evictions_total", "Cached KV blocks evicted to make room",
         &EngineStats::prefix_cache_evicted_blocks);
  mirror("surge_prefix_cache_expirations_total", "Cached KV blocks released by --prefix-cache-ttl",
         &EngineStats::prefix_cache_expired_blocks);
  auto trace_mirror = [&](const char* name, const char* help, int64_t obs::SpanExporterStats::*total) {
    trace_mirrors_.push_back({&registry_.AddCounter(name, help), total});
  };
  trace_mirror("surge_trace_spans_exported_total", "Spans the OTLP collector accepted (--otlp-endpoint)",
               &obs::SpanExporterStats::num_exported);
  trace_mirror("surge_trace_spans_dropped_total", "Spans dropped before sending: the export queue was full",
               &obs::SpanExporterStats::num_dropped);
  trace_mirror("surge_trace_spans_failed_total", "Spans sent but never accepted (retries spent or refused)",
               &obs::SpanExporterStats::num_failed);
  auto step_mirror = [&](const char* name, const char* help, StepSizeHistogram EngineStats::*total) {
    step_mirrors_.push_back({&registry_.AddHistogram(name, help, StepSizeBuckets()), total, {}});
  };
  step_mirror("surge_engine_step_tokens", "Tokens computed per engine step (prefill chunks + decodes)",
              &EngineStats::step_tokens);
  step_mirror("surge_engine_step_sequences", "Sequences in the batch per engine step", &EngineStats::step_sequences);
}

void ServerMetrics::CountRequest(std::string_view endpoint, int http_status) {
  requests_.WithLabels({endpoint, std::to_string(http_status)}).Increment();
  if (http_status >= 400) CountError(ErrorKindForStatus(http_status));
}

void ServerMetrics::ObserveQueueTime(std::string_view tier, double seconds) {
  queue_time_by_tier_.WithLabels({tier}).Observe(seconds);
  if (vllm_) vllm_->ObserveQueueTime(seconds);
}

void ServerMetrics::ObserveGeneration(double ttft_seconds, double e2e_seconds, int64_t num_prompt_tokens,
                                      int64_t num_completion_tokens, std::string_view tier, double queue_seconds) {
  prompt_tokens_.Increment(static_cast<double>(num_prompt_tokens));
  generation_tokens_.Increment(static_cast<double>(num_completion_tokens));
  if (vllm_) vllm_->ObserveGeneration(ttft_seconds, e2e_seconds, queue_seconds, num_prompt_tokens, num_completion_tokens);
  if (num_completion_tokens == 0) return;  // no token: no latency to speak of
  ttft_.Observe(ttft_seconds);
  ttft_by_tier_.WithLabels({tier}).Observe(ttft_seconds);
  e2e_.Observe(e2e_seconds);
  if (num_completion_tokens > 1) {
    tpot_.Observe((e2e_seconds - ttft_seconds) / static_cast<double>(num_completion_tokens - 1));
  }
}

void ServerMetrics::RefreshBusy(const EngineStats& stats) {
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::steady_clock::now().time_since_epoch()).count();
  const int64_t busy_delta_us = std::max<int64_t>(stats.busy_us - last_busy_us_, 0);
  busy_seconds_.Increment(static_cast<double>(busy_delta_us) / 1e6);
  steps_.Increment(static_cast<double>(std::max<int64_t>(stats.num_steps - last_steps_, 0)));
  if (last_scrape_us_ > 0 && now_us > last_scrape_us_) {
    busy_fraction_.Set(std::clamp(static_cast<double>(busy_delta_us) / static_cast<double>(now_us - last_scrape_us_), 0.0, 1.0));
  }
  last_busy_us_ = std::max(last_busy_us_, stats.busy_us);
  last_steps_ = std::max(last_steps_, stats.num_steps);
  last_scrape_us_ = now_us;
}

void ServerMetrics::RefreshSpecDecode(const EngineStats& stats) {
  if (stats.spec_decode_method == "none") return;
  const std::string_view method = stats.spec_decode_method;
  spec_drafts_.WithLabels({method}).Increment(static_cast<double>(Grown(stats.spec_decode_num_drafts, &last_spec_drafts_)));
  spec_draft_tokens_.WithLabels({method}).Increment(
      static_cast<double>(Grown(stats.spec_decode_num_draft_tokens, &last_spec_draft_tokens_)));
  spec_accepted_tokens_.WithLabels({method}).Increment(
      static_cast<double>(Grown(stats.spec_decode_num_accepted_tokens, &last_spec_accepted_tokens_)));
  const std::vector<int64_t>& per_pos = stats.spec_decode_num_accepted_tokens_per_pos;
  last_spec_per_pos_.resize(per_pos.size(), 0);
  for (size_t i = 0; i < per_pos.size(); ++i) {
    spec_accepted_per_pos_.WithLabels({method, std::to_string(i)})
        .Increment(static_cast<double>(Grown(per_pos[i], &last_spec_per_pos_[i])));
  }
  const int64_t proposed = stats.spec_decode_num_draft_tokens;
  const int64_t drafts = stats.spec_decode_num_drafts;
  spec_acceptance_rate_.WithLabels({method}).Set(
      proposed > 0 ? static_cast<double>(stats.spec_decode_num_accepted_tokens) / proposed : 0.0);
  spec_mean_accepted_length_.WithLabels({method}).Set(
      drafts > 0 ? 1.0 + static_cast<double>(stats.spec_decode_num_accepted_tokens) / drafts : 0.0);
}

void ServerMetrics::RefreshKv(const EngineStats& stats) {
  kv_free_blocks_.Set(static_cast<double>(stats.num_free_blocks));
  kv_total_blocks_.Set(static_cast<double>(stats.num_total_blocks));
  const int64_t used = stats.num_total_blocks - stats.num_free_blocks;
  kv_usage_.Set(stats.num_total_blocks > 0 ? static_cast<double>(used) / stats.num_total_blocks : 0.0);
  kv_used_bytes_.Set(static_cast<double>(used * stats.kv_bytes_per_block));
  kv_total_bytes_.Set(static_cast<double>(stats.num_total_blocks * stats.kv_bytes_per_block));
}

void ServerMetrics::RefreshMirrors(const EngineStats& stats, const obs::SpanExporterStats* traces) {
  for (Mirror& mirror : mirrors_) mirror.counter->Increment(static_cast<double>(Grown(stats.*mirror.total, &mirror.last)));
  for (TraceMirror& mirror : trace_mirrors_) {
    if (traces == nullptr) break;
    mirror.counter->Increment(static_cast<double>(Grown((*traces).*mirror.total, &mirror.last)));
  }
  for (StepMirror& mirror : step_mirrors_) {
    const StepSizeHistogram& total = stats.*mirror.total;
    std::array<uint64_t, StepSizeHistogram::kNumBounds + 1> delta{};
    for (size_t i = 0; i < delta.size(); ++i) {
      delta[i] = total.bucket_counts[i] > mirror.last.bucket_counts[i] ? total.bucket_counts[i] - mirror.last.bucket_counts[i] : 0;
    }
    mirror.histogram->AddCounts(delta, static_cast<double>(std::max<int64_t>(total.sum - mirror.last.sum, 0)));
    mirror.last = total;
  }
}

std::string ServerMetrics::Expose(const EngineStats& stats, const obs::SpanExporterStats* traces) {
  std::lock_guard<std::mutex> lock(scrape_mu_);
  running_.Set(stats.num_running);
  waiting_.Set(stats.num_waiting);
  RefreshKv(stats);
  RefreshMirrors(stats, traces);
  RefreshBusy(stats);
  RefreshSpecDecode(stats);
  process_.Refresh();
  const int64_t queried = stats.prefix_cache_queried_tokens;
  prefix_cache_hit_rate_.Set(queried > 0 ? static_cast<double>(stats.prefix_cache_hit_tokens) / queried : 0.0);
  prefix_cache_blocks_.Set(static_cast<double>(stats.num_cached_blocks));
  if (vllm_) vllm_->Refresh(stats);
  return registry_.Expose();
}

}  // namespace surge
