#include "engine/spec_decode/ngram_proposer.h"

#include <algorithm>

#include "base/check.h"

namespace surge {

NgramProposer::NgramProposer(int32_t min_n, int32_t max_n) : min_n_(min_n), max_n_(max_n) {
  CHECK(min_n >= 1 && max_n >= min_n) << "n-gram sizes " << min_n << ".." << max_n;
}

void NgramProposer::Propose(std::span<const ProposalRequest> requests) {
  for (const ProposalRequest& request : requests) {
    request.seq->draft_token_ids.clear();
    if (request.max_tokens > 0) ProposeFor(request.seq->token_ids, request.max_tokens, request.seq->draft_token_ids);
  }
}

// Longest n first: a longer match is stronger evidence that what followed will follow
// again. Among matches of one length the most recent wins (the nearest context is the
// likeliest to be continued). O(length * max_n) per sequence and step.
void NgramProposer::ProposeFor(std::span<const int32_t> tokens, int32_t max_tokens,
                               std::vector<int32_t>& out) const {
  out.clear();
  const int64_t length = static_cast<int64_t>(tokens.size());
  for (int64_t n = std::min<int64_t>(max_n_, length - 1); n >= min_n_; --n) {
    const std::span<const int32_t> suffix = tokens.subspan(length - n);
    // A match at `start` ends before the suffix itself begins to be compared with itself.
    for (int64_t start = length - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int64_t follow = start + n;
      const int64_t count = std::min<int64_t>(max_tokens, length - follow);
      out.assign(tokens.begin() + follow, tokens.begin() + follow + count);
      return;
    }
  }
}

}  // namespace surge
