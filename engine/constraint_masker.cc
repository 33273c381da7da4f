#include "engine/constraint_masker.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "engine/constraint/tokenizer_vocabulary.h"

namespace surge {
namespace {

TokenVocabulary BuildVocabulary(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids) {
  std::vector<uint8_t> excluded(tokenizer.vocab_size(), 0);
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) excluded[id] = tokenizer.IsSpecial(id);
  return TokenVocabulary(TokenBytesOf(tokenizer), excluded, std::move(eos_token_ids));
}

}  // namespace

ConstraintMasker::ConstraintMasker(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
                                   int32_t max_grammars)
    : vocabulary_(BuildVocabulary(tokenizer, std::move(eos_token_ids))),
      max_grammars_(std::max(1, max_grammars)),
      bits_(vocabulary_.mask_words()) {}

MaskCache& ConstraintMasker::CacheFor(const Matcher& matcher) {
  ++clock_;
  auto it = caches_.find(&matcher.grammar());
  if (it != caches_.end()) {
    it->second.last_used = clock_;
    return *it->second.masks;
  }
  if (static_cast<int32_t>(caches_.size()) >= max_grammars_) {
    auto oldest = std::min_element(caches_.begin(), caches_.end(), [](const auto& a, const auto& b) {
      return a.second.last_used < b.second.last_used;
    });
    caches_.erase(oldest);
  }
  Cache cache{matcher.shared_grammar(), std::make_unique<MaskCache>(vocabulary_), clock_};
  return *caches_.emplace(&matcher.grammar(), std::move(cache)).first->second.masks;
}

bool ConstraintMasker::Mask(const Matcher& matcher, std::span<const float> logits, std::span<float> out) {
  if (!CacheFor(matcher).ComputeMask(matcher, bits_)) return false;
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  const size_t num_known = std::min<size_t>(logits.size(), vocabulary_.num_tokens());
  for (size_t word = 0; word * 64 < num_known; ++word) {
    const uint64_t bits = bits_[word];
    const size_t end = std::min(num_known, word * 64 + 64);
    for (size_t id = word * 64; id < end; ++id) out[id] = (bits >> (id & 63)) & 1 ? logits[id] : kMasked;
  }
  std::fill(out.begin() + num_known, out.end(), kMasked);
  return true;
}

}  // namespace surge
