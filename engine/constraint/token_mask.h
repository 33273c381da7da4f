// Token masks: which tokens of a TokenVocabulary can continue a Matcher's output. The mask
// is computed by walking the vocabulary's byte trie from the matcher's state, pruning a
// whole subtree at the first byte the grammar rejects; MaskCache remembers masks by state.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/constraint/matcher.h"
#include "engine/constraint/token_vocabulary.h"

namespace surge {

// Sets bit `id` of `allowed_bits` ([vocabulary.mask_words()]) for every token that may come
// next, clears the others. EOS tokens are allowed exactly when matcher.CanEnd(). False (the
// bits are then meaningless) when the walk passes the grammar's max_mask_work, or a token's
// step passes the matcher's limits: the constraint cannot be followed at this point.
[[nodiscard]] bool ComputeMask(const Matcher& matcher, const TokenVocabulary& vocabulary,
                 std::span<uint64_t> allowed_bits);

// Advances `matcher` by token `id`'s bytes. False (matcher unchanged) when the token is not
// allowed; an EOS token is accepted exactly when the output may end, and changes nothing.
bool AcceptToken(Matcher* matcher, const TokenVocabulary& vocabulary, int32_t id);

inline bool MaskAllows(std::span<const uint64_t> bits, int32_t id) {
  return (bits[id >> 6] >> (id & 63)) & 1;
}

// Masks by matcher state for one (grammar, vocabulary) pair, least recently used dropped
// first. Inside a free string or a number the state repeats from token to token, so most
// masks come from here. Not thread-safe: one per thread (the engine loop) and grammar.
class MaskCache {
 public:
  MaskCache(const TokenVocabulary& vocabulary, int32_t max_entries = 256);

  // As ComputeMask, through the cache (a failure is not cached).
  [[nodiscard]] bool ComputeMask(const Matcher& matcher, std::span<uint64_t> allowed_bits);
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  struct Entry {
    std::string key;
    std::vector<uint64_t> bits;  // [mask_words]
  };

  const TokenVocabulary& vocabulary_;
  int32_t max_entries_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
  std::string key_;  // the state being looked up, reused from call to call
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace surge
