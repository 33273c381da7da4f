// DraftModelProposer: speculative decoding's `draft` method -- a smaller model sharing the
// target's tokenizer (or the target's own weights quantized: self-speculation) guesses
// the next k tokens of every decoding sequence greedily, batched: one pass brings each
// sequence's draft K/V up to its current tokens and scores the first guess, then k - 1
// single-token passes extend the guesses. The draft keeps its own paged KV cache; what
// the target rejected is truncated from it at the next proposal (its kept tokens are the
// longest common prefix with the sequence's tokens), so it never needs a callback.
//
// Greedy guessing makes the proposal deterministic (q one-hot), for which the engine's
// rejection rule (SequenceSampler::Verify) keeps the target distribution exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "engine/speculative.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_storage.h"
#include "model/executor.h"

namespace surge {

class DraftModelProposer final : public Proposer {
 public:
  // `draft` is borrowed and must outlive the proposer; its vocabulary must equal the
  // target's (`target_vocab_size`). Its KV cache holds num_blocks blocks of block_size.
  static StatusOr<std::unique_ptr<DraftModelProposer>> Create(ModelExecutor& draft, int64_t target_vocab_size,
                                                              int32_t block_size, int32_t num_blocks);

  SpeculativeMethod method() const override { return SpeculativeMethod::kDraft; }
  void Propose(std::span<const ProposalRequest> requests) override;

  int32_t num_sequences() const { return static_cast<int32_t>(known_.size()); }  // tests

 private:
  DraftModelProposer(ModelExecutor& draft, const KvLayout& layout, int32_t num_blocks);
  // Drops the state of every sequence not in `requests`.
  void Sweep(std::span<const ProposalRequest> requests);
  // Truncates `seq`'s draft state to what it shares with seq.token_ids and reserves room
  // for the rest plus max_tokens - 1 guesses fed back. False: no room, no proposal.
  bool Prepare(const ProposalRequest& request);
  // One draft pass over batch_; the argmax of each sequence's last row goes to its guesses.
  void RunPass();

  ModelExecutor& draft_;
  KvCacheManager kv_;
  KvStorage storage_;
  // Per sequence: the tokens whose K/V the draft cache holds, positions [0, size).
  std::unordered_map<SequenceId, std::vector<int32_t>> known_;
  // The pass being built: per sequence its tokens to feed and where they start.
  struct Feed {
    Sequence* seq;
    int32_t max_tokens;
  };
  std::vector<Feed> feeds_;
  std::vector<int32_t> token_ids_;
  std::vector<SequenceChunk> chunks_;
  std::vector<int32_t> logits_rows_;
  std::vector<float> logits_;
  std::unordered_set<SequenceId> live_;  // reused by Sweep
  std::vector<SequenceId> stale_;
};

}  // namespace surge
