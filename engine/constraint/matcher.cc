#include "engine/constraint/matcher.h"

#include <algorithm>

namespace surge {
namespace {

// Flat stacks ([length, frames...]*) with a cap on their number.
class StackList {
 public:
  void clear() { words_.clear(); count_ = 0; }
  int32_t count() const { return count_; }
  std::vector<int32_t>& words() { return words_; }

  bool Contains(const int32_t* frames, int32_t length) const {
    for (size_t pos = 0; pos < words_.size(); pos += words_[pos] + 1) {
      if (words_[pos] == length && std::equal(frames, frames + length, &words_[pos + 1])) return true;
    }
    return false;
  }
  // Appends unless present or `limit` stacks are there.
  void AddUnique(const int32_t* frames, int32_t length, int32_t limit) {
    if (count_ >= limit || Contains(frames, length)) return;
    words_.push_back(length);
    words_.insert(words_.end(), frames, frames + length);
    ++count_;
  }

 private:
  std::vector<int32_t> words_;
  int32_t count_ = 0;
};

struct StepScratch {
  StackList work;           // stacks to close, and every stack ever queued (the visited set)
  std::vector<int32_t> tmp; // one stack being built
  std::vector<int32_t> frames;  // the stack being closed
};

StepScratch& Scratch() {
  thread_local StepScratch scratch;
  return scratch;
}

void Queue(StepScratch& s, const ConstraintLimits& limits) {
  if (static_cast<int32_t>(s.tmp.size()) > limits.max_stack_depth) return;  // too deep: dropped
  s.work.AddUnique(s.tmp.data(), static_cast<int32_t>(s.tmp.size()), 4 * limits.max_stacks);
}

// Expands calls and returns until every stack's top can consume a byte.
void Close(const CompiledGrammar& g, StepScratch& s, MatcherState* out, StackList* kept) {
  const ConstraintLimits& limits = g.limits();
  for (size_t pos = 0; pos < s.work.words().size();) {
    const int32_t length = s.work.words()[pos];
    s.tmp.assign(s.work.words().begin() + pos + 1, s.work.words().begin() + pos + 1 + length);
    pos += length + 1;
    const DfaState top = s.tmp.back();
    if (g.has_bytes(top)) kept->AddUnique(s.tmp.data(), length, limits.max_stacks);
    s.frames.assign(s.tmp.begin(), s.tmp.end());  // Queue below reuses tmp
    const std::vector<int32_t>& frames = s.frames;
    if (g.accepting(top)) {
      if (length == 1) {
        out->can_end = true;
      } else {
        s.tmp.assign(frames.begin(), frames.end() - 1);
        Queue(s, limits);
      }
    }
    for (const CallEdge* e = g.calls_begin(top); e != g.calls_end(top); ++e) {
      s.tmp.assign(frames.begin(), frames.end() - 1);
      // A tail call: the caller would only return once the callee does, so skip its frame.
      bool tail = g.accepting(e->return_state) && !g.has_bytes(e->return_state) &&
                  !g.has_calls(e->return_state);
      if (!tail) s.tmp.push_back(e->return_state);
      s.tmp.push_back(e->callee_start);
      Queue(s, limits);
    }
  }
}

thread_local StackList g_kept;

}  // namespace

bool Matcher::Step(const CompiledGrammar& g, const MatcherState& in, uint8_t byte,
                   MatcherState* out) {
  out->can_end = false;
  const std::vector<int32_t>& words = in.stacks;
  // Fast path: one stack, a plain step (the usual case inside strings, numbers, literals).
  if (!words.empty() && static_cast<size_t>(words[0]) + 1 == words.size()) {
    DfaState next = g.Next(words.back(), byte);
    if (next == kDeadState) return false;
    if (g.plain(next)) {
      out->stacks.assign(words.begin(), words.end());
      out->stacks.back() = next;
      return true;
    }
  }
  StepScratch& s = Scratch();
  s.work.clear();
  StackList& kept = g_kept;
  kept.clear();
  for (size_t pos = 0; pos < words.size(); pos += words[pos] + 1) {
    const int32_t length = words[pos];
    DfaState next = g.Next(words[pos + length], byte);
    if (next == kDeadState) continue;
    s.tmp.assign(words.begin() + pos + 1, words.begin() + pos + 1 + length);
    s.tmp.back() = next;
    Queue(s, g.limits());
  }
  Close(g, s, out, &kept);
  out->stacks.assign(kept.words().begin(), kept.words().end());
  return !out->stacks.empty() || out->can_end;
}

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  Reset();
}

void Matcher::Reset() {
  StepScratch& s = Scratch();
  s.work.clear();
  s.tmp.assign(1, grammar_->start_state());
  Queue(s, grammar_->limits());
  StackList& kept = g_kept;
  kept.clear();
  state_ = MatcherState();
  Close(*grammar_, s, &state_, &kept);
  state_.stacks.assign(kept.words().begin(), kept.words().end());
}

bool Matcher::Accept(uint8_t byte) {
  thread_local MatcherState next;
  if (!Step(*grammar_, state_, byte, &next)) return false;
  std::swap(state_, next);
  return true;
}

bool Matcher::AcceptBytes(std::string_view bytes) {
  MatcherState saved = state_;
  for (char c : bytes) {
    if (!Accept(static_cast<uint8_t>(c))) {
      state_ = std::move(saved);
      return false;
    }
  }
  return true;
}

}  // namespace surge
