// Normalizers: text -> text transforms applied to each stretch of input between added
// tokens, before pre-tokenization (tokenizer.json "normalizer").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tokenizer/regex.h"

namespace surge {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // `text` is valid UTF-8 and so is the result.
  virtual std::string Normalize(std::string_view text) const = 0;
};

enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

std::unique_ptr<Normalizer> MakeSequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps);
std::unique_ptr<Normalizer> MakePrependNormalizer(std::string prepend);
std::unique_ptr<Normalizer> MakeReplaceNormalizer(Pattern pattern, std::string content);
// Unicode normalization forms via ICU.
StatusOr<std::unique_ptr<Normalizer>> MakeUnicodeNormalizer(UnicodeForm form);
// Full Unicode lowercasing (root locale, as JavaScript's toLowerCase).
std::unique_ptr<Normalizer> MakeLowercaseNormalizer();
// Strips JavaScript whitespace from either end.
std::unique_ptr<Normalizer> MakeStripNormalizer(bool left, bool right);
// Removes every combining mark (\p{M}).
std::unique_ptr<Normalizer> MakeStripAccentsNormalizer();

}  // namespace surge
