// DraftModelProposer: speculative decoding's `draft` method -- a smaller model sharing the
// target's tokenizer (or the target's own weights quantized: self-speculation) guesses
// the next k tokens of every decoding sequence greedily, batched: one pass brings each
// sequence's draft K/V up to its current tokens and scores the first guess, then k - 1
// single-token passes extend the guesses (a long backlog, such as a new 16K-token prompt, is
// caught up a bounded slice per step instead). The draft keeps its own paged KV cache; what
// the target rejected is truncated from it at the next proposal (its kept tokens are the
// longest common prefix with the sequence's tokens), so it never needs a callback.
//
// Greedy guessing makes the proposal deterministic (q one-hot), for which the engine's
// rejection rule (SequenceSampler::Verify) keeps the target distribution exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "engine/spec_decode/proposer.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_storage.h"
#include "model/executor.h"

namespace surge {

class DraftModelProposer final : public Proposer {
 public:
  // `draft` is borrowed and must outlive the proposer; its vocabulary must equal the
  // target's (`target_vocab_size`). Its KV cache holds num_blocks blocks of block_size.
  // While more than one sequence decodes, a step's draft passes catch sequences up by at
  // most max_catch_up_tokens tokens in all (0: unbounded); a sequence with more to catch
  // up proposes nothing until it has.
  static StatusOr<std::unique_ptr<DraftModelProposer>> Create(ModelExecutor& draft, int64_t target_vocab_size,
                                                              int32_t block_size, int32_t num_blocks,
                                                              int32_t max_catch_up_tokens = 0);

  SpeculativeMethod method() const override { return SpeculativeMethod::kDraft; }
  void Propose(std::span<const ProposalRequest> requests) override;

  int32_t num_sequences() const { return static_cast<int32_t>(known_.size()); }  // tests

 private:
  DraftModelProposer(ModelExecutor& draft, const KvLayout& layout, int32_t num_blocks, int32_t max_catch_up_tokens);
  struct Feed {
    Sequence* seq;
    int32_t max_tokens;  // guesses wanted this step (0: still catching up)
    int32_t end;         // pass 0 feeds its tokens [known, end)
  };
  // Drops the state of every sequence not in `requests`.
  void Sweep(std::span<const ProposalRequest> requests);
  // Truncates `seq`'s draft state to what it shares with seq.token_ids and reserves room
  // for what pass 0 feeds (within `budget`, which it lowers) plus the guesses fed back.
  // Nullopt: nothing to feed, or no room.
  std::optional<Feed> Prepare(const ProposalRequest& request, int32_t& budget);
  // One draft pass; the argmax of each guessing sequence's last row goes to its guesses.
  void RunPass(int32_t pass);

  ModelExecutor& draft_;
  const int32_t max_catch_up_tokens_;
  KvCacheManager kv_;
  KvStorage storage_;
  // Per sequence: the tokens whose K/V the draft cache holds, positions [0, size).
  std::unordered_map<SequenceId, std::vector<int32_t>> known_;
  std::vector<Feed> feeds_;
  std::vector<int32_t> token_ids_;
  std::vector<SequenceChunk> chunks_;
  std::vector<int32_t> logits_rows_;
  std::vector<float> logits_;
  std::unordered_set<SequenceId> live_;  // reused by Sweep
  std::vector<SequenceId> stale_;
};

}  // namespace surge
