// Tokenizer: text <-> token ids for Hugging Face tokenizer.json files (byte-level BPE as in
// Llama-3, Qwen2/3 and DeepSeek-V3; SentencePiece-style BPE with byte fallback as in
// Llama-2), and IncrementalDecoder for streaming detokenization.
//
// Behaviour follows tokenizers.js (@huggingface/tokenizers), which tests/node checks
// against; where that library ignores a tokenizer.json field the Rust `tokenizers` crate
// honours, the Rust meaning is used. tokenizer/README.md lists these choices.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge {

struct GgufVocab;
struct TokenizerState;

class Tokenizer {
 public:
  // Loads DIR/tokenizer.json, plus DIR/tokenizer_config.json (BOS/EOS, add_bos_token,
  // chat_template, additional special tokens, clean_up_tokenization_spaces),
  // DIR/chat_template.jinja and DIR/generation_config.json (more EOS ids) when present.
  static StatusOr<std::unique_ptr<Tokenizer>> FromDirectory(const std::string& dir);
  // `config_json` may be empty. `source_name` (a path) prefixes every error message.
  static StatusOr<std::unique_ptr<Tokenizer>> FromJson(const std::string& tokenizer_json,
                                                      const std::string& config_json,
                                                      const std::string& source_name);
  // From the `tokenizer.ggml.*` metadata of a GGUF file (gguf_vocab.h), with llama.cpp's
  // semantics: its pre-tokenizer regexes, SentencePiece merging by score, special tokens
  // by token type, and add_bos_token / add_eos_token applied by Encode. `source_name`
  // (the file) prefixes every error message.
  static StatusOr<std::unique_ptr<Tokenizer>> FromGgufVocab(const GgufVocab& vocab,
                                                           const std::string& source_name);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Thread-safe. Bytes of `text` that are not valid UTF-8 are replaced by U+FFFD first
  // (maximal-subpart rule, as a JavaScript TextDecoder or Rust's from_utf8_lossy).
  // add_special_tokens applies the post-processor's template (e.g. Llama-2's BOS); the
  // text itself may also contain special tokens, which always match.
  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens = true) const;
  // Ids outside [0, vocab_size()) or naming no token are skipped. Ill-formed UTF-8 from
  // byte tokens becomes U+FFFD.
  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens = true) const;

  int32_t vocab_size() const;  // largest id + 1, added tokens included
  int32_t bos_token_id() const;  // -1 when none
  const std::vector<int32_t>& eos_token_ids() const;
  const std::string& bos_token() const;  // "" when none
  const std::string& eos_token() const;  // the tokenizer_config.json one; "" when none
  // tokenizer_config.json's add_bos_token / add_eos_token. Encode does not apply them:
  // the post-processor in tokenizer.json decides (as in both reference libraries). For a
  // GGUF tokenizer they are tokenizer.ggml.add_bos_token / add_eos_token, which Encode
  // applies (as llama.cpp does).
  bool add_bos_token() const;
  bool add_eos_token() const;
  bool IsSpecial(int32_t id) const;
  const std::string& chat_template() const;  // "" when none
  std::optional<int32_t> TokenToId(std::string_view token) const;
  std::optional<std::string_view> IdToToken(int32_t id) const;

 private:
  friend class IncrementalDecoder;
  explicit Tokenizer(std::unique_ptr<TokenizerState> state);

  std::unique_ptr<TokenizerState> state_;
};

// Turns a stream of ids into text one id at a time. Each Add returns only complete UTF-8
// (bytes of a character split across tokens are held back until it is complete), and the
// concatenation of all Add results and Flush equals tokenizer.Decode(all ids) exactly,
// including the leading-space rule of the first token. Holds a reference to `tokenizer`.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = true);

  std::string Add(int32_t id);
  // Returns whatever is still held back (an incomplete character decodes as U+FFFD).
  std::string Flush();

 private:
  std::string AddWindowed();
  std::string AddFallback(bool flush);
  // Cleans up the raw text that is safe to clean (tokenizers' clean_up_tokenization_spaces
  // rewrites " ." to "." and so on, so a trailing space may still change).
  std::string Release(std::string raw, bool flush);

  const TokenizerState& state_;
  bool skip_special_tokens_;
  bool windowed_;                // false: re-decode everything (non-prefix-stable decoders)
  std::vector<int32_t> ids_;     // the visible ids so far
  size_t prefix_ = 0;            // window start in ids_
  size_t read_ = 0;              // ids_[0, read_) are emitted
  size_t prefix_text_bytes_ = 0; // size of the window's text for ids_[prefix_, read_)
  std::string held_raw_;         // decoded text awaiting clean-up
  std::string emitted_;          // fallback mode: everything returned so far
};

}  // namespace surge
