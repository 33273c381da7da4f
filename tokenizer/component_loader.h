// Builds normalizers, pre-tokenizers, post-processors and decoders from their
// tokenizer.json objects. Internal to tokenizer/; nlohmann::json exceptions for fields of
// the wrong type propagate to the caller (the loader turns them into a Status).
#pragma once

#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/vocab.h"

namespace surge {

// {"String": "..."} or {"Regex": "..."}.
StatusOr<Pattern> ParsePattern(const nlohmann::json& config);
// Each returns a null pointer for a JSON null (the component is absent).
StatusOr<std::unique_ptr<Normalizer>> ParseNormalizer(const nlohmann::json& config);
StatusOr<std::unique_ptr<PreTokenizer>> ParsePreTokenizer(const nlohmann::json& config);
// `vocab` resolves the template's token names to ids.
StatusOr<std::unique_ptr<PostProcessor>> ParsePostProcessor(const nlohmann::json& config,
                                                            const Vocab& vocab);
// `added_tokens` (borrowed) are what the ByteLevel decoder passes through.
StatusOr<std::unique_ptr<Decoder>> ParseDecoder(const nlohmann::json& config,
                                                const TokenSet* added_tokens);

}  // namespace surge
