// ConstraintMasker: the engine thread's token masks for constrained choices. It owns the
// model's TokenVocabulary (built once, at engine construction) and one MaskCache per
// grammar in use, so requests that share a grammar (the server's compile cache hands out
// one CompiledGrammar per distinct constraint) share its masks. Engine-thread only: no
// locks; after warm-up a step allocates nothing (cache hits copy a mask).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/constraint/token_mask.h"
#include "engine/constraint/token_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace surge {

class ConstraintMasker {
 public:
  // EOS tokens of the vocabulary: `eos_token_ids` (the engine's: tokenizer's and model's).
  ConstraintMasker(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
                   int32_t max_grammars = 64);
  ConstraintMasker(const ConstraintMasker&) = delete;  // the caches borrow vocabulary_
  ConstraintMasker& operator=(const ConstraintMasker&) = delete;

  const TokenVocabulary& vocabulary() const { return vocabulary_; }

  // out = logits, with every token `matcher` disallows at -inf (ids past the tokenizer's
  // vocabulary too). `logits` and `out` are [vocab_size] and may not overlap. False (out
  // untouched) when the mask passes the grammar's limits (ComputeMask).
  [[nodiscard]] bool Mask(const Matcher& matcher, std::span<const float> logits, std::span<float> out);

 private:
  struct Cache {
    std::shared_ptr<const CompiledGrammar> grammar;  // keeps the key's address unique
    std::unique_ptr<MaskCache> masks;
    uint64_t last_used = 0;
  };
  MaskCache& CacheFor(const Matcher& matcher);

  const TokenVocabulary vocabulary_;
  const int32_t max_grammars_;
  std::unordered_map<const CompiledGrammar*, Cache> caches_;  // least recently used dropped
  uint64_t clock_ = 0;
  std::vector<uint64_t> bits_;  // [vocabulary.mask_words()]
};

}  // namespace surge
