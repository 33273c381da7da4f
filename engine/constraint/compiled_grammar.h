// CompiledGrammar: a Grammar turned into a pushdown automaton over bytes. Every called rule
// (and the top level) is one DFA over byte classes with "call" edges into other rules' DFAs;
// a grammar without recursion is a single DFA with no calls (pure_dfa). Immutable once
// built: share one instance read-only across threads (std::shared_ptr<const ...>).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

using DfaState = int32_t;
inline constexpr DfaState kDeadState = -1;

struct CallEdge {
  DfaState callee_start;  // the called rule's start state
  DfaState return_state;  // where the caller resumes once the callee accepts
};

class CompiledGrammar {
 public:
  enum Flag : uint8_t { kAccepting = 1, kHasBytes = 2, kHasCalls = 4 };

  DfaState Next(DfaState state, uint8_t byte) const {
    return next_[static_cast<size_t>(state) * num_classes_ + byte_class_[byte]];
  }
  bool accepting(DfaState s) const { return flags_[s] & kAccepting; }
  bool has_bytes(DfaState s) const { return flags_[s] & kHasBytes; }
  bool has_calls(DfaState s) const { return flags_[s] & kHasCalls; }
  // Neither accepting nor calling: a step into it needs no closure.
  bool plain(DfaState s) const { return flags_[s] == kHasBytes; }
  const CallEdge* calls_begin(DfaState s) const { return calls_.data() + call_begin_[s]; }
  const CallEdge* calls_end(DfaState s) const { return calls_.data() + call_begin_[s + 1]; }

  DfaState start_state() const { return start_state_; }
  bool pure_dfa() const { return calls_.empty(); }
  int32_t num_states() const { return static_cast<int32_t>(flags_.size()); }
  int32_t num_classes() const { return num_classes_; }
  const ConstraintLimits& limits() const { return limits_; }
  // Bytes this grammar holds (its tables), for caches bounded in bytes.
  int64_t memory_bytes() const {
    return static_cast<int64_t>(sizeof(*this) + next_.size() * sizeof(DfaState) + flags_.size() +
                                call_begin_.size() * sizeof(int32_t) + calls_.size() * sizeof(CallEdge));
  }

 private:
  friend class AutomatonBuilder;

  std::array<uint8_t, 256> byte_class_{};  // byte -> class; bytes of a class behave alike
  int32_t num_classes_ = 0;
  std::vector<DfaState> next_;      // [num_states * num_classes] kDeadState where none
  std::vector<uint8_t> flags_;      // [num_states] Flag bits
  std::vector<int32_t> call_begin_; // [num_states + 1] into calls_
  std::vector<CallEdge> calls_;
  DfaState start_state_ = kDeadState;
  ConstraintLimits limits_;
};

class CompileBudget;

// Compiles `grammar` (its root rule). InvalidArgument when it matches nothing or is left-
// recursive; ResourceExhausted when it passes the NFA / DFA size or memory limits or the
// step budget; DeadlineExceeded / Cancelled from `budget` (null: limits.max_compile_steps
// only).
StatusOr<std::shared_ptr<const CompiledGrammar>> CompileGrammar(const Grammar& grammar,
                                                               const ConstraintLimits& limits,
                                                               CompileBudget* budget = nullptr);

}  // namespace surge
