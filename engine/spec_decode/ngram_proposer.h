// NgramProposer: speculative decoding's `ngram` method (prompt lookup decoding).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/spec_decode/proposer.h"

namespace surge {

// Prompt lookup (n-gram) decoding: finds the most recent earlier occurrence of the
// sequence's last n tokens (n from max_n down to min_n) in its prompt + output and
// proposes the tokens that followed it. Free to run; pays on copy-heavy text (edits,
// quotes, code, retrieval answers), proposes nothing elsewhere.
class NgramProposer final : public Proposer {
 public:
  NgramProposer(int32_t min_n, int32_t max_n);
  SpeculativeMethod method() const override { return SpeculativeMethod::kNgram; }
  void Propose(std::span<const ProposalRequest> requests) override;

  // The proposal for one token sequence (exposed for tests).
  void ProposeFor(std::span<const int32_t> tokens, int32_t max_tokens, std::vector<int32_t>& out) const;

 private:
  int32_t min_n_;
  int32_t max_n_;
};

}  // namespace surge
