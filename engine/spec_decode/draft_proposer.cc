#include "engine/spec_decode/draft_proposer.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>

#include "base/check.h"
#include "kernels/ops.h"

namespace surge {
namespace {

int32_t Argmax(std::span<const float> row) {
  return static_cast<int32_t>(surge::Argmax(row.data(), static_cast<int64_t>(row.size())));
}

}  // namespace

StatusOr<std::unique_ptr<DraftModelProposer>> DraftModelProposer::Create(ModelExecutor& draft, int64_t target_vocab_size,
                                                                         int32_t block_size, int32_t num_blocks,
                                                                         int32_t max_catch_up_tokens) {
  if (draft.config().vocab_size != target_vocab_size) {
    return InvalidArgumentError("the draft model's vocabulary (" + std::to_string(draft.config().vocab_size) +
                                " tokens) is not the target's (" + std::to_string(target_vocab_size) +
                                "): a draft must share the target's tokenizer");
  }
  if (block_size < 1 || num_blocks < 1) return InvalidArgumentError("the draft KV cache needs at least one block");
  if (max_catch_up_tokens < 0) return InvalidArgumentError("max_catch_up_tokens must be >= 0");
  return std::unique_ptr<DraftModelProposer>(
      new DraftModelProposer(draft, draft.kv_layout(block_size), num_blocks, max_catch_up_tokens));
}

DraftModelProposer::DraftModelProposer(ModelExecutor& draft, const KvLayout& layout, int32_t num_blocks,
                                       int32_t max_catch_up_tokens)
    : draft_(draft),
      max_catch_up_tokens_(max_catch_up_tokens),
      kv_(layout, num_blocks, PrefixCacheOptions{.enabled = false}),
      storage_(layout, num_blocks) {}

void DraftModelProposer::Propose(std::span<const ProposalRequest> requests) {
  Sweep(requests);
  feeds_.clear();
  // The bound protects other decoding sequences' inter-token latency, as the scheduler's
  // prompt slice does: with one sequence decoding there is nobody to protect.
  const auto num_decoding = std::count_if(requests.begin(), requests.end(), [](const ProposalRequest& r) {
    return r.seq->num_pending_tokens() == 1;
  });
  int32_t budget = max_catch_up_tokens_ > 0 && num_decoding > 1 ? max_catch_up_tokens_
                                                               : std::numeric_limits<int32_t>::max();
  for (const ProposalRequest& request : requests) {
    request.seq->draft_token_ids.clear();
    if (request.max_tokens == 0) continue;
    std::optional<Feed> feed = Prepare(request, budget);
    if (feed) feeds_.push_back(*feed);
  }
  // Pass 0 feeds what each sequence's draft cache lacks (its last token at least, unless
  // it is still catching up); pass i > 0 feeds guess i - 1 of the sequences that want more.
  for (int32_t pass = 0;; ++pass) {
    token_ids_.clear();
    chunks_.clear();
    logits_rows_.clear();
    for (const Feed& feed : feeds_) {
      Sequence& seq = *feed.seq;
      std::vector<int32_t>& known = known_[seq.id];
      if (pass > 0 && static_cast<int32_t>(seq.draft_token_ids.size()) >= feed.max_tokens) continue;
      const int32_t start = static_cast<int32_t>(known.size());
      if (pass == 0) {
        known.insert(known.end(), seq.token_ids.begin() + start, seq.token_ids.begin() + feed.end);
      } else {
        known.push_back(seq.draft_token_ids.back());
      }
      const int32_t begin = static_cast<int32_t>(token_ids_.size());
      token_ids_.insert(token_ids_.end(), known.begin() + start, known.end());
      const int32_t num_tokens = static_cast<int32_t>(known.size()) - start;
      chunks_.push_back({begin, num_tokens, start, kv_.BlockTable(seq.id)});
      if (feed.max_tokens > 0) logits_rows_.push_back(begin + num_tokens - 1);
    }
    if (chunks_.empty()) return;
    RunPass(pass);
  }
}

void DraftModelProposer::RunPass(int32_t pass) {
  const size_t vocab = static_cast<size_t>(draft_.config().vocab_size);
  logits_.resize(logits_rows_.size() * vocab);
  draft_.Run(ForwardBatch{token_ids_, chunks_, logits_rows_}, storage_, logits_);
  size_t row = 0;
  for (const Feed& feed : feeds_) {
    Sequence& seq = *feed.seq;
    // Rows were added in feeds_ order, for the guessing sequences still short of their guesses.
    if (feed.max_tokens == 0 || (pass > 0 && static_cast<int32_t>(seq.draft_token_ids.size()) >= feed.max_tokens)) {
      continue;
    }
    seq.draft_token_ids.push_back(Argmax(std::span<const float>(logits_).subspan(row * vocab, vocab)));
    ++row;
  }
}

std::optional<DraftModelProposer::Feed> DraftModelProposer::Prepare(const ProposalRequest& request, int32_t& budget) {
  Sequence& seq = *request.seq;
  std::vector<int32_t>& known = known_[seq.id];
  // Keep the longest prefix the target confirmed; the last token is always fed, for its logits.
  const size_t limit = std::min(known.size(), seq.token_ids.size() - 1);
  const size_t common = std::mismatch(known.begin(), known.begin() + limit, seq.token_ids.begin()).first - known.begin();
  known.resize(common);
  kv_.Truncate(seq.id, static_cast<int32_t>(common));
  // A long backlog (a prompt the draft has not seen) is caught up `budget` tokens per step,
  // without guesses until it is done: one step's draft pass stays bounded.
  const int32_t backlog = seq.num_tokens() - static_cast<int32_t>(common);
  const bool caught_up = backlog <= budget;
  const Feed feed{&seq, caught_up ? request.max_tokens : 0,
                  static_cast<int32_t>(common) + std::min(backlog, budget)};
  if (feed.end == static_cast<int32_t>(common)) return std::nullopt;
  budget -= feed.end - static_cast<int32_t>(common);
  // Room for the fed tokens and every guess but the last, which is never fed.
  const int32_t num_positions = feed.end + std::max(feed.max_tokens - 1, 0);
  if (kv_.Allocate(seq.id, seq.token_ids, num_positions)) return feed;
  kv_.Free(seq.id);  // no room: start over next time rather than hold a partial cache
  known_.erase(seq.id);
  return std::nullopt;
}

void DraftModelProposer::Sweep(std::span<const ProposalRequest> requests) {
  live_.clear();
  for (const ProposalRequest& request : requests) live_.insert(request.seq->id);
  stale_.clear();
  for (const auto& [id, known] : known_) {
    if (!live_.contains(id)) stale_.push_back(id);
  }
  for (SequenceId id : stale_) {
    kv_.Free(id);
    known_.erase(id);
  }
}

}  // namespace surge
