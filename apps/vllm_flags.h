// `vllm serve` flags that `surge serve` takes under vLLM's names with vLLM's meaning, and the
// ones it refuses with the reason (docs/VLLM_COMPAT.md is the table). Flags vLLM and surge
// already share (--host, --port, --dtype, --block-size, ...) stay where they are.
#pragma once

#include <cstdint>
#include <string>

#include "apps/serve_runtime.h"
#include "base/flags.h"
#include "base/status.h"

namespace surge {

struct VllmFlags {
  std::string max_model_len;  // "": the model's context; "4096", "4k" (x1000), "4K" (x1024)
  std::string api_key;        // comma-separated keys
  bool api_key_for_metrics = false;
  bool enable_prefix_caching = true;
  bool enable_auto_tool_choice = false;
  bool enable_chunked_prefill = true;
  double gpu_memory_utilization = 0;  // 0: not given
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;
  int64_t data_parallel_size = 1;
  int64_t seed = 0;
  std::string log_level = "info";
  bool disable_log_requests = false;
  bool trust_remote_code = false;
  bool enforce_eager = false;
  std::string generation_config = "vllm";
  std::string metrics_compat = "none";
};

void RegisterVllmFlags(FlagParser& parser, VllmFlags& flags);

// Fills `config` from the flags; InvalidArgument naming the flag for a value surge cannot
// honour. `kv_cache_memory_given`: --kv-cache-memory was given (it and
// --gpu-memory-utilization size the same thing).
Status ApplyVllmFlags(const VllmFlags& flags, const FlagParser& parser, bool kv_cache_memory_given,
                      ServeConfig* config);

// "4096" -> 4096, "4k" -> 4000, "4K" -> 4096 (vLLM's --max-model-len forms).
StatusOr<int64_t> ParseTokenCount(const std::string& text, const std::string& flag);

}  // namespace surge
