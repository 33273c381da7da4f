#include "engine/spec_decode/mtp_proposer.h"

#include <algorithm>

#include "base/check.h"
#include "kernels/ops.h"

namespace surge {

StatusOr<std::unique_ptr<MtpProposer>> MtpProposer::Create(ModelExecutor& target, int32_t block_size,
                                                           int32_t num_blocks) {
  MtpExecutor* mtp = target.mtp();
  if (mtp == nullptr) {
    return InvalidArgumentError("speculative decoding by MTP needs the model loaded with its "
                                   "multi-token-prediction layer (LoadOptions::load_mtp)");
  }
  if (block_size < 1 || num_blocks < 1) return InvalidArgumentError("the MTP KV cache needs at least one block");
  return std::unique_ptr<MtpProposer>(new MtpProposer(*mtp, target.config().hidden_size, target.config().vocab_size,
                                                      mtp->kv_layout(block_size), num_blocks));
}

MtpProposer::MtpProposer(MtpExecutor& mtp, int64_t hidden_size, int64_t vocab_size, const KvLayout& layout,
                         int32_t num_blocks)
    : mtp_(mtp),
      hidden_size_(hidden_size),
      vocab_size_(vocab_size),
      kv_(layout, num_blocks, PrefixCacheOptions{.enabled = false}),
      storage_(layout, num_blocks) {}

int32_t MtpProposer::HiddenEnd(const State& state) const {
  return state.hidden_begin + static_cast<int32_t>(static_cast<int64_t>(state.hidden.size()) / hidden_size_);
}

void MtpProposer::ObserveTargetHidden(const Sequence& seq, int32_t start_position, std::span<const float> rows) {
  CHECK_EQ(static_cast<int64_t>(rows.size()) % hidden_size_, 0);
  if (rows.empty()) return;
  State& state = states_[seq.id];
  if (state.hidden.empty() || start_position < state.hidden_begin) {
    state.hidden.clear();
    state.hidden_begin = start_position;
  }
  // Shrinks to the positions before start_position (recomputed ones are replaced), or pads
  // the positions the target skipped with zeros.
  state.hidden.resize(static_cast<size_t>(start_position - state.hidden_begin) * hidden_size_, 0.0f);
  state.hidden.insert(state.hidden.end(), rows.begin(), rows.end());
  state.num_rows = std::min(state.num_rows, start_position);
}

void MtpProposer::Propose(std::span<const ProposalRequest> requests) {
  Sweep(requests);
  feeds_.clear();
  for (const ProposalRequest& request : requests) {
    request.seq->draft_token_ids.clear();
    Feed feed;
    if (Plan(request, feed)) feeds_.push_back(feed);
  }
  if (feeds_.empty()) return;
  // Pass 0: every sequence's new real rows; a guessing sequence's last one scores guess 1.
  ClearPass();
  for (const Feed& feed : feeds_) AddRealRows(feed);
  RunPass();
  const size_t hidden = static_cast<size_t>(hidden_size_), vocab = static_cast<size_t>(vocab_size_);
  chain_hidden_.resize(feeds_.size() * hidden);
  size_t row = 0;
  for (size_t i = 0; i < feeds_.size(); ++i) {
    const Feed& feed = feeds_[i];
    State& state = states_[feed.seq->id];
    state.num_rows = feed.end;
    // Keep the last real row's hidden state: a proposal before the next token re-feeds it.
    const int32_t drop = std::clamp(feed.end - 1 - state.hidden_begin, 0, HiddenEnd(state) - state.hidden_begin);
    state.hidden.erase(state.hidden.begin(), state.hidden.begin() + static_cast<size_t>(drop) * hidden);
    state.hidden_begin += drop;
    if (feed.max_tokens == 0) continue;
    feed.seq->draft_token_ids.push_back(static_cast<int32_t>(Argmax(&logits_[row * vocab], vocab_size_)));
    std::copy_n(&out_hidden_[row * hidden], hidden, &chain_hidden_[i * hidden]);
    ++row;
  }
  // Pass j: guess j and the previous row's hidden output, at the position after it.
  for (int32_t j = 1;; ++j) {
    ClearPass();
    for (size_t i = 0; i < feeds_.size(); ++i) {
      const Feed& feed = feeds_[i];
      if (feed.max_tokens <= j) continue;
      const int32_t begin = static_cast<int32_t>(token_ids_.size());
      token_ids_.push_back(feed.seq->draft_token_ids[j - 1]);
      previous_hidden_.insert(previous_hidden_.end(), chain_hidden_.begin() + i * hidden,
                              chain_hidden_.begin() + (i + 1) * hidden);
      chunks_.push_back({begin, 1, feed.end - 1 + j, kv_.BlockTable(feed.seq->id)});
      logits_rows_.push_back(begin);
      hidden_rows_.push_back(begin);
    }
    if (chunks_.empty()) return;
    RunPass();
    row = 0;
    for (size_t i = 0; i < feeds_.size(); ++i) {
      const Feed& feed = feeds_[i];
      if (feed.max_tokens <= j) continue;
      feed.seq->draft_token_ids.push_back(static_cast<int32_t>(Argmax(&logits_[row * vocab], vocab_size_)));
      std::copy_n(&out_hidden_[row * hidden], hidden, &chain_hidden_[i * hidden]);
      ++row;
    }
  }
}

bool MtpProposer::Plan(const ProposalRequest& request, Feed& feed) {
  Sequence& seq = *request.seq;
  if (request.max_tokens == 0 && !states_.contains(seq.id)) return false;  // nothing shown, nothing wanted
  State& state = states_[seq.id];
  const int32_t num_tokens = seq.num_tokens();
  // A guess needs the row of the second-to-last position; it is re-fed when already cached.
  const int32_t max_tokens = num_tokens >= 2 ? request.max_tokens : 0;
  const int32_t end = max_tokens > 0 ? num_tokens - 1 : std::min(HiddenEnd(state), num_tokens - 1);
  state.num_rows = std::min(state.num_rows, max_tokens > 0 ? end - 1 : end);
  kv_.Truncate(seq.id, state.num_rows);  // the previous proposal's chained rows
  if (state.num_rows >= end) return false;
  if (!kv_.Allocate(seq.id, seq.token_ids, end + std::max(max_tokens - 1, 0))) {
    kv_.Free(seq.id);  // no room: start its cache over next time rather than hold part of it
    state.num_rows = 0;
    return false;
  }
  feed = {&seq, max_tokens, state.num_rows, end};
  return true;
}

void MtpProposer::AddRealRows(const Feed& feed) {
  const Sequence& seq = *feed.seq;
  const State& state = states_.at(seq.id);
  const int32_t begin = static_cast<int32_t>(token_ids_.size());
  const int32_t hidden_end = HiddenEnd(state);
  for (int32_t p = feed.begin; p < feed.end; ++p) {
    token_ids_.push_back(seq.token_ids[p + 1]);
    if (p >= state.hidden_begin && p < hidden_end) {
      const auto first = state.hidden.begin() + static_cast<int64_t>(p - state.hidden_begin) * hidden_size_;
      previous_hidden_.insert(previous_hidden_.end(), first, first + hidden_size_);
    } else {
      previous_hidden_.insert(previous_hidden_.end(), hidden_size_, 0.0f);  // never computed (a prefix-cache hit)
    }
  }
  const int32_t num_rows = feed.end - feed.begin;
  chunks_.push_back({begin, num_rows, feed.begin, kv_.BlockTable(seq.id)});
  if (feed.max_tokens > 0) {
    logits_rows_.push_back(begin + num_rows - 1);
    hidden_rows_.push_back(begin + num_rows - 1);
  }
}

void MtpProposer::ClearPass() {
  token_ids_.clear();
  chunks_.clear();
  logits_rows_.clear();
  hidden_rows_.clear();
  previous_hidden_.clear();
}

void MtpProposer::RunPass() {
  logits_.resize(logits_rows_.size() * static_cast<size_t>(vocab_size_));
  out_hidden_.resize(hidden_rows_.size() * static_cast<size_t>(hidden_size_));
  mtp_.Run(ForwardBatch{token_ids_, chunks_, logits_rows_, hidden_rows_}, previous_hidden_, storage_, logits_,
           out_hidden_);
}

void MtpProposer::Sweep(std::span<const ProposalRequest> requests) {
  live_.clear();
  for (const ProposalRequest& request : requests) live_.insert(request.seq->id);
  stale_.clear();
  for (const auto& [id, state] : states_) {
    if (!live_.contains(id)) stale_.push_back(id);
  }
  for (SequenceId id : stale_) {
    kv_.Free(id);
    states_.erase(id);
  }
}

}  // namespace surge
