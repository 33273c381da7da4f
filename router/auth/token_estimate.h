// The tokens a request is charged at admission (prompt estimate + max_tokens, times n) and
// the tokens its response really used -- the two ends of the tokens/min accounting.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace surge::router {

struct TokenEstimateOptions {
  // Text prompts are not tokenized here (the router may not hold the tokenizer): ~4 bytes
  // of English per token, the common rule of thumb; token-id prompts count exactly.
  int64_t bytes_per_token = 4;
  int64_t tokens_per_message = 4;  // a chat template's role markers and separators
  // A request without max_tokens may generate up to the context's end; charge this much,
  // and let Settle correct it.
  int64_t default_max_tokens = 256;
};

// Over a completions, chat, responses or embeddings body: prompt / messages / input, plus,
// when the route `generates` (not /v1/embeddings, /v1/tokenize), max_tokens,
// max_output_tokens or max_completion_tokens (else default_max_tokens), times n. `prompt_tokens`: an exact count when the caller tokenized already
// (cache-aware routing does). Never negative; malformed fields count as nothing (the
// engine's parser answers 400 for them).
int64_t EstimateRequestTokens(const nlohmann::json& body, bool generates,
                              std::optional<int64_t> prompt_tokens = {},
                              const TokenEstimateOptions& options = {});

// `usage.total_tokens` (or prompt + completion tokens) of a response or of a stream's last
// chunk (an engine's answer, read through base/json_access.h: hence ordered_json); nullopt
// when it carries no usage. Counts outside [0, 2^40] are not believed.
std::optional<int64_t> UsageTotalTokens(const nlohmann::ordered_json& response);

}  // namespace surge::router
