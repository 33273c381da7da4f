#include "engine/model_runner.h"

#include <algorithm>

#include "base/phase_profile.h"

namespace surge {

ModelRunner::ModelRunner(ModelExecutor& model, const KvLayout& layout, int32_t num_blocks)
    : model_(model),
      vocab_size_(static_cast<int32_t>(model.config().vocab_size)),
      hidden_size_(static_cast<int32_t>(model.config().hidden_size)),
      storage_(layout, num_blocks) {}

std::span<const float> ModelRunner::Run(const SchedulerOutput& plan, const KvCacheManager& kv) {
  PhaseMarks marks;
  token_ids_.clear();
  chunks_.clear();
  logits_rows_.clear();
  hidden_rows_.clear();
  chunk_hidden_begin_.assign(1, 0);
  for (const ScheduledChunk& chunk : plan.chunks) {
    const int32_t token_begin = static_cast<int32_t>(token_ids_.size());
    const auto first = chunk.seq->token_ids.begin() + chunk.start_position;
    const int32_t num_known = chunk.num_tokens - chunk.num_draft_tokens;
    token_ids_.insert(token_ids_.end(), first, first + num_known);
    const auto& drafts = chunk.seq->draft_token_ids;
    token_ids_.insert(token_ids_.end(), drafts.begin(), drafts.begin() + chunk.num_draft_tokens);
    chunks_.push_back(
        {token_begin, chunk.num_tokens, chunk.start_position, kv.BlockTable(chunk.seq->id)});
    const int32_t end = token_begin + chunk.num_tokens;
    for (int32_t row = end - NumHiddenRows(chunk); row < end; ++row) hidden_rows_.push_back(row);
    chunk_hidden_begin_.push_back(hidden_rows_.size());
    if (chunk.seq->output == SequenceOutput::kTokens || chunk.seq->output == SequenceOutput::kPromptLogits) {
      for (int32_t row = token_begin; row < token_begin + NumPromptLogitsRows(chunk); ++row) logits_rows_.push_back(row);
      // A decode with drafts scores each of them and the token after the last.
      for (int32_t row = end - 1 - chunk.num_draft_tokens; chunk.sample && row < end; ++row) {
        logits_rows_.push_back(row);
      }
    }
  }
  // resize() keeps the capacity: after the largest batch seen, nothing is allocated.
  logits_.resize(logits_rows_.size() * static_cast<size_t>(vocab_size_));
  hidden_.resize(hidden_rows_.size() * static_cast<size_t>(hidden_size_));
  const ForwardBatch batch{token_ids_, chunks_, logits_rows_, hidden_rows_};
  marks.Mark(Phase::kBatchBuild);
  model_.Run(batch, storage_, logits_, hidden_);  // marks Phase::kForward
  return logits_;
}

// The chunk's rows at prompt positions p whose next token (p + 1) is still the prompt's:
// its first rows (a recomputed chunk after preemption may run on into the output).
int32_t ModelRunner::NumPromptLogitsRows(const ScheduledChunk& chunk) {
  if (chunk.seq->output != SequenceOutput::kPromptLogits) return 0;
  const int32_t num_scored = chunk.seq->num_prompt_tokens - 1 - chunk.start_position;
  return std::clamp(num_scored, 0, chunk.num_tokens);
}

std::span<const float> ModelRunner::chunk_hidden(size_t i) const {
  const size_t size = static_cast<size_t>(hidden_size_);
  return std::span<const float>(hidden_).subspan(chunk_hidden_begin_[i] * size,
                                                 (chunk_hidden_begin_[i + 1] - chunk_hidden_begin_[i]) * size);
}

int32_t ModelRunner::NumHiddenRows(const ScheduledChunk& chunk) const {
  switch (chunk.seq->output) {
    case SequenceOutput::kTokens: return hidden_of_token_rows_ ? chunk.num_tokens : 0;
    case SequenceOutput::kPromptLogits: return 0;
    case SequenceOutput::kLastHidden: return chunk.sample ? 1 : 0;
    case SequenceOutput::kAllHidden: return chunk.num_tokens;
  }
  return 0;
}

}  // namespace surge
