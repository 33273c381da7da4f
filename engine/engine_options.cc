#include "engine/engine_options.h"

#include <algorithm>
#include <iomanip>
#include <limits>
#include <string>

#include "base/logging.h"

namespace surge {

Status EngineOptions::Validate() const {
  if (block_size <= 0) return InvalidArgumentError("block_size must be > 0");
  if (max_num_seqs <= 0) return InvalidArgumentError("max_num_seqs must be > 0");
  if (max_num_batched_tokens <= 0) {
    return InvalidArgumentError("max_num_batched_tokens must be > 0");
  }
  if (max_waiting <= 0) return InvalidArgumentError("max_waiting must be > 0");
  if (max_prefill_tokens_with_decodes < 0) {
    return InvalidArgumentError("max_prefill_tokens_with_decodes must be >= 0");
  }
  if (!(prefix_cache_ttl_s >= 0)) return InvalidArgumentError("prefix_cache_ttl_s must be >= 0");
  if (!(priority_aging_s > 0)) return InvalidArgumentError("priority_aging_s must be > 0");
  if (proposer != nullptr) {
    if (num_speculative_tokens < 1 || num_speculative_tokens > kMaxSpeculativeTokens) {
      return InvalidArgumentError("num_speculative_tokens must be in [1, " +
                                  std::to_string(kMaxSpeculativeTokens) + "]");
    }
    if (speculative_max_decodes < 1) {
      return InvalidArgumentError("speculative_max_decodes must be >= 1");
    }
  }
  return OkStatus();
}

// Logs what the budget buys, and for MLA what the latent saves.
StatusOr<int32_t> NumKvBlocks(const EngineOptions& options, const ModelExecutor& model) {
  const KvLayout layout = model.kv_layout(options.block_size, options.kv_dtype);
  const int64_t bytes_per_block = static_cast<int64_t>(layout.bytes_per_block());
  const int64_t num_blocks = std::min<int64_t>(options.kv_cache_bytes / bytes_per_block,
                                               std::numeric_limits<int32_t>::max());
  if (num_blocks < 1) {
    return InvalidArgumentError("kv_cache_bytes (" + std::to_string(options.kv_cache_bytes) +
                                ") is smaller than one KV block (" +
                                std::to_string(bytes_per_block) + " bytes)");
  }
  LOG(INFO) << "KV cache: " << KvDTypeName(layout.dtype) << ", " << num_blocks << " blocks of "
            << options.block_size << " tokens, " << layout.bytes_per_token() << " bytes per token, "
            << num_blocks * options.block_size << " tokens fit ("
            << num_blocks * bytes_per_block / (1 << 20) << " MiB); prefix caching "
            << (options.enable_prefix_caching ? "on" : "off");
  if (layout.latent) {  // what MLA saves: per-head K and V would take this much
    const MlaConfig& mla = *model.config().mla;
    const int64_t mha_row_values = model.config().num_heads * (mla.q_head_dim() + mla.v_head_dim);
    LOG(INFO) << "KV cache: MLA latent of " << layout.head_dim << " values per token and layer;"
              << " per-head K/V would take " << mha_row_values << " ("
              << std::setprecision(3) << static_cast<double>(mha_row_values) / layout.head_dim
              << "x)";
  }
  return static_cast<int32_t>(num_blocks);
}

}  // namespace surge
