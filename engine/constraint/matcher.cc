#include "engine/constraint/matcher.h"

#include <algorithm>

namespace surge {
namespace {

// A set (or map) of 64-bit keys with open addressing, cleared in time proportional to what
// it holds, so that a step's scratch is reused without allocating.
class KeyTable {
 public:
  // The value stored for `key`, inserting `value` when absent; *inserted says which.
  int32_t FindOrInsert(uint64_t key, int32_t value, bool* inserted) {
    if (2 * (used_.size() + 1) > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == kEmpty) {
        slots_[i] = {key, value};
        used_.push_back(i);
        *inserted = true;
        return value;
      }
      if (slots_[i].key == key) {
        *inserted = false;
        return slots_[i].value;
      }
    }
  }
  void clear() {
    for (size_t i : used_) slots_[i].key = kEmpty;
    used_.clear();
  }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    int32_t value = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t Hash(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    used_.clear();
    bool inserted = false;
    for (const Slot& s : old) {
      if (s.key != kEmpty) FindOrInsert(s.key, s.value, &inserted);
    }
  }

  std::vector<Slot> slots_;  // size a power of two, at most half full
  std::vector<size_t> used_;
};

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// A frame pushed during this step: below it, the links of the callers that pushed it.
struct FreshFrame {
  DfaState return_state = kDeadState;
  std::vector<int32_t> below;  // links (old ordinals, fresh ids, kMatcherBottom)
  bool returned = false;       // its callee already finished in this step
};

struct Item {
  DfaState state;
  int32_t link;  // an input frame's ordinal, num_old + a fresh frame's index, or bottom
};

// One step: the input's frames (read-only), the frames pushed now, the closure's work list.
class StepBuilder {
 public:
  void Begin(const CompiledGrammar& g, const MatcherState& in) {
    g_ = &g;
    in_ = &in;
    limit_ = g.limits().max_step_work;
    work_ = 0;
    can_end_ = false;
    num_fresh_ = 0;
    old_frames_ = in.frames();
    old_offset_.clear();
    const size_t num_frame_words = in.num_frame_words();
    for (size_t pos = 0; pos < num_frame_words; pos += old_frames_[pos + 1] + 2) {
      old_offset_.push_back(static_cast<int32_t>(pos));
    }
    num_old_ = static_cast<int32_t>(old_offset_.size());
    seen_.clear();
    fresh_index_.clear();
    todo_.clear();
    kept_.clear();
  }

  void Push(DfaState state, int32_t link) {
    bool inserted = false;
    seen_.FindOrInsert(PairKey(state, link), 0, &inserted);
    if (inserted) todo_.push_back({state, link});
  }

  // Expands calls and returns until every kept head's top can consume a byte. False when
  // the work passed max_step_work.
  bool Close() {
    while (!todo_.empty()) {
      const Item item = todo_.back();
      todo_.pop_back();
      if (++work_ > limit_) return false;
      if (g_->has_bytes(item.state)) kept_.push_back(item);
      if (g_->accepting(item.state)) Return(item.link);
      for (const CallEdge* e = g_->calls_begin(item.state); e != g_->calls_end(item.state); ++e) Call(*e, item.link);
    }
    return true;
  }

  // Writes the kept heads and the frames they reach into `out`, sharing equal frames.
  // False when the state would pass max_matcher_words.
  bool Finish(MatcherState* out);

  int64_t work() const { return work_; }
  bool can_end() const { return can_end_; }

 private:
  bool IsFresh(int32_t link) const { return link >= num_old_; }
  DfaState ReturnState(int32_t link) const {
    return IsFresh(link) ? fresh_[link - num_old_].return_state : old_frames_[old_offset_[link]];
  }
  // The links below `link` (a frame, not bottom).
  std::pair<const int32_t*, const int32_t*> Below(int32_t link) const {
    if (IsFresh(link)) {
      const std::vector<int32_t>& below = fresh_[link - num_old_].below;
      return {below.data(), below.data() + below.size()};
    }
    const int32_t* begin = old_frames_ + old_offset_[link] + 2;
    return {begin, begin + old_frames_[old_offset_[link] + 1]};
  }

  // The top's rule finished: its caller resumes, in every stack below.
  void Return(int32_t link) {
    if (link == kMatcherBottom) {
      can_end_ = true;
      return;
    }
    if (IsFresh(link)) fresh_[link - num_old_].returned = true;
    const DfaState state = ReturnState(link);
    auto [begin, end] = Below(link);
    work_ += end - begin;
    for (const int32_t* b = begin; b != end; ++b) Push(state, *b);
  }

  void Call(const CallEdge& e, int32_t link) {
    // A tail call: the caller would only return once the callee does, so push no frame.
    const DfaState r = e.return_state;
    if (g_->accepting(r) && !g_->has_bytes(r) && !g_->has_calls(r)) return Push(e.callee_start, link);
    // Callers that push the same return state under the same callee in one step share the
    // frame: its stacks are the union of theirs.
    bool inserted = false;
    const int32_t index = fresh_index_.FindOrInsert(PairKey(r, e.callee_start), num_fresh_, &inserted);
    if (inserted) {
      if (fresh_.size() <= static_cast<size_t>(num_fresh_)) fresh_.emplace_back();
      FreshFrame& added = fresh_[num_fresh_++];  // reused: its vector keeps its capacity
      added.return_state = r;
      added.below.clear();
      added.returned = false;
    }
    FreshFrame& frame = fresh_[index];
    work_ += static_cast<int64_t>(frame.below.size());
    if (std::find(frame.below.begin(), frame.below.end(), link) == frame.below.end()) {
      frame.below.push_back(link);
      if (frame.returned) Push(r, link);  // the callee already finished here (it matched "")
    }
    Push(e.callee_start, num_old_ + index);
  }

  int32_t Canonical(int32_t link);

  const CompiledGrammar* g_ = nullptr;
  const MatcherState* in_ = nullptr;
  const int32_t* old_frames_ = nullptr;  // the input's frames
  int64_t limit_ = 0;
  int64_t work_ = 0;
  bool can_end_ = false;
  std::vector<int32_t> old_offset_;  // [num_old_] offset of each input frame in in_->frames
  int32_t num_old_ = 0;
  std::vector<FreshFrame> fresh_;    // [num_fresh_] (kept beyond it, for their capacity)
  int32_t num_fresh_ = 0;
  KeyTable seen_;                    // items (state, link) pushed this step
  KeyTable fresh_index_;             // (return state, callee start) -> fresh index
  std::vector<Item> todo_;
  std::vector<Item> kept_;
  // Finish's scratch.
  std::vector<int32_t> out_ordinal_;  // [num_old_ + num_fresh_] output ordinal, or -2
  std::vector<std::pair<int32_t, size_t>> dfs_;  // (link, next below to visit)
  std::vector<int32_t> key_;          // one frame's words being interned
  KeyTable interned_;                 // hash of a frame's words -> output ordinal (chained by scan)
  std::vector<int32_t> out_offset_;   // [output frames] offset in frames_
  std::vector<int32_t> frames_;       // the output's frames, written before its heads
  std::vector<std::pair<int32_t, int32_t>> pairs_;  // the heads being sorted
};

uint64_t HashWords(const std::vector<int32_t>& words) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int32_t w : words) h = (h ^ static_cast<uint32_t>(w)) * 0x100000001b3ull;
  return h;
}

// The output ordinal of `link`, its frames below first (post-order, iterative: a parse may
// nest thousands of frames deep). Equal frames (return state and frames below) become one.
int32_t StepBuilder::Canonical(int32_t link) {
  if (link == kMatcherBottom) return kMatcherBottom;
  if (out_ordinal_[link] != -2) return out_ordinal_[link];
  dfs_.clear();
  dfs_.push_back({link, 0});
  while (!dfs_.empty()) {
    auto& [top, next] = dfs_.back();
    auto [begin, end] = Below(top);
    if (begin + next != end) {
      const int32_t below = begin[next++];
      if (below != kMatcherBottom && out_ordinal_[below] == -2) dfs_.push_back({below, 0});
      continue;
    }
    key_.assign({ReturnState(top), 0});
    for (const int32_t* b = begin; b != end; ++b) key_.push_back(*b == kMatcherBottom ? *b : out_ordinal_[*b]);
    std::sort(key_.begin() + 2, key_.end());
    key_.erase(std::unique(key_.begin() + 2, key_.end()), key_.end());
    key_[1] = static_cast<int32_t>(key_.size()) - 2;
    work_ += static_cast<int64_t>(key_.size());
    // Open addressing on the hash; a hash collision between different frames moves on to
    // the next hash value (rare; equality is checked on the words). Without fresh frames
    // every frame is an input frame, already unique: no lookup.
    int32_t ordinal = static_cast<int32_t>(out_offset_.size());
    if (num_fresh_ == 0) {
      out_offset_.push_back(static_cast<int32_t>(frames_.size()));
      frames_.insert(frames_.end(), key_.begin(), key_.end());
    }
    for (uint64_t h = HashWords(key_); num_fresh_ > 0; ++h) {
      bool inserted = false;
      const int32_t found = interned_.FindOrInsert(h, ordinal, &inserted);
      if (inserted) {
        out_offset_.push_back(static_cast<int32_t>(frames_.size()));
        frames_.insert(frames_.end(), key_.begin(), key_.end());
        break;
      }
      const int32_t* words = frames_.data() + out_offset_[found];
      if (words[1] == key_[1] && std::equal(key_.begin(), key_.end(), words)) {
        ordinal = found;
        break;
      }
    }
    out_ordinal_[top] = ordinal;
    dfs_.pop_back();
  }
  return out_ordinal_[link];
}

bool StepBuilder::Finish(MatcherState* out) {
  out->can_end = can_end_;
  frames_.clear();
  pairs_.clear();
  out_ordinal_.assign(static_cast<size_t>(num_old_ + num_fresh_), -2);
  out_offset_.clear();
  interned_.clear();
  const size_t max_words = static_cast<size_t>(g_->limits().max_matcher_words);
  for (const Item& item : kept_) {
    pairs_.push_back({item.state, Canonical(item.link)});
    if (1 + 2 * pairs_.size() + frames_.size() > max_words || work_ > limit_) return false;
  }
  // Sort and merge the (state, link) pairs.
  std::sort(pairs_.begin(), pairs_.end());
  pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
  out->words.assign(1, static_cast<int32_t>(2 * pairs_.size()));
  for (auto [state, link] : pairs_) out->words.insert(out->words.end(), {state, link});
  out->words.insert(out->words.end(), frames_.begin(), frames_.end());
  return true;
}

// A unit of work is about one closure item (hash lookups, a push): copying or scanning 16
// words of a state costs about as much (measured with constraint_bench's BM_MaskGbnf).
constexpr size_t kWordsPerWorkUnit = 16;

StepBuilder& Builder() {
  thread_local StepBuilder builder;
  return builder;
}

}  // namespace

Matcher::StepResult Matcher::Advance(const CompiledGrammar& g, const MatcherState& in, uint8_t byte,
                                     MatcherState* out, int64_t* work) {
  const int32_t num_head_words = in.num_head_words();
  const int32_t* heads = in.heads();
  // Fast path: one head, a plain step (the usual case inside strings, numbers, literals).
  if (num_head_words == 2) {
    const DfaState next = g.Next(heads[0], byte);
    if (next == kDeadState) return StepResult::kDead;
    if (g.plain(next)) {
      out->words.assign(in.words.begin(), in.words.end());
      out->words[1] = next;
      out->can_end = false;
      if (work != nullptr) *work += 1 + static_cast<int64_t>(in.num_words() / kWordsPerWorkUnit);
      return StepResult::kOk;
    }
  }
  StepBuilder& b = Builder();
  b.Begin(g, in);
  for (int32_t i = 0; i < num_head_words; i += 2) {
    const DfaState next = g.Next(heads[i], byte);
    if (next != kDeadState) b.Push(next, heads[i + 1]);
  }
  bool ok = b.Close() && b.Finish(out);
  if (work != nullptr) *work += b.work() + static_cast<int64_t>(in.num_words() / kWordsPerWorkUnit);
  if (!ok) return StepResult::kOverflow;
  return !out->empty() || out->can_end ? StepResult::kOk : StepResult::kDead;
}

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  Reset();
}

void Matcher::Reset() {
  StepBuilder& b = Builder();
  MatcherState empty;
  b.Begin(*grammar_, empty);
  b.Push(grammar_->start_state(), kMatcherBottom);
  state_ = MatcherState();
  overflowed_ = !(b.Close() && b.Finish(&state_));
}

bool Matcher::Accept(uint8_t byte) {
  thread_local MatcherState next;
  const StepResult result = Advance(*grammar_, state_, byte, &next);
  if (result == StepResult::kOverflow) overflowed_ = true;
  if (result != StepResult::kOk) return false;
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
