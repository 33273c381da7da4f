// GgufVocab <-> GGUF files: reads the tokenizer metadata (tokenizer.ggml.*,
// tokenizer.chat_template) of an open GGUF file, writes it with a GgufWriter, and builds
// a Tokenizer from a GGUF file.
#pragma once

#include <memory>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace surge {

// NOT_FOUND naming the key when tokenizer.ggml.model or tokenizer.ggml.tokens is absent;
// INVALID_ARGUMENT naming the key for a value of the wrong type, and for scores or
// token types whose length differs from the tokens'. Errors start with the file's path.
StatusOr<GgufVocab> ReadGgufVocab(const GgufFile& file);

// Sets the keys of `vocab` with the value types llama.cpp's gguf-py writes (u32 ids, i32
// token types, f32 scores, bools, strings); absent fields write no key.
void WriteGgufVocab(const GgufVocab& vocab, GgufWriter* writer);

// ReadGgufVocab + Tokenizer::FromGgufVocab.
StatusOr<std::unique_ptr<Tokenizer>> TokenizerFromGguf(const GgufFile& file);

}  // namespace surge
