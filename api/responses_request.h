// POST /v1/responses (the Responses API) read as what it is underneath: a chat completion.
// `input` (a string, or message / function_call / function_call_output items) becomes
// chat messages; `instructions` a system message before them; function tools, tool_choice,
// text.format, max_output_tokens and the sampling fields their chat counterparts. The
// chat request's own parser then checks it all, and its errors are renamed back
// (messages -> input, max_completion_tokens -> max_output_tokens, response_format ->
// text.format).
#pragma once

#include <string>
#include <string_view>

#include "api/chat_request.h"
#include "api/request_body.h"

namespace surge::api {

struct ResponsesRequest {
  Json chat;                         // the chat completion body, "messages" still missing
  Json input_messages;               // `input` as chat messages
  std::string instructions;          // "" when none; not carried over to a later response
  std::string previous_response_id;  // "" when none
  bool store = true;                 // keep the response for GET and previous_response_id
  bool stream = false;
  Json echo;  // the fields the response object repeats (instructions, tools, text, ...)
};

ApiResult<ResponsesRequest> ParseResponsesRequest(std::string_view body, const RequestLimits& limits = {});

// The chat request: instructions, then `history` (the previous response's conversation as
// chat messages; an empty array when none), then the input.
ApiResult<ChatCompletionRequest> ToChatRequest(const ResponsesRequest& request, const Json& history,
                                               const RequestLimits& limits = {});

// The conversation a stored response continues: `history`, the input, and the answer as
// an assistant message (with its tool_calls) -- instructions and reasoning left out, as
// OpenAI and DeepSeek's templates want.
Json ConversationAfter(const Json& history, const ResponsesRequest& request, const Json& output_items);

}  // namespace surge::api
