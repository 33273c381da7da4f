// Matcher: the per-sequence state of a CompiledGrammar, advanced one output byte at a time.
// Copying a Matcher is the rollback mechanism (speculative decoding keeps a copy, or the
// state() words). The live parses are a graph-structured stack: stacks that share frames
// share them, so an ambiguous grammar's many parses cost what their distinct frames cost
// and none is ever dropped; the state is bounded by ConstraintLimits::max_matcher_words,
// and passing that bound is reported (kOverflow), never silently cut.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/constraint/compiled_grammar.h"

namespace surge {

// The live parses, closed under calls and returns: every head's top state has byte edges.
// One flat vector (a step inside a string copies it once and patches one word):
//   words = [num_head_words, heads..., frames...]
//   heads:  [top state, link]*, sorted. A link is the ordinal of the frame below the top,
//           or kMatcherBottom (the top is the whole stack).
//   frames: [return state, num_below, below_0, ...]* in order, each `below` an earlier
//           frame's ordinal or kMatcherBottom.
// The stacks of a head are its top state over every path of frames down to the bottom. No
// two frames have the same return state and the same frames below (shared, not copied).
struct MatcherState {
  std::vector<int32_t> words;
  bool can_end = false;  // the output so far is a complete match

  int32_t num_head_words() const { return words.empty() ? 0 : words[0]; }
  const int32_t* heads() const { return words.empty() ? nullptr : words.data() + 1; }
  const int32_t* frames() const { return words.empty() ? nullptr : words.data() + 1 + num_head_words(); }
  size_t num_frame_words() const { return words.empty() ? 0 : words.size() - 1 - words[0]; }
  bool empty() const { return num_head_words() == 0; }
  size_t num_words() const { return words.size(); }
  bool operator==(const MatcherState& other) const = default;
};

inline constexpr int32_t kMatcherBottom = -1;

class Matcher {
 public:
  enum class StepResult { kOk, kDead, kOverflow };

  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Appends `byte`. False (and the state unchanged) when no valid output continues so, or
  // when following it would pass the grammar's matcher limits (then overflowed() is true).
  bool Accept(uint8_t byte);
  // All of `bytes` or none: false leaves the state unchanged.
  bool AcceptBytes(std::string_view bytes);
  // The output may stop here (EOS is allowed).
  bool CanEnd() const { return state_.can_end; }
  // Nothing can follow: the output is complete and must stop.
  bool IsComplete() const { return state_.empty(); }
  // A byte was refused because the parse outgrew max_matcher_words or max_step_work (not
  // because the grammar forbids it): the constraint cannot be followed further.
  bool overflowed() const { return overflowed_; }
  void Reset();

  const CompiledGrammar& grammar() const { return *grammar_; }
  const std::shared_ptr<const CompiledGrammar>& shared_grammar() const { return grammar_; }
  const MatcherState& state() const { return state_; }
  void set_state(MatcherState state) { state_ = std::move(state); }

  // `out` = `in` after `byte` (on kDead and kOverflow `out` is garbage). Adds the work done
  // (frames and heads visited and written) to `*work` when not null. Allocates nothing once
  // `out` and the thread's scratch have grown.
  static StepResult Advance(const CompiledGrammar& grammar, const MatcherState& in, uint8_t byte,
                            MatcherState* out, int64_t* work = nullptr);
  static bool Step(const CompiledGrammar& grammar, const MatcherState& in, uint8_t byte,
                   MatcherState* out) {
    return Advance(grammar, in, byte, out) == StepResult::kOk;
  }

 private:
  std::shared_ptr<const CompiledGrammar> grammar_;
  MatcherState state_;
  bool overflowed_ = false;
};

}  // namespace surge
