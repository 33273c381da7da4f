// TokenModel: the tokenizer.json "model" step -- pre-tokenized words to ids (BPE or
// WordPiece). Internal to tokenizer/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace surge {

class TokenModel {
 public:
  virtual ~TokenModel() = default;
  // Appends the ids of `words` (pre-tokens, valid UTF-8) to `ids`.
  virtual void Encode(const std::vector<std::string>& words, std::vector<int32_t>* ids) const = 0;
};

}  // namespace surge
