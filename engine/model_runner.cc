#include "engine/model_runner.h"

namespace surge {

ModelRunner::ModelRunner(Model& model, const KvLayout& layout, int32_t num_blocks)
    : model_(model),
      vocab_size_(static_cast<int32_t>(model.config().vocab_size)),
      storage_(layout, num_blocks) {}

std::span<const float> ModelRunner::Run(const SchedulerOutput& plan, const KvCacheManager& kv) {
  token_ids_.clear();
  chunks_.clear();
  logits_rows_.clear();
  for (const ScheduledChunk& chunk : plan.chunks) {
    const int32_t token_begin = static_cast<int32_t>(token_ids_.size());
    const auto first = chunk.seq->token_ids.begin() + chunk.start_position;
    token_ids_.insert(token_ids_.end(), first, first + chunk.num_tokens);
    chunks_.push_back(
        {token_begin, chunk.num_tokens, chunk.start_position, kv.BlockTable(chunk.seq->id)});
    if (chunk.sample) logits_rows_.push_back(token_begin + chunk.num_tokens - 1);
  }
  // resize() keeps the capacity: after the largest batch seen, nothing is allocated.
  logits_.resize(logits_rows_.size() * static_cast<size_t>(vocab_size_));
  const ForwardBatch batch{token_ids_, chunks_, logits_rows_};
  model_.Forward(batch, storage_, logits_);
  return logits_;
}

}  // namespace surge
