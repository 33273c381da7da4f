// MtpProposer: speculative decoding's `mtp` method -- DeepSeek-V3's multi-token-prediction
// layer (model/executor.h MtpExecutor) guesses the next k tokens of every decoding
// sequence, greedily and batched. Its row for position p joins the target's final-normed
// hidden state of p with the token at p + 1 and scores the token at p + 2; the first guess
// comes from the row of the sequence's second-to-last position, each further guess from a
// row chaining the previous row's hidden output with the previous guess.
//
// The module keeps its own paged KV cache (one layer). A row's K/V is real once both its
// inputs are the sequence's own (the target's hidden state, a verified token); rows of
// chained guesses are dropped at the next proposal. The engine shows the proposer every
// hidden state the target computes for a kept position (ObserveTargetHidden); each
// proposal first brings every running sequence's cache up to them (prefill chunks
// included, so a step's catch-up is bounded by the step's own tokens). Positions whose
// hidden state the target never computed -- a prefix-cache hit skips them -- get a zero
// hidden state: their rows are worse guesses, never wrong output, since the target
// decides what is kept.
#pragma once

#include <cstdint>
#include <memory>
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

class MtpProposer final : public Proposer {
 public:
  // `target` is borrowed and must outlive the proposer, and have its MTP module loaded
  // (LoadOptions::load_mtp). The module's KV cache holds num_blocks blocks of block_size.
  static StatusOr<std::unique_ptr<MtpProposer>> Create(ModelExecutor& target, int32_t block_size, int32_t num_blocks);

  SpeculativeMethod method() const override { return SpeculativeMethod::kMtp; }
  bool wants_target_hidden() const override { return true; }
  void ObserveTargetHidden(const Sequence& seq, int32_t start_position, std::span<const float> rows) override;
  void Propose(std::span<const ProposalRequest> requests) override;

  int32_t num_sequences() const { return static_cast<int32_t>(states_.size()); }  // tests

 private:
  MtpProposer(MtpExecutor& mtp, int64_t hidden_size, int64_t vocab_size, const KvLayout& layout, int32_t num_blocks);

  struct State {
    int32_t num_rows = 0;      // the cache holds real rows for positions [0, num_rows)
    int32_t hidden_begin = 0;  // the target's hidden states of positions [hidden_begin, hidden_end())
    std::vector<float> hidden;
  };
  // One sequence's part of a pass.
  struct Feed {
    Sequence* seq;
    int32_t max_tokens;  // guesses wanted (0: catch-up only)
    int32_t begin;       // first position fed this pass
    int32_t end;         // one past the last
  };
  int32_t HiddenEnd(const State& state) const;
  // Drops the state of every sequence not in `requests`.
  void Sweep(std::span<const ProposalRequest> requests);
  // The rows `request`'s sequence needs this proposal, with its cache truncated to its
  // real rows and room reserved for the guesses' rows. False: nothing to feed.
  bool Plan(const ProposalRequest& request, Feed& feed);
  // Appends feed's rows of real positions (token at p + 1, hidden state of p) to the pass.
  void AddRealRows(const Feed& feed);
  // Runs the pass built in the buffers; returns nothing, leaves logits_ / out_hidden_.
  void RunPass();
  void ClearPass();

  MtpExecutor& mtp_;
  const int64_t hidden_size_;
  const int64_t vocab_size_;
  KvCacheManager kv_;
  KvStorage storage_;
  std::unordered_map<SequenceId, State> states_;
  std::vector<Feed> feeds_;
  // The pass being built.
  std::vector<int32_t> token_ids_;
  std::vector<SequenceChunk> chunks_;
  std::vector<int32_t> logits_rows_;
  std::vector<int32_t> hidden_rows_;
  std::vector<float> previous_hidden_;
  std::vector<float> logits_;
  std::vector<float> out_hidden_;
  std::vector<float> chain_hidden_;  // [feeds, hidden_size]: each guessing feed's last hidden output
  std::unordered_set<SequenceId> live_;  // reused by Sweep
  std::vector<SequenceId> stale_;
};

}  // namespace surge
