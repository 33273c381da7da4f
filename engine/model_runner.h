// ModelRunner: turns a scheduler plan into one ForwardBatch -- every prefill chunk and
// decode together -- runs the model over the paged KV storage it owns, and keeps the
// logits of the rows to sample and the hidden states of the rows embeddings pool. Its
// batch buffers are reused from step to step.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/scheduler.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_storage.h"
#include "model/executor.h"

namespace surge {

class ModelRunner {
 public:
  // Allocates the KV storage: num_blocks blocks of `layout` (model.kv_layout()).
  ModelRunner(ModelExecutor& model, const KvLayout& layout, int32_t num_blocks);

  // Runs all chunks of `plan` in one forward pass; K/V go where `kv` block tables say.
  // Returns the logits, in plan order, valid until the next Run: per chunk its
  // NumPromptLogitsRows rows, then its last 1 + num_draft_tokens rows when `sample` is
  // set ([rows, vocab_size]).
  std::span<const float> Run(const SchedulerOutput& plan, const KvCacheManager& kv);

  // Also keep the hidden state of every row of the token-generating chunks (what an MTP
  // proposer reads), not only the embedding chunks'.
  void set_hidden_of_token_rows(bool on) { hidden_of_token_rows_ = on; }
  // After Run: chunk i's final-normed hidden states, [rows, hidden_size] (NumHiddenRows);
  // valid until the next Run.
  std::span<const float> chunk_hidden(size_t i) const;
  // Rows a chunk's hidden states cover: every row under kAllHidden, its last under
  // kLastHidden when the chunk completes the prompt, every row of a kTokens chunk when
  // set_hidden_of_token_rows, none otherwise.
  int32_t NumHiddenRows(const ScheduledChunk& chunk) const;
  // Rows of a kPromptLogits chunk that score the prompt's next token (positions p with
  // p + 1 < num_prompt_tokens); 0 for other chunks.
  static int32_t NumPromptLogitsRows(const ScheduledChunk& chunk);

  int32_t vocab_size() const { return vocab_size_; }
  const KvStorage& storage() const { return storage_; }

 private:
  ModelExecutor& model_;
  const int32_t vocab_size_;
  const int32_t hidden_size_;
  KvStorage storage_;
  std::vector<int32_t> token_ids_;     // [num_batched_tokens]
  std::vector<SequenceChunk> chunks_;  // [num_scheduled_sequences]
  std::vector<int32_t> logits_rows_;   // [num_logits_rows]: prompt-scoring rows, sampled chunks' last rows
  std::vector<float> logits_;          // [num_logits_rows, vocab_size]
  bool hidden_of_token_rows_ = false;
  std::vector<int32_t> hidden_rows_;   // [num_hidden_rows]: rows the embedding chunks pool (and token rows)
  std::vector<float> hidden_;          // [num_hidden_rows, hidden_size]
  std::vector<size_t> chunk_hidden_begin_;  // [num_chunks + 1]: chunk i's rows of hidden_
};

}  // namespace surge
