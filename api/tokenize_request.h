// TokenizeRequest and DetokenizeRequest: POST /tokenize and /detokenize bodies as vLLM
// accepts them (a prompt, or chat messages rendered through the chat template).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/chat_input.h"
#include "api/error.h"

namespace surge::api {

struct TokenizeRequest {
  std::string model;  // "" when absent
  bool has_messages = false;
  std::string prompt;  // when !has_messages
  ChatInput chat;      // when has_messages
  // vLLM's defaults: true for a prompt, false for messages (the template writes BOS).
  bool add_special_tokens = true;
};

struct DetokenizeRequest {
  std::string model;
  std::vector<int32_t> tokens;
};

// Exactly one of prompt and messages.
ApiResult<TokenizeRequest> ParseTokenizeRequest(std::string_view body, const RequestLimits& limits = {});
ApiResult<DetokenizeRequest> ParseDetokenizeRequest(std::string_view body, const RequestLimits& limits = {});

// {"tokens": [...], "count": N, "max_model_len": L} plus "prompt" when not empty (the
// rendered chat template).
std::string TokenizeResponseJson(const std::vector<int32_t>& tokens, int64_t max_model_len,
                                 const std::string& rendered_prompt);
std::string DetokenizeResponseJson(const std::string& text);

}  // namespace surge::api
