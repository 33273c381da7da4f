#include "engine/constraint/token_mask.h"

#include <algorithm>
#include <cstring>

namespace surge {
namespace {

void SetBit(std::span<uint64_t> bits, int32_t id) { bits[id >> 6] |= uint64_t{1} << (id & 63); }

void MarkTokens(const TokenVocabulary& v, int32_t node, std::span<uint64_t> bits) {
  for (int32_t id : v.tokens_at(node)) SetBit(bits, id);
}

// A grammar without calls is one DFA: the state is one integer per trie depth.
void WalkDfa(const CompiledGrammar& g, DfaState start, const TokenVocabulary& v,
             std::span<uint64_t> bits) {
  thread_local std::vector<DfaState> states;  // [max_depth + 1] state at each trie depth
  states.resize(v.max_depth() + 1);
  states[0] = start;
  const int32_t num_nodes = v.num_nodes();
  for (int32_t node = 1; node < num_nodes;) {
    const int32_t depth = v.depth(node);
    DfaState next = g.Next(states[depth - 1], v.label(node));
    if (next == kDeadState) {
      node = v.subtree_end(node);
      continue;
    }
    states[depth] = next;
    MarkTokens(v, node, bits);
    ++node;
  }
}

// False when the walk's work passes max_mask_work or a step passes the matcher's limits:
// the mask is then unknown (never a guess that silently refuses tokens).
bool WalkStacks(const CompiledGrammar& g, const MatcherState& start, const TokenVocabulary& v,
                std::span<uint64_t> bits) {
  thread_local std::vector<MatcherState> states;  // [max_depth + 1]
  if (states.size() < static_cast<size_t>(v.max_depth() + 1)) states.resize(v.max_depth() + 1);
  states[0] = start;
  const int64_t max_work = g.limits().max_mask_work;
  int64_t work = 0;
  const int32_t num_nodes = v.num_nodes();
  for (int32_t node = 1; node < num_nodes;) {
    const int32_t depth = v.depth(node);
    const Matcher::StepResult result = Matcher::Advance(g, states[depth - 1], v.label(node), &states[depth], &work);
    if (result == Matcher::StepResult::kOverflow || work > max_work) return false;
    if (result == Matcher::StepResult::kDead) {
      node = v.subtree_end(node);
      continue;
    }
    MarkTokens(v, node, bits);
    // A state with no heads can only end: nothing below this node can be accepted.
    node = states[depth].empty() ? v.subtree_end(node) : node + 1;
  }
  return true;
}

bool WalkTrie(const Matcher& matcher, const TokenVocabulary& v, std::span<uint64_t> bits) {
  const MatcherState& state = matcher.state();
  if (state.empty()) return true;
  if (matcher.grammar().pure_dfa()) {
    WalkDfa(matcher.grammar(), state.heads()[0], v, bits);
    return true;
  }
  return WalkStacks(matcher.grammar(), state, v, bits);
}

void SetEos(const Matcher& matcher, const TokenVocabulary& v, std::span<uint64_t> bits) {
  if (!matcher.CanEnd()) return;
  for (int32_t id : v.eos_token_ids()) {
    if (id >= 0 && id < v.num_tokens()) SetBit(bits, id);
  }
}

// Reuses `key`'s capacity, so that a cache hit allocates nothing.
void StateKey(const MatcherState& state, std::string* key) {
  const size_t bytes = state.words.size() * sizeof(int32_t);
  key->resize(bytes + 1);
  std::memcpy(key->data(), state.words.data(), bytes);
  key->back() = state.can_end ? 1 : 0;
}

}  // namespace

bool ComputeMask(const Matcher& matcher, const TokenVocabulary& vocabulary,
                 std::span<uint64_t> allowed_bits) {
  std::fill(allowed_bits.begin(), allowed_bits.end(), 0);
  if (!WalkTrie(matcher, vocabulary, allowed_bits)) return false;
  SetEos(matcher, vocabulary, allowed_bits);
  return true;
}

bool AcceptToken(Matcher* matcher, const TokenVocabulary& vocabulary, int32_t id) {
  if (id < 0 || id >= vocabulary.num_tokens()) return false;
  if (vocabulary.is_eos(id)) return matcher->CanEnd();
  if (!vocabulary.in_trie(id)) return false;
  return matcher->AcceptBytes(vocabulary.bytes(id));
}

MaskCache::MaskCache(const TokenVocabulary& vocabulary, int32_t max_entries)
    : vocabulary_(vocabulary), max_entries_(std::max(1, max_entries)) {}

bool MaskCache::ComputeMask(const Matcher& matcher, std::span<uint64_t> allowed_bits) {
  StateKey(matcher.state(), &key_);
  auto it = index_.find(std::string_view(key_));
  if (it != index_.end()) {
    ++hits_;
    entries_.splice(entries_.begin(), entries_, it->second);
    std::copy(it->second->bits.begin(), it->second->bits.end(), allowed_bits.begin());
    return true;
  }
  ++misses_;
  if (!surge::ComputeMask(matcher, vocabulary_, allowed_bits)) return false;
  if (static_cast<int32_t>(entries_.size()) >= max_entries_) {
    index_.erase(entries_.back().key);
    entries_.pop_back();
  }
  entries_.push_front(Entry{key_, {allowed_bits.begin(), allowed_bits.end()}});
  index_.emplace(entries_.front().key, entries_.begin());
  return true;
}

}  // namespace surge
