// TokenizerState: everything one loaded tokenizer holds, shared by Tokenizer (encode and
// decode), the loader and IncrementalDecoder. Internal to tokenizer/.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/token_model.h"
#include "tokenizer/vocab.h"

namespace surge {

struct TokenizerState {
  std::string source_name;
  Vocab vocab;  // model vocabulary with the added tokens set over it
  std::vector<AddedToken> added_tokens;  // never resized once the matchers exist
  // Every added token by content, and normalized ones also by normalized content.
  StringMap<const AddedToken*> added_by_content;
  std::unique_ptr<AddedTokenMatcher> raw_matcher;         // tokens matched in raw text
  std::unique_ptr<AddedTokenMatcher> normalized_matcher;  // tokens matched after normalizing
  TokenSet added_contents;  // decoded verbatim by the ByteLevel decoder

  std::unique_ptr<Normalizer> normalizer;       // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<TokenModel> model;  // BPE or WordPiece
  std::unique_ptr<PostProcessor> post_processor;  // may be null
  std::unique_ptr<Decoder> decoder;               // may be null: tokens joined by ' '

  std::vector<uint8_t> is_special;  // [vocab.size()]
  std::vector<uint8_t> never_shown;  // [vocab.size()] or empty: ids no decode prints (GGUF unused)
  std::string end_of_word_suffix;   // of the model; decoding turns it into ' '
  bool clean_up_tokenization_spaces = true;
  bool llama_cpp_clean_up = false;  // GGUF: llama.cpp's clean-up rules instead of tokenizers'

  int32_t bos_token_id = -1;
  std::string bos_token;
  std::string eos_token;
  std::vector<int32_t> eos_token_ids;
  bool add_bos_token = false;
  bool add_eos_token = false;
  std::string chat_template;

  // Encodes one section of the input (added token or text between them).
  void EncodeSection(const Section& section, int section_index, std::vector<int32_t>* ids) const;
  // False for ids that decode to nothing: out of range, holes, skipped specials.
  bool Visible(int32_t id, bool skip_special_tokens) const;
  // The decoder chain over visible ids, joined; no end-of-word or clean-up step.
  // `incomplete_tail` (optional) reports a trailing incomplete UTF-8 character.
  std::string DecodeVisible(std::span<const int32_t> ids, bool* incomplete_tail = nullptr) const;
  // The steps after the chain: end-of-word suffix -> ' ' and clean-up of spaces.
  std::string FinishDecode(std::string text, bool skip_special_tokens) const;
  // The clean-up of spaces this tokenizer uses (tokenizers' or llama.cpp's).
  std::string CleanUp(std::string_view text) const;
  // True when IncrementalDecoder can decode a sliding window instead of everything.
  bool StreamsByWindow() const;
};

// tokenizers' clean_up_tokenization: " ." -> ".", " ?" -> "?", " !" -> "!", " ," -> ",",
// " ' " -> "'", " n't" -> "n't", " 'm" -> "'m", " 's" -> "'s", " 've" -> "'ve",
// " 're" -> "'re", applied in that order.
std::string CleanUpTokenizationSpaces(std::string_view text);

// llama.cpp's detokenize clean-up (clean_spaces), three passes: drop the space before
// ? ! . ,; " ' " -> "'"; drop the space before 's 'm 're 've (not n't, 't, 'd, 'll).
std::string LlamaCppCleanUpSpaces(std::string_view text);

}  // namespace surge
