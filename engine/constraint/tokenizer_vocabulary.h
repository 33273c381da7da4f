// The bytes each token of a surge Tokenizer adds to the output, for TokenVocabulary.
// Byte-level vocabularies (Llama-3, Qwen, DeepSeek: GPT-2's byte <-> character map) and
// SentencePiece-style ones ('▁' for space, <0xNN> byte-fallback tokens) are recognized.
#pragma once

#include <string>
#include <vector>

#include "engine/constraint/token_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace surge {

// [vocab_size] token bytes; "" for special tokens and ids that name no token. Exact bytes,
// unlike Decode({id}), which replaces partial UTF-8 with U+FFFD and cleans up spaces.
// SentencePiece's decoder also drops the leading space of a sequence's first token; the
// bytes here keep it (the detokenizer decides what the user sees).
std::vector<std::string> TokenBytesOf(const Tokenizer& tokenizer);

// TokenVocabulary over TokenBytesOf, with special tokens excluded and the tokenizer's EOS
// ids (tokenizer_config / generation_config) as EOS.
TokenVocabulary MakeTokenVocabulary(const Tokenizer& tokenizer);

}  // namespace surge
