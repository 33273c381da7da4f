// Pre-tokenizers: split normalized text into the words the model encodes one by one
// (tokenizer.json "pre_tokenizer").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tokenizer/regex.h"

namespace surge {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Appends the pieces of `piece` to `out`. `section_index` is the index of the stretch of
  // input (between added tokens) that the text came from; Metaspace's "first" uses it.
  virtual void Split(std::string_view piece, int section_index, std::vector<std::string>* out) const = 0;
};

// Runs `pre_tokenizer` over `text` and returns the pieces (without empty ones).
std::vector<std::string> PreTokenize(const PreTokenizer& pre_tokenizer, std::string_view text,
                                     int section_index);

// How a Split keeps the delimiters it finds (the Rust crate's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Metaspace's rule for adding the replacement character in front of a word.
enum class PrependScheme { kAlways, kNever, kFirst };

std::unique_ptr<PreTokenizer> MakeSequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps);
// With `invert`, the non-matches are the delimiters.
std::unique_ptr<PreTokenizer> MakeSplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert);
// GPT-2's ByteLevel: optional prefix space, optional GPT-2 regex split, then bytes -> chars.
StatusOr<std::unique_ptr<PreTokenizer>> MakeByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
// SentencePiece's Metaspace: ' ' -> replacement, a prefix per `scheme`, optional split
// before each replacement character.
std::unique_ptr<PreTokenizer> MakeMetaspacePreTokenizer(std::string replacement, PrependScheme scheme,
                                                        bool split);
// Splits runs of ASCII digits (each digit alone with `individual_digits`) from the rest.
std::unique_ptr<PreTokenizer> MakeDigitsPreTokenizer(bool individual_digits);

// Applies a split behaviour to the segments of `text` ([begin, end), is_delimiter) that
// cover it in order; returns the non-empty pieces' ranges. Exposed for tests.
std::vector<MatchSpan> ApplySplitBehavior(const std::vector<std::pair<MatchSpan, bool>>& segments,
                                          SplitBehavior behavior);

}  // namespace surge
