#include "api/chat_input.h"

#include <algorithm>
#include <optional>
#include <string>

namespace surge::api {
namespace {

std::string TooMany(const std::string& what, size_t count, size_t limit) {
  return what + " holds " + std::to_string(count) + " items; the limit is " + std::to_string(limit);
}

// Text parts joined with newlines; other part types (images, audio) are refused.
ApiResult<Json> FlattenContent(const Json& content, const std::string& where, const RequestLimits& limits) {
  if (content.is_null() || content.is_string()) return content;
  if (!content.is_array()) {
    return InvalidParam(where, where + " must be a string or a list of content parts, got " +
                                   JsonTypeName(content));
  }
  if (content.size() > limits.max_content_parts) {
    return InvalidParam(where, TooMany(where, content.size(), limits.max_content_parts));
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string part_where = where + "[" + std::to_string(i) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      return InvalidParam(where, part_where + " must be an object with a string \"type\"");
    }
    const std::string type = part["type"].get<std::string>();
    if (type != "text") return InvalidParam(where, part_where + ": content type '" + type + "' is not supported");
    if (!part.contains("text") || !part["text"].is_string()) {
      return InvalidParam(where, part_where + ".text must be a string");
    }
    if (i > 0) text += '\n';
    text += part["text"].get<std::string>();
  }
  return Json(text);
}

// tool_calls[i].function.arguments arrives as a JSON string; templates want the object,
// which is untrusted JSON too and so is bounded like the body.
ApiResult<Json> ParseToolCalls(const Json& tool_calls, const std::string& where, const RequestLimits& limits) {
  if (!tool_calls.is_array()) return InvalidParam(where, where + " must be a list");
  if (tool_calls.size() > limits.max_tools) return InvalidParam(where, TooMany(where, tool_calls.size(), limits.max_tools));
  Json parsed = tool_calls;
  for (size_t i = 0; i < parsed.size(); ++i) {
    Json& call = parsed[i];
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
      return InvalidParam(where, where + " items must be objects with a \"function\" object");
    }
    Json& function = call["function"];
    if (!function.contains("arguments") || !function["arguments"].is_string()) continue;
    const std::string arguments_where = where + "[" + std::to_string(i) + "].function.arguments";
    ApiResult<Json> arguments =
        ParseJsonBounded(function["arguments"].get<std::string>(), limits.max_json_depth, arguments_where, where);
    if (!arguments.ok()) return arguments.error();
    function["arguments"] = std::move(arguments).value();
  }
  return parsed;
}

constexpr std::string_view kRoles[] = {"system", "developer", "user", "assistant", "tool", "function"};

ApiResult<Json> ParseMessage(const Json& message, size_t index, const RequestLimits& limits) {
  const std::string where = "messages[" + std::to_string(index) + "]";
  if (!message.is_object()) return InvalidParam("messages", where + " must be an object, got " + JsonTypeName(message));
  if (!message.contains("role") || !message["role"].is_string()) {
    return InvalidParam("messages", where + ".role must be a string");
  }
  const std::string& role = message["role"].get_ref<const std::string&>();
  if (std::find(std::begin(kRoles), std::end(kRoles), role) == std::end(kRoles)) {
    return InvalidParam("messages", where + ".role '" + role +
                                        "' is not one of system, developer, user, assistant, tool, function");
  }
  // Only an assistant turn that calls tools may leave its content out (OpenAI's rule).
  const bool has_content = message.contains("content") && !message["content"].is_null();
  const bool calls_tools = message.contains("tool_calls") && !message["tool_calls"].is_null();
  if (!has_content && !(message["role"] == "assistant" && calls_tools)) {
    return InvalidParam("messages", where + ".content is required for role '" +
                                        message["role"].get<std::string>() + "'");
  }
  Json normalized = message;
  if (message.contains("content")) {
    ApiResult<Json> content = FlattenContent(message["content"], where + ".content", limits);
    if (!content.ok()) return ApiError{content.error().status, "messages", ""};
    normalized["content"] = std::move(content).value();
  }
  if (message.contains("tool_calls") && !message["tool_calls"].is_null()) {
    ApiResult<Json> calls = ParseToolCalls(message["tool_calls"], where + ".tool_calls", limits);
    if (!calls.ok()) return ApiError{calls.error().status, "messages", ""};
    normalized["tool_calls"] = std::move(calls).value();
  }
  return normalized;
}

void ReadMessages(FieldReader& reader, const RequestLimits& limits, ChatInput* input) {
  const Json* value = reader.Find("messages");
  if (value == nullptr) return reader.Require(false, "messages", "messages is required");
  if (!value->is_array()) {
    return reader.Require(false, "messages", "messages must be a list, got " + JsonTypeName(*value));
  }
  if (value->empty()) return reader.Require(false, "messages", "messages must not be empty");
  if (value->size() > limits.max_messages) {
    return reader.Require(false, "messages", TooMany("messages", value->size(), limits.max_messages));
  }
  bool calls_tools = false;
  for (size_t i = 0; i < value->size(); ++i) {
    ApiResult<Json> message = ParseMessage((*value)[i], i, limits);
    if (!message.ok()) return reader.Fail(message.error());
    calls_tools |= message->contains("tool_calls") && !(*message)["tool_calls"].is_null();
    input->messages.push_back(std::move(message).value());
  }
  if (!calls_tools) return;
  input->string_argument_messages = input->messages;
  for (size_t i = 0; i < value->size(); ++i) {
    const Json& message = (*value)[i];
    if (message.contains("tool_calls")) input->string_argument_messages[i]["tool_calls"] = message["tool_calls"];
  }
}

// {"type": "function", "function": {"name", "description"?, "parameters"?, "strict"?}};
// an absent type means "function" (as vLLM reads it). The error, if any.
std::optional<std::string> ToolError(const Json& tool, size_t index) {
  const std::string where = "tools[" + std::to_string(index) + "]";
  if (!tool.is_object()) return where + " must be an object";
  if (tool.contains("type") && tool["type"] != "function") return where + ".type must be \"function\"";
  if (!tool.contains("function") || !tool["function"].is_object()) return where + ".function must be an object";
  const Json& function = tool["function"];
  if (!function.contains("name") || !function["name"].is_string() || function["name"].get_ref<const std::string&>().empty()) {
    return where + ".function.name must be a non-empty string";
  }
  auto wrong = [&](const char* key, bool ok) { return function.contains(key) && !function[key].is_null() && !ok; };
  if (wrong("description", function.contains("description") && function["description"].is_string())) {
    return where + ".function.description must be a string";
  }
  if (wrong("parameters", function.contains("parameters") && function["parameters"].is_object())) {
    return where + ".function.parameters must be an object (a JSON schema)";
  }
  if (wrong("strict", function.contains("strict") && function["strict"].is_boolean())) {
    return where + ".function.strict must be a boolean";
  }
  return std::nullopt;
}

void ReadTools(FieldReader& reader, const RequestLimits& limits, Json* tools) {
  const Json* value = reader.Find("tools");
  if (value == nullptr) return;
  if (!value->is_array()) return reader.Require(false, "tools", "tools must be a list, got " + JsonTypeName(*value));
  if (value->size() > limits.max_tools) {
    return reader.Require(false, "tools", TooMany("tools", value->size(), limits.max_tools));
  }
  for (size_t i = 0; i < value->size(); ++i) {
    if (std::optional<std::string> error = ToolError((*value)[i], i)) return reader.Require(false, "tools", *error);
  }
  *tools = *value;
}

}  // namespace

void ReadChatInput(FieldReader& reader, const RequestLimits& limits, ChatInput* input) {
  ReadMessages(reader, limits, input);
  ReadTools(reader, limits, &input->tools);
  reader.Bool("add_generation_prompt", &input->add_generation_prompt);
  reader.Bool("continue_final_message", &input->continue_final_message);
  // As vLLM: an open final message and a new assistant turn contradict each other.
  reader.Require(!(input->continue_final_message && input->add_generation_prompt), "continue_final_message",
                 "continue_final_message and add_generation_prompt cannot both be true");
  if (const Json* kwargs = reader.Find("chat_template_kwargs")) {
    reader.Require(kwargs->is_object(), "chat_template_kwargs",
                   "chat_template_kwargs must be an object, got " + JsonTypeName(*kwargs));
    if (kwargs->is_object()) input->chat_template_kwargs = *kwargs;
  }
}

}  // namespace surge::api
