// A GGUF file's tokenizer (GgufVocab) as Hugging Face files: tokenizer.json (BPE with its vocab
// and merges, the pre-tokenizer of `tokenizer.ggml.pre`, decoder, added tokens, BOS/EOS
// template) and tokenizer_config.json (special tokens, add_bos/eos, chat template). The
// reverse of GgufVocabFromHfDirectory; `surge convert MODEL.gguf OUT_DIR` writes them.
#pragma once

#include <string>

#include "base/status.h"
#include "tokenizer/gguf_vocab.h"

namespace surge {

struct HfTokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
};

// "gpt2" vocabularies become byte-level BPE with the family's split regexes (one Split per
// regex, then ByteLevel without its own regex), merges by rank; "llama" (SentencePiece)
// vocabularies become BPE with byte fallback and the metaspace normalizer/decoder, with merges
// derived from the scores (each pair whose concatenation is a token, ranked by that token's
// score, highest first, as SentencePiece merges). Control, unknown and user-defined tokens
// become added tokens (special unless user-defined). Errors as Tokenizer::FromGgufVocab.
StatusOr<HfTokenizerFiles> HfTokenizerFromGgufVocab(const GgufVocab& vocab);

}  // namespace surge
