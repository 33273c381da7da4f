// The word list random prompts are built from: common short English words, each one token
// (with its leading space) in the GPT-2, Llama and Qwen vocabularies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "bench/rng.h"

namespace surge::bench {

std::span<const std::string_view> CommonWords();

// `num_words` words drawn from CommonWords(), separated by single spaces (no leading space).
std::string RandomWords(Rng& rng, int64_t num_words);

// The number of words that should tokenize to about `num_tokens`: at least 1.
int64_t WordsForTokens(int64_t num_tokens, double tokens_per_word);

}  // namespace surge::bench
