// Decoders: token strings -> text pieces (tokenizer.json "decoder"). The pieces of a
// decoder chain are concatenated to give the decoded text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/vocab.h"

namespace surge {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites `tokens` in place (a step may merge or split entries). Steps that turn
  // bytes into text set `*incomplete_tail` to whether the text ends in an incomplete
  // UTF-8 character (shown as U+FFFD until more bytes come); other steps leave it.
  virtual void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const = 0;
  // True when decoding a longer token list only appends to the text of a shorter one
  // (after any incomplete trailing UTF-8 is completed). IncrementalDecoder relies on it;
  // steps that rewrite the end of the text (Strip with stop > 0, BPEDecoder) are not.
  virtual bool prefix_stable() const { return true; }
};

// Token strings that byte-level decoding passes through untouched (the added tokens).
using TokenSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

// GPT-2 byte-level: runs of ordinary tokens -> bytes -> UTF-8 (ill-formed bytes become
// U+FFFD as TextDecoder does); tokens in `added_tokens` (borrowed) are kept as they are.
std::unique_ptr<Decoder> MakeByteLevelDecoder(const TokenSet* added_tokens);
// Replacement -> ' ', and the first token loses one leading space unless `strip_first` is
// false (prepend_scheme "never").
std::unique_ptr<Decoder> MakeMetaspaceDecoder(std::string replacement, bool strip_first);
std::unique_ptr<Decoder> MakeReplaceDecoder(Pattern pattern, std::string content);
// Runs of <0xNN> tokens -> UTF-8 (ill-formed bytes become U+FFFD). With
// `drop_leading_bom`, a byte-order mark that starts a run is dropped, as tokenizers.js's
// TextDecoder does (llama.cpp and the Rust crate keep it).
std::unique_ptr<Decoder> MakeByteFallbackDecoder(bool drop_leading_bom = true);
// All tokens -> one.
std::unique_ptr<Decoder> MakeFuseDecoder();
// Removes up to `start` leading and `stop` trailing `content` characters of each token.
std::unique_ptr<Decoder> MakeStripDecoder(std::string content, int start, int stop);
// The end-of-word suffix becomes ' ' (nothing after the last token).
std::unique_ptr<Decoder> MakeBpeDecoder(std::string suffix);
std::unique_ptr<Decoder> MakeSequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps);

}  // namespace surge
