// WordPieceModel: BERT's greedy longest-match-first subword split of each pre-tokenized
// word, with a continuing-subword prefix ("##") and [UNK] for words it cannot cover.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/token_model.h"
#include "tokenizer/vocab.h"

namespace surge {

struct WordPieceOptions {
  int32_t unk_id = 0;                           // the whole word when it cannot be split
  std::string continuing_subword_prefix = "##";
  int32_t max_input_chars_per_word = 100;       // longer words are unk at once
};

class WordPieceModel final : public TokenModel {
 public:
  // `vocab` is borrowed and must outlive the model.
  WordPieceModel(const Vocab* vocab, WordPieceOptions options) : vocab_(vocab), options_(std::move(options)) {}

  // Each word: the longest vocabulary prefix, then the longest prefix-marked piece of the
  // rest, and so on; a word with any character no piece covers is one unk (the Rust
  // crate's rule, not per-character unks).
  void Encode(const std::vector<std::string>& words, std::vector<int32_t>* ids) const override;

 private:
  void EncodeWord(std::string_view word, std::vector<int32_t>* ids) const;

  const Vocab* vocab_;
  WordPieceOptions options_;
};

}  // namespace surge
