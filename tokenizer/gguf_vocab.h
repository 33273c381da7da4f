// GgufVocab: the tokenizer a GGUF file carries in its `tokenizer.ggml.*` metadata, as
// llama.cpp writes and reads it, in a plain struct. Tokenizer::FromGgufVocab builds a
// Tokenizer from it with llama.cpp's semantics (tokenizer/README.md, "GGUF"); the
// container reader fills it (ReadGgufVocab, gguf_vocab_io.h) and tests fill it from
// a tokenizer.json as llama.cpp's converter would (GgufVocabFromHfDirectory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class GgufTokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct GgufVocab {
  std::string model;  // tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama" (SentencePiece)
  std::string pre;    // tokenizer.ggml.pre: pre-tokenizer family; "" when absent
  std::vector<std::string> tokens;   // [num_tokens] tokenizer.ggml.tokens
  std::vector<float> scores;         // [num_tokens] or empty: tokenizer.ggml.scores
  std::vector<int32_t> token_types;  // [num_tokens] or empty: tokenizer.ggml.token_type
  std::vector<std::string> merges;   // [num_merges] "left right", by rank: tokenizer.ggml.merges
  // tokenizer.ggml.{bos,eos,unknown,padding}_token_id; nullopt when absent.
  std::optional<int64_t> bos_token_id;
  std::optional<int64_t> eos_token_id;
  std::optional<int64_t> unknown_token_id;
  std::optional<int64_t> padding_token_id;
  std::optional<int64_t> eot_token_id;  // tokenizer.ggml.eot_token_id: end of turn
  std::optional<int64_t> eom_token_id;  // tokenizer.ggml.eom_token_id: end of message
  // tokenizer.ggml.add_bos_token / add_eos_token / add_space_prefix; nullopt when absent
  // (the model type's llama.cpp default applies).
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  std::optional<bool> add_space_prefix;
  std::string chat_template;  // tokenizer.chat_template; "" when absent
};

// How GgufVocabFromHfDirectory scores a SentencePiece-style ("llama") vocabulary that has
// only a tokenizer.json (no tokenizer.model with real scores).
enum class HfScores {
  // What llama.cpp's convert_hf_to_gguf.py writes (LlamaHfVocab): -1000 for every token.
  // llama.cpp then merges the leftmost pair first, which is not how the model was trained.
  kLlamaCppPlaceholder,
  // -(rank of the first merge that produces the token), so that merging by score replays
  // the tokenizer.json merge order; tokens no merge produces get -(num_merges + id).
  kFromMerges,
};

struct HfToGgufOptions {
  HfScores scores = HfScores::kFromMerges;
  std::string pre;             // tokenizer.ggml.pre to write; "" = detect from the regexes
  std::optional<int64_t> vocab_size;  // config.json's vocab_size: pads with [PADn] tokens
};

// Converts DIR/tokenizer.json (+ tokenizer_config.json, chat_template.jinja, config.json)
// into the metadata llama.cpp's convert_hf_to_gguf.py would write: byte-level BPE
// tokenizers become "gpt2" (_set_vocab_gpt2), BPE with byte fallback becomes "llama"
// (_set_vocab_llama_hf). Errors name the file and the problem.
StatusOr<GgufVocab> GgufVocabFromHfDirectory(const std::string& dir, const HfToGgufOptions& options = {});

}  // namespace surge
