// ChoiceConstraint: one choice's structured-output state — its Matcher over the request's
// grammar, and whether the constraint has started (under a reasoning parser it starts
// after "</think>"). It advances with every token the choice takes, so preemption
// (recompute re-prefills tokens, never re-samples them) leaves it consistent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "engine/constraint/matcher.h"
#include "engine/constraint/token_vocabulary.h"

namespace surge {

class ChoiceConstraint {
 public:
  ChoiceConstraint() = default;  // unconstrained
  // `grammar` may be null (unconstrained); `start_token_id` < 0: constrained from the start.
  ChoiceConstraint(std::shared_ptr<const CompiledGrammar> grammar, int32_t start_token_id);

  // The next token must come from the matcher's mask.
  bool active() const { return matcher_.has_value() && started_; }
  const Matcher& matcher() const { return *matcher_; }

  // Records the token the choice took. True when the output is complete (nothing may
  // follow), or -- which masking rules out -- the token broke the grammar; either way the
  // choice must stop. Allocates nothing once the matcher's buffers have grown.
  bool Accept(const TokenVocabulary& vocabulary, int32_t token);

 private:
  std::optional<Matcher> matcher_;
  int32_t start_token_id_ = -1;
  bool started_ = true;
  MatcherState saved_;  // the state before the token, for a token that fails halfway
};

}  // namespace surge
