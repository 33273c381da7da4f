// CompletionRequest: a parsed and validated POST /v1/completions body.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/error.h"
#include "api/generation_params.h"

namespace surge::api {

// One prompt, given as text or as token ids.
struct CompletionPrompt {
  bool is_tokens = false;
  std::string text;
  std::vector<int32_t> token_ids;
};

struct CompletionRequest {
  // OpenAI's prompt: a string, a list of strings, a list of token ids or a list of such
  // lists. Never empty, and no prompt in it is empty. Several prompts make several
  // generations; choice i * n + j is prompt i's j-th.
  std::vector<CompletionPrompt> prompts;
  GenerationParams params;         // logprobs (an int) lands in params.top_logprobs
  bool add_special_tokens = true;  // vLLM's extension: BOS etc. for text prompts
  // Each choice's text starts with its prompt (decoded from its tokens); with logprobs,
  // the prompt's tokens come first in them, the first unscored. max_tokens may be 0 then
  // (evaluation harnesses score prompts that way).
  bool echo = false;
};

// OpenAI's prompt shape, shared with /v1/embeddings' input: a string, a list of strings,
// a list of token ids or a list of such lists; never empty, no item empty, at most
// max_items items. Errors name `param` ("prompt holds 3 prompts; the limit is 2").
struct PromptListSpec {
  std::string_view param;  // "prompt", "input"
  std::string_view items;  // "prompts", "inputs"
  size_t max_items = 0;
};
ApiResult<std::vector<CompletionPrompt>> ParsePromptList(const Json* value, const PromptListSpec& spec);

ApiResult<CompletionRequest> ParseCompletionRequest(std::string_view body, const RequestLimits& limits = {});
ApiResult<CompletionRequest> CompletionRequestFromJson(const Json& object, const RequestLimits& limits = {});

}  // namespace surge::api
