#include "api/chat_request.h"

#include "api/tool_choice_schema.h"

namespace surge::api {
namespace {

// logprobs: bool; top_logprobs: 0..20, only together with logprobs (as OpenAI).
void ReadLogprobs(FieldReader& reader, int32_t* top_logprobs) {
  bool logprobs = false;
  reader.Bool("logprobs", &logprobs);
  int32_t top = 0;
  const bool has_top = reader.IntInRange("top_logprobs", 0, kMaxLogprobs, &top);
  reader.Require(!has_top || logprobs, "top_logprobs", "top_logprobs requires logprobs to be true");
  *top_logprobs = logprobs ? top : -1;
}

bool HasTool(const Json& tools, const std::string& name) {
  if (!tools.is_array()) return false;
  for (const Json& tool : tools) {
    if (tool["function"]["name"] == name) return true;
  }
  return false;
}

// "none" | "auto" | "required" | {"type": "function", "function": {"name": N}}, N one of
// `tools`; absent: auto with tools, none without (OpenAI's defaults).
void ReadToolChoice(FieldReader& reader, const Json& tools, ToolChoice* choice) {
  const bool has_tools = tools.is_array() && !tools.empty();
  choice->mode = has_tools ? ToolChoiceMode::kAuto : ToolChoiceMode::kNone;
  const Json* value = reader.Find("tool_choice");
  if (value == nullptr) return;
  if (value->is_string() && (*value == "none" || *value == "auto" || *value == "required")) {
    choice->mode = *value == "none" ? ToolChoiceMode::kNone
                   : *value == "auto" ? ToolChoiceMode::kAuto : ToolChoiceMode::kRequired;
  } else if (value->is_object() && value->value("type", Json()) == "function" && value->contains("function") &&
             (*value)["function"].is_object() && (*value)["function"].value("name", Json()).is_string()) {
    choice->mode = ToolChoiceMode::kFunction;
    choice->function_name = (*value)["function"]["name"].get<std::string>();
    reader.Require(HasTool(tools, choice->function_name), "tool_choice",
                   "tool_choice names the function '" + choice->function_name + "', which is not in tools");
  } else {
    return reader.Require(false, "tool_choice",
                          "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", "
                          "\"function\": {\"name\": ...}}");
  }
  reader.Require(has_tools || choice->mode == ToolChoiceMode::kNone || choice->mode == ToolChoiceMode::kAuto,
                 "tool_choice", "tool_choice \"required\" or a named function needs tools");
}

}  // namespace

ApiResult<ChatCompletionRequest> ChatCompletionRequestFromJson(const Json& object, const RequestLimits& limits) {
  ChatCompletionRequest request;
  FieldReader reader(object);
  ReadChatInput(reader, limits, &request.input);
  ReadGenerationParams(reader, limits, &request.params);
  int64_t max_completion_tokens = 0;
  if (reader.IntAtLeast("max_completion_tokens", 1, &max_completion_tokens)) {
    request.params.max_tokens = max_completion_tokens;
    request.params.max_tokens_param = "max_completion_tokens";
  }
  ReadLogprobs(reader, &request.params.top_logprobs);
  reader.Bool("add_special_tokens", &request.add_special_tokens);
  ReadToolChoice(reader, request.input.tools, &request.tool_choice);
  reader.Bool("parallel_tool_calls", &request.parallel_tool_calls);
  // SGLang's and vLLM's, at their defaults (sgl-router and vllm-router send them): with
  // --reasoning-parser the reasoning is always split out, returned, and streamed as it comes.
  reader.BoolOnly("separate_reasoning", true, "with --reasoning-parser the reasoning is always split out");
  reader.BoolOnly("stream_reasoning", true, "with --reasoning-parser the reasoning is always streamed as it comes");
  reader.BoolOnly("include_reasoning", true, "with --reasoning-parser the reasoning is always returned");
  if (!reader.failed()) ApplyToolChoiceConstraint(reader, &request);
  reader.RefuseUnread();
  if (reader.failed()) return reader.error();
  return request;
}

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  return ChatCompletionRequestFromJson(*object, limits);
}

}  // namespace surge::api
