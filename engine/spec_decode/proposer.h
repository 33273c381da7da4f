// Speculative decoding's proposer interface: each step, a cheap guess of the next few
// tokens of every decoding sequence, which the target model then verifies in the same
// batched pass as everything else (spec_decoder.h). A proposer only guesses; what the sequence takes is decided by the target alone, so the output is the
// non-speculative one (greedy) or has its distribution (sampling), whatever the guess.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/sequence.h"

namespace surge {

// Most tokens one sequence may propose per step: more only add rows that are almost never
// accepted.
inline constexpr int32_t kMaxSpeculativeTokens = 16;

enum class SpeculativeMethod : uint8_t { kNone, kNgram, kDraft, kMtp };
// "none", "ngram", "draft", "mtp" (the --speculative values).
std::string_view SpeculativeMethodName(SpeculativeMethod method);
StatusOr<SpeculativeMethod> ParseSpeculativeMethod(std::string_view name);

// One sequence of the running batch: propose at most max_tokens tokens after its
// token_ids (0: none this step, but keep whatever per-sequence state the proposer has).
struct ProposalRequest {
  Sequence* seq = nullptr;
  int32_t max_tokens = 0;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual SpeculativeMethod method() const = 0;
  // Sets every requested sequence's draft_token_ids (empty when it has no guess).
  // `requests` names every running sequence: state kept for any other is dropped.
  virtual void Propose(std::span<const ProposalRequest> requests) = 0;
  // A proposer that reads the target's hidden states (MTP) says so; the engine then
  // shows it, after every pass, the final-normed hidden states of each token-generating
  // sequence's positions [start_position, start_position + rows) that the sequence kept.
  virtual bool wants_target_hidden() const { return false; }
  virtual void ObserveTargetHidden(const Sequence& /*seq*/, int32_t /*start_position*/,
                                   std::span<const float> /*rows*/) {}
};

}  // namespace surge
