#include "engine/choice_constraint.h"

#include <utility>

#include "base/logging.h"

namespace surge {

ChoiceConstraint::ChoiceConstraint(std::shared_ptr<const CompiledGrammar> grammar, int32_t start_token_id)
    : start_token_id_(start_token_id), started_(start_token_id < 0) {
  if (grammar != nullptr) matcher_.emplace(std::move(grammar));
}

bool ChoiceConstraint::Accept(const TokenVocabulary& vocabulary, int32_t token) {
  if (!matcher_) return false;
  if (!started_) {
    started_ = token == start_token_id_;
    return false;
  }
  bool ok = token >= 0 && token < vocabulary.num_tokens();
  if (ok && vocabulary.is_eos(token)) {
    ok = matcher_->CanEnd();  // EOS adds no bytes (ignore_eos keeps going)
  } else if (ok) {
    // AcceptToken, minus its per-call state copy: saved_ keeps its capacity.
    ok = vocabulary.in_trie(token);
    saved_ = matcher_->state();
    for (char byte : vocabulary.bytes(token)) {
      if (!ok) break;
      ok = matcher_->Accept(static_cast<uint8_t>(byte));
    }
    if (!ok) matcher_->set_state(saved_);
  }
  if (!ok) {
    LOG(WARNING) << "token " << token
                 << (matcher_->overflowed() ? " passes the output constraint's matcher limits" : " is outside the output constraint")
                 << "; the choice stops";
    return true;
  }
  return matcher_->IsComplete();
}

}  // namespace surge
