// The JSON schema that tool_choice "required" or a named function holds the output to,
// so that even a weak model answers with valid calls (vLLM's approach: the output is
// plain constrained JSON, not the model's own tool-call format, and the server turns it
// into tool_calls).
#pragma once

#include <string>

#include "api/chat_request.h"

namespace surge::api {

// A named function: the output is that function's arguments, an object valid for its
// `parameters` ({"type": "object"} when it has none).
// "required": a list of at least one call [{"name": N, "parameters": {...}}, ...], each a
// tool of `tools` with arguments valid for its schema; at most one with
// parallel_tool_calls false.
// Other choices: "" (the output is free).
std::string ToolChoiceSchema(const Json& tools, const ToolChoice& choice, bool parallel_tool_calls);

// Holds the request's output to ToolChoiceSchema, as if by response_format json_schema
// with param "tool_choice" (compile errors then name tool_choice). Another output
// constraint beside it is refused.
void ApplyToolChoiceConstraint(FieldReader& reader, ChatCompletionRequest* request);

}  // namespace surge::api
