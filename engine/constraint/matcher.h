// Matcher: the per-sequence state of a CompiledGrammar, advanced one output byte at a time.
// Copying a Matcher is the rollback mechanism (speculative decoding keeps a copy, or the
// state() words): a state is a few small stacks of DFA states, bounded by the grammar's
// ConstraintLimits (max_stacks x max_stack_depth words).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/constraint/compiled_grammar.h"

namespace surge {

// The set of live parse stacks, closed under calls and returns: every stack's top state has
// byte edges. Stacks are stored flat: [length, frame_0 (bottom), ..., frame_top]*.
struct MatcherState {
  std::vector<int32_t> stacks;
  bool can_end = false;  // the output so far is a complete match

  bool empty() const { return stacks.empty(); }
  bool operator==(const MatcherState& other) const = default;
};

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Appends `byte`. False (and the state unchanged) when no valid output continues so.
  bool Accept(uint8_t byte);
  // All of `bytes` or none: false leaves the state unchanged.
  bool AcceptBytes(std::string_view bytes);
  // The output may stop here (EOS is allowed).
  bool CanEnd() const { return state_.can_end; }
  // Nothing can follow: the output is complete and must stop.
  bool IsComplete() const { return state_.stacks.empty(); }
  void Reset();

  const CompiledGrammar& grammar() const { return *grammar_; }
  const std::shared_ptr<const CompiledGrammar>& shared_grammar() const { return grammar_; }
  const MatcherState& state() const { return state_; }
  void set_state(MatcherState state) { state_ = std::move(state); }

  // `out` = `in` after `byte`; false when that is a dead end (then `out` is garbage).
  // Allocates nothing once `out` and the thread's scratch have grown.
  static bool Step(const CompiledGrammar& grammar, const MatcherState& in, uint8_t byte,
                   MatcherState* out);

 private:
  std::shared_ptr<const CompiledGrammar> grammar_;
  MatcherState state_;
};

}  // namespace surge
