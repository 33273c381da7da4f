// Completions' echo: the prompt as a choice's first text, and with logprobs its tokens
// as the first logprob entries -- the text each token adds (so they join into the echoed
// text and text_offset slices it), the first one unscored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "api/response_common.h"
#include "engine/engine_client.h"
#include "server/server_context.h"

namespace surge {

struct EchoedPrompt {
  std::string text;                             // the prompt decoded (special tokens skipped)
  std::vector<api::TokenLogprobInfo> logprobs;  // [num_prompt_tokens] with scores; else empty
};

// `scores`: the engine's prompt_logprobs (positions 1..); `with_logprobs`: whether the
// request asked for logprobs.
EchoedPrompt EchoPrompt(const ServerContext& context, std::span<const int32_t> prompt_ids,
                        const std::vector<TokenLogprob>& scores, bool with_logprobs);

}  // namespace surge
