// ChatInput: the part of a chat request that becomes the prompt — messages, tools and the
// chat-template switches — read as vLLM reads them, in the shape chat templates expect.
// Shared by /v1/chat/completions and /tokenize.
#pragma once

#include "api/error.h"
#include "api/field_reader.h"
#include "api/request_body.h"

namespace surge::api {

struct ChatInput {
  // The messages as the template sees them: every content a string (text parts joined
  // with "\n", as vLLM's "string" content format does) or null, and tool-call arguments
  // parsed from their JSON string into objects (templates render them with |tojson).
  // Roles: system, developer, user, assistant, tool, function (others are a 400). Other
  // message fields (name, tool_call_id, ...) pass through; a tool message without
  // tool_call_id is accepted, as vLLM accepts it.
  Json messages = Json::array();
  // The same messages with tool-call arguments as the strings that came; null when no
  // message calls tools. For templates that concatenate arguments as strings
  // (DeepSeek-V3's), which fail on objects: the prompt builder retries with these.
  Json string_argument_messages;
  // The request's tools (a list of {"type": "function", "function": {"name",
  // "description"?, "parameters"?, "strict"?}}); null when absent.
  Json tools;
  bool add_generation_prompt = true;
  bool continue_final_message = false;  // leave the last (assistant) message open
  Json chat_template_kwargs = Json::object();  // extra template variables
};

// Reads messages, tools, add_generation_prompt, continue_final_message and
// chat_template_kwargs, within `limits` (messages, content parts, tools, and the depth
// of tool-call arguments). Errors are kept in `reader`; each names its field
// ("messages[2].content").
void ReadChatInput(FieldReader& reader, const RequestLimits& limits, ChatInput* input);

}  // namespace surge::api
