// Request bodies as they enter: size-checked by net/, then bounded here (JSON nesting
// depth, counts of messages, parts, tools, stop strings) before anything recursive
// walks or copies them. The limits are documented in docs/LIMITS.md.
#pragma once

#include <cstddef>
#include <string_view>

#include "api/error.h"
#include "api/field_reader.h"

namespace surge::api {

// Deep enough for every OpenAI request shape (a tool's JSON schema included), shallow
// enough that a recursive copy, dump or template render of the value stays far from
// the stack's end.
inline constexpr int kDefaultMaxJsonDepth = 64;
inline constexpr int kMaxJsonDepthLimit = 1024;  // the most --max-json-depth accepts

struct RequestLimits {
  int max_json_depth = kDefaultMaxJsonDepth;  // nested arrays/objects, the body's own included
  size_t max_messages = 4096;                 // chat messages per request
  size_t max_content_parts = 1024;            // content parts per message
  size_t max_tools = 512;                     // entries of tools
  size_t max_stop = 64;                       // stop strings
  size_t max_stop_bytes = 1024;               // bytes of one stop string
  size_t max_stop_token_ids = 1024;           // entries of stop_token_ids
  size_t max_prompts = 1024;                  // prompts of one completions request
  size_t max_embedding_inputs = 2048;         // inputs of one embeddings request (OpenAI's limit)
  size_t max_logit_bias = 1024;               // entries of logit_bias
};

// Parses `text` as JSON nested at most `max_depth` deep; `what` names it in errors
// ("the request body", "messages[0].tool_calls[1].function.arguments"), `param` is the
// field reported.
ApiResult<Json> ParseJsonBounded(std::string_view text, int max_depth, std::string_view what,
                                 std::string_view param);

// Parses a request body: valid UTF-8, JSON within the depth limit, an object. Each
// failure is a 400 that says which.
ApiResult<Json> ParseRequestObject(std::string_view body, const RequestLimits& limits = {});

}  // namespace surge::api
