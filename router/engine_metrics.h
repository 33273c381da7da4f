// ParseEngineLoad: reads an engine's Prometheus /metrics text (with obs/exposition.h, the
// project's one reader of it) for the numbers routing needs
// (running, waiting, KV usage), under surge serve's names or vLLM's, so that the router
// balances other engines too.
#pragma once

#include <string_view>

#include "base/status.h"
#include "router/backend.h"

namespace surge::router {

// surge_num_requests_running | vllm:num_requests_running, surge_num_requests_waiting |
// vllm:num_requests_waiting, surge_kv_cache_usage_ratio | vllm:gpu_cache_usage_perc |
// vllm:kv_cache_usage_perc (all fractions in [0, 1]). Samples of one name with different
// labels are summed (KV usage: averaged). A name absent leaves its field at -1.
// INVALID_ARGUMENT, naming the sample, when one of these is not finite, negative, a count
// above 1e9 or a fraction above 1 (NaN, +Inf, 1e999): the whole answer is then unusable.
StatusOr<EngineLoad> ParseEngineLoad(std::string_view metrics_text);

}  // namespace surge::router
