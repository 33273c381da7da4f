// ChatCompletionRequest: a parsed and validated POST /v1/chat/completions body.
#pragma once

#include <string_view>

#include "api/chat_input.h"
#include "api/error.h"
#include "api/generation_params.h"

namespace surge::api {

struct ChatCompletionRequest {
  ChatInput input;
  // max_completion_tokens (or the older max_tokens) lands in params.max_tokens; logprobs
  // (a bool) and top_logprobs in params.top_logprobs.
  GenerationParams params;
  // vLLM's default for chat: the template already writes BOS and friends.
  bool add_special_tokens = false;
};

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body, const RequestLimits& limits = {});
ApiResult<ChatCompletionRequest> ChatCompletionRequestFromJson(const Json& object, const RequestLimits& limits = {});

}  // namespace surge::api
