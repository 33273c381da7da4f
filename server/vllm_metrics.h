// VllmMetrics: vLLM's metric families (`vllm:...`, labelled model_name) beside surge's own,
// fed from the same observations, so that KEDA triggers, Grafana boards and the llm-d
// endpoint picker written for vLLM read a surge engine unchanged (--metrics-compat vllm;
// docs/VLLM_COMPAT.md lists each family and its surge twin).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/engine_client.h"
#include "obs/metrics.h"

namespace surge {

class VllmMetrics {
 public:
  VllmMetrics(obs::Registry& registry, const std::string& model_name);

  // One finished generation: seconds from arrival to first token and to the end, seconds
  // queued (negative: unknown), token counts.
  void ObserveGeneration(double ttft_s, double e2e_s, double queue_s, int64_t num_prompt_tokens,
                         int64_t num_generation_tokens);
  void ObserveQueueTime(double seconds) { queue_time_.Observe(seconds); }
  void ObserveInterTokenLatency(double seconds) { inter_token_latency_.Observe(seconds); }
  // A request that ended: OpenAI's finish reason ("stop", "length", "tool_calls", ...),
  // counted under vLLM's finished_reason (stop | length | abort).
  void CountFinished(std::string_view finish_reason);
  // Gauges and the engine's counters, at each scrape (the caller holds its scrape lock).
  void Refresh(const EngineStats& stats);

 private:
  obs::Gauge& running_;
  obs::Gauge& waiting_;
  obs::Gauge& kv_usage_;
  obs::Gauge& gpu_cache_usage_;  // vLLM V0's name of the same figure; older boards read it
  // vLLM V0's swap figures, still on its Grafana board: surge never swaps, so always 0.
  obs::Gauge& num_swapped_;
  obs::Gauge& cpu_cache_usage_;
  obs::Counter& prompt_tokens_;
  obs::Counter& generation_tokens_;
  obs::Counter& prefix_queries_;
  obs::Counter& prefix_hits_;
  obs::Counter& preemptions_;
  obs::CounterFamily& success_;
  const std::string model_name_;
  obs::Histogram& ttft_;
  obs::Histogram& e2e_;
  obs::Histogram& queue_time_;
  obs::Histogram& inter_token_latency_;
  obs::Histogram& time_per_output_token_;
  obs::Histogram& request_tpot_;
  obs::Histogram& prefill_time_;
  obs::Histogram& decode_time_;
  obs::Histogram& prompt_tokens_per_request_;
  obs::Histogram& generation_tokens_per_request_;
  int64_t last_prefix_queries_ = 0;
  int64_t last_prefix_hits_ = 0;
  int64_t last_preemptions_ = 0;
};

}  // namespace surge
