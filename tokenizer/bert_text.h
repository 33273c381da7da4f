// BERT's text components of tokenizer.json: the BertNormalizer, the BertPreTokenizer and
// the WordPiece decoder, with the Rust `tokenizers` crate's semantics (the reference the
// WordPiece differential test compares against).
#pragma once

#include <memory>
#include <string>

#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"

namespace surge {

struct BertNormalizerOptions {
  bool clean_text = true;            // drop NUL, U+FFFD and control characters; whitespace -> ' '
  bool handle_chinese_chars = true;  // a space either side of every CJK ideograph
  bool strip_accents = true;         // NFD, then drop nonspacing marks (Mn)
  bool lowercase = true;             // per character, full mapping (no final-sigma context)
};

// In that order: clean text, CJK spacing, accents, lowercase.
StatusOr<std::unique_ptr<Normalizer>> MakeBertNormalizer(const BertNormalizerOptions& options);
// Splits on whitespace (dropped) and isolates every punctuation character (ASCII
// punctuation or Unicode P*).
std::unique_ptr<PreTokenizer> MakeBertPreTokenizer();
// Every token but the first loses `prefix` when it starts with it, else gains a leading
// space; with `cleanup`, each token then gets tokenizers' clean-up of spaces.
std::unique_ptr<Decoder> MakeWordPieceDecoder(std::string prefix, bool cleanup);

}  // namespace surge
