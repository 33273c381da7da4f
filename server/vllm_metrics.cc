#include "server/vllm_metrics.h"

#include <algorithm>

namespace surge {
namespace {

// vLLM's families carry model_name; each is one child of a one-label family.
obs::Gauge& ModelGauge(obs::Registry& registry, const char* name, const char* help, const std::string& model) {
  return registry.AddGaugeFamily(name, help, {"model_name"}).WithLabels({model});
}
obs::Counter& ModelCounter(obs::Registry& registry, const char* name, const char* help, const std::string& model) {
  return registry.AddCounterFamily(name, help, {"model_name"}).WithLabels({model});
}
obs::Histogram& ModelHistogram(obs::Registry& registry, const char* name, const char* help, const std::string& model,
                          std::vector<double> bounds) {
  return registry.AddHistogramFamily(name, help, {"model_name"}, std::move(bounds)).WithLabels({model});
}

// 1 ms ... 10 s per output token.
std::vector<double> TokenLatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 10};
}

// 1, 2, 5, 10, ... 1M tokens.
std::vector<double> TokenCountBuckets() {
  std::vector<double> bounds;
  for (double decade = 1; decade <= 1e6; decade *= 10) {
    for (double step : {1.0, 2.0, 5.0}) {
      if (decade * step <= 1e6) bounds.push_back(decade * step);
    }
  }
  return bounds;
}

int64_t Grown(int64_t total, int64_t* last) {
  const int64_t delta = std::max<int64_t>(total - *last, 0);
  *last = std::max(*last, total);
  return delta;
}

}  // namespace

VllmMetrics::VllmMetrics(obs::Registry& r, const std::string& model)
    : running_(ModelGauge(r, "vllm:num_requests_running", "Requests in the engine's running batch", model)),
      waiting_(ModelGauge(r, "vllm:num_requests_waiting", "Requests waiting for the engine", model)),
      kv_usage_(ModelGauge(r, "vllm:kv_cache_usage_perc", "KV cache usage: 1 means 100 percent", model)),
      gpu_cache_usage_(ModelGauge(r, "vllm:gpu_cache_usage_perc",
                             "KV cache usage: 1 means 100 percent (vLLM V0's name of vllm:kv_cache_usage_perc)", model)),
      num_swapped_(ModelGauge(r, "vllm:num_requests_swapped", "Requests swapped to host memory: surge never swaps (0)", model)),
      cpu_cache_usage_(ModelGauge(r, "vllm:cpu_cache_usage_perc", "Swap space usage: surge has none (0)", model)),
      prompt_tokens_(ModelCounter(r, "vllm:prompt_tokens_total", "Prefill tokens processed", model)),
      generation_tokens_(ModelCounter(r, "vllm:generation_tokens_total", "Generation tokens processed", model)),
      prefix_queries_(ModelCounter(r, "vllm:prefix_cache_queries_total", "Prefix cache queries, in tokens", model)),
      prefix_hits_(ModelCounter(r, "vllm:prefix_cache_hits_total", "Prefix cache hits, in tokens", model)),
      preemptions_(ModelCounter(r, "vllm:num_preemptions_total", "Cumulative number of preemptions", model)),
      success_(r.AddCounterFamily("vllm:request_success_total", "Requests finished, by finish reason",
                                  {"model_name", "finished_reason"})),
      model_name_(model),
      ttft_(ModelHistogram(r, "vllm:time_to_first_token_seconds", "Time to first token", model, obs::RequestLatencyBuckets())),
      e2e_(ModelHistogram(r, "vllm:e2e_request_latency_seconds", "End-to-end request latency", model,
                     obs::RequestLatencyBuckets())),
      queue_time_(ModelHistogram(r, "vllm:request_queue_time_seconds", "Time spent waiting for the engine", model,
                            obs::RequestLatencyBuckets())),
      inter_token_latency_(ModelHistogram(r, "vllm:inter_token_latency_seconds", "Inter-token latency", model,
                                     TokenLatencyBuckets())),
      time_per_output_token_(ModelHistogram(r, "vllm:time_per_output_token_seconds",
                                       "Mean time per output token of a request (vLLM's older name)", model,
                                       TokenLatencyBuckets())),
      request_tpot_(ModelHistogram(r, "vllm:request_time_per_output_token_seconds", "Mean time per output token of a request",
                              model, TokenLatencyBuckets())),
      prefill_time_(ModelHistogram(r, "vllm:request_prefill_time_seconds",
                              "From first scheduled to first token (prefill), per request", model,
                              obs::RequestLatencyBuckets())),
      decode_time_(ModelHistogram(r, "vllm:request_decode_time_seconds", "From first token to last token, per request",
                             model, obs::RequestLatencyBuckets())),
      prompt_tokens_per_request_(ModelHistogram(r, "vllm:request_prompt_tokens", "Prompt tokens per request", model,
                                           TokenCountBuckets())),
      generation_tokens_per_request_(ModelHistogram(r, "vllm:request_generation_tokens", "Generation tokens per request",
                                               model, TokenCountBuckets())) {}

void VllmMetrics::ObserveGeneration(double ttft_s, double e2e_s, double queue_s, int64_t num_prompt_tokens,
                                    int64_t num_generation_tokens) {
  prompt_tokens_.Increment(static_cast<double>(num_prompt_tokens));
  generation_tokens_.Increment(static_cast<double>(num_generation_tokens));
  prompt_tokens_per_request_.Observe(static_cast<double>(num_prompt_tokens));
  generation_tokens_per_request_.Observe(static_cast<double>(num_generation_tokens));
  if (num_generation_tokens == 0) return;
  ttft_.Observe(ttft_s);
  e2e_.Observe(e2e_s);
  if (queue_s >= 0) prefill_time_.Observe(std::max(ttft_s - queue_s, 0.0));
  decode_time_.Observe(std::max(e2e_s - ttft_s, 0.0));
  if (num_generation_tokens > 1) {
    const double tpot = (e2e_s - ttft_s) / static_cast<double>(num_generation_tokens - 1);
    time_per_output_token_.Observe(tpot);
    request_tpot_.Observe(tpot);
  }
}

void VllmMetrics::CountFinished(std::string_view finish_reason) {
  const std::string_view reason = finish_reason == "length" ? "length" : finish_reason.empty() ? "abort" : "stop";
  success_.WithLabels({model_name_, reason}).Increment();
}

void VllmMetrics::Refresh(const EngineStats& stats) {
  running_.Set(stats.num_running);
  waiting_.Set(stats.num_waiting);
  const int64_t used = stats.num_total_blocks - stats.num_free_blocks;
  const double usage = stats.num_total_blocks > 0 ? static_cast<double>(used) / stats.num_total_blocks : 0.0;
  kv_usage_.Set(usage);
  gpu_cache_usage_.Set(usage);
  prefix_queries_.Increment(static_cast<double>(Grown(stats.prefix_cache_queried_tokens, &last_prefix_queries_)));
  prefix_hits_.Increment(static_cast<double>(Grown(stats.prefix_cache_hit_tokens, &last_prefix_hits_)));
  preemptions_.Increment(static_cast<double>(Grown(stats.num_preemptions, &last_preemptions_)));
}

}  // namespace surge
