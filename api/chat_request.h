// ChatCompletionRequest: a parsed and validated POST /v1/chat/completions body.
#pragma once

#include <string>
#include <string_view>

#include "api/chat_input.h"
#include "api/error.h"
#include "api/generation_params.h"

namespace surge::api {

// tool_choice. kRequired and kFunction need constrained decoding (the output forced into a
// call): they are parsed and checked here, and the server refuses them until it has it.
enum class ToolChoiceMode { kNone, kAuto, kRequired, kFunction };
struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kNone;  // absent: auto when tools are given, else none
  std::string function_name;                    // kFunction: one of the request's tools
};

struct ChatCompletionRequest {
  ChatInput input;
  // max_completion_tokens (or the older max_tokens) lands in params.max_tokens; logprobs
  // (a bool) and top_logprobs in params.top_logprobs.
  GenerationParams params;
  // vLLM's default for chat: the template already writes BOS and friends.
  bool add_special_tokens = false;
  ToolChoice tool_choice;
  // false: a choice keeps only its first tool call (later ones are dropped, text and all).
  bool parallel_tool_calls = true;
};

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body, const RequestLimits& limits = {});
ApiResult<ChatCompletionRequest> ChatCompletionRequestFromJson(const Json& object, const RequestLimits& limits = {});

}  // namespace surge::api
