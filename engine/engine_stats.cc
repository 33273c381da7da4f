// Engine::CurrentStats: the snapshot for /metrics that the engine thread publishes after
// every step (EngineStats, engine_client.h), gathered from the parts that count.
#include "engine/engine.h"

namespace surge {

EngineStats Engine::CurrentStats(bool ready) const {
  EngineStats stats;
  stats.num_running = scheduler_.num_running();
  stats.num_waiting = scheduler_.num_waiting();
  stats.num_free_blocks = kv_.num_free_blocks();
  stats.num_total_blocks = kv_.num_total_blocks();
  stats.kv_bytes_per_block = kv_bytes_per_block_;
  stats.num_preemptions = scheduler_.num_preemptions();
  stats.num_steps = num_steps_;
  stats.busy_us = busy_us_;
  stats.num_prompt_tokens_computed = output_.num_prompt_tokens_computed();
  stats.num_generation_tokens = output_.num_generation_tokens();
  stats.step_sequences = step_sequences_;
  stats.step_tokens = step_tokens_;
  stats.prefix_caching = kv_.prefix_caching();
  stats.num_cached_blocks = kv_.num_cached_blocks();
  stats.prefix_cache_queried_tokens = kv_.stats().num_queried_tokens;
  stats.prefix_cache_hit_tokens = kv_.stats().num_hit_tokens;
  stats.prefix_cache_evicted_blocks = kv_.stats().num_evicted_blocks;
  stats.prefix_cache_expired_blocks = kv_.stats().num_expired_blocks;
  spec_decoder_.AddStats(stats);
  stats.ready = ready;
  return stats;
}

}  // namespace surge
