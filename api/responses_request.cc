#include "api/responses_request.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/utf8.h"

namespace surge::api {
namespace {

// Fields passed to the chat request as they are (its parser checks them under the same
// names): the sampling controls and vLLM's extensions both APIs share.
constexpr std::string_view kChatFields[] = {"temperature", "top_p", "parallel_tool_calls", "stream", "seed", "top_k",
                                            "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty",
                                            "stop", "priority", "timeout"};

// An error naming the first key of `object` outside `allowed`, or nullopt.
std::optional<std::string> UnknownKey(const Json& object, std::initializer_list<std::string_view> allowed,
                                      const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_null() || std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    return where + "." + key + " is not a supported field";
  }
  return std::nullopt;
}

bool IsString(const Json& object, const char* key) { return object.contains(key) && object[key].is_string(); }

// input_text / output_text parts -> chat text parts.
std::optional<std::string> ConvertContent(const Json& content, const std::string& where, Json* out) {
  if (content.is_string()) {
    *out = content;
    return std::nullopt;
  }
  if (!content.is_array()) return where + " must be a string or a list of content parts";
  *out = Json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!part.is_object() || !IsString(part, "type")) return at + " must be an object with a type";
    const std::string type = part["type"];
    if (type != "input_text" && type != "output_text") {
      return at + ".type '" + type + "' is not supported (input_text and output_text are)";
    }
    if (!IsString(part, "text")) return at + ".text must be a string";
    if (auto error = UnknownKey(part, {"type", "text", "annotations", "logprobs"}, at)) return error;
    out->push_back({{"type", "text"}, {"text", part["text"]}});
  }
  return std::nullopt;
}

std::optional<std::string> AppendMessage(const Json& item, const std::string& where, Json* messages) {
  if (auto error = UnknownKey(item, {"type", "role", "content", "id", "status"}, where)) return error;
  if (!IsString(item, "role")) return where + ".role must be a string";
  Json message = {{"role", item["role"]}};
  if (!item.contains("content")) return where + ".content is missing";
  if (auto error = ConvertContent(item["content"], where + ".content", &message["content"])) return error;
  messages->push_back(std::move(message));
  return std::nullopt;
}

// Calls in a row form one assistant turn, as chat templates expect them.
std::optional<std::string> AppendFunctionCall(const Json& item, const std::string& where, Json* messages) {
  if (auto error = UnknownKey(item, {"type", "call_id", "name", "arguments", "id", "status"}, where)) return error;
  for (const char* key : {"call_id", "name", "arguments"}) {
    if (!IsString(item, key)) return where + "." + key + " must be a string";
  }
  Json call = {{"id", item["call_id"]}, {"type", "function"},
               {"function", {{"name", item["name"]}, {"arguments", item["arguments"]}}}};
  if (messages->empty() || messages->back()["role"] != "assistant" || !messages->back().contains("tool_calls")) {
    messages->push_back({{"role", "assistant"}, {"tool_calls", Json::array()}});
  }
  messages->back()["tool_calls"].push_back(std::move(call));
  return std::nullopt;
}

std::optional<std::string> AppendInputItem(const Json& item, size_t index, Json* messages) {
  const std::string where = "input[" + std::to_string(index) + "]";
  if (!item.is_object()) return where + " must be an object";
  const std::string type = item.value("type", "message");
  if (type == "message") return AppendMessage(item, where, messages);
  if (type == "function_call") return AppendFunctionCall(item, where, messages);
  if (type == "function_call_output") {
    if (auto error = UnknownKey(item, {"type", "call_id", "output", "id", "status"}, where)) return error;
    if (!IsString(item, "call_id") || !IsString(item, "output")) return where + " needs call_id and output strings";
    messages->push_back({{"role", "tool"}, {"tool_call_id", item["call_id"]}, {"content", item["output"]}});
    return std::nullopt;
  }
  if (type == "reasoning") return std::nullopt;  // earlier thinking is not fed back
  return where + ".type '" + type + "' is not supported (message, function_call, function_call_output, reasoning are)";
}

void ReadInput(FieldReader& reader, const RequestLimits& limits, Json* messages) {
  *messages = Json::array();
  const Json* input = reader.Find("input");
  if (input == nullptr) return reader.Require(false, "input", "input is required");
  if (input->is_string()) return messages->push_back({{"role", "user"}, {"content", *input}});
  if (!input->is_array() || input->empty()) return reader.Require(false, "input", "input must be a string or a non-empty list");
  if (input->size() > limits.max_messages) {
    return reader.Require(false, "input", "input has " + std::to_string(input->size()) + " items, more than " +
                                              std::to_string(limits.max_messages));
  }
  for (size_t i = 0; i < input->size(); ++i) {
    if (auto error = AppendInputItem((*input)[i], i, messages)) return reader.Require(false, "input", *error);
  }
}

// {"type": "function", "name", "description"?, "parameters"?, "strict"?} -> the chat form.
void ReadTools(FieldReader& reader, Json* chat) {
  const Json* tools = reader.Find("tools");
  if (tools == nullptr) return;
  if (!tools->is_array()) return reader.Require(false, "tools", "tools must be a list");
  Json converted = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!tool.is_object() || tool.value("type", "") != "function") {
      return reader.Require(false, "tools", where + ".type must be \"function\" (the only tools this server runs)");
    }
    if (auto error = UnknownKey(tool, {"type", "name", "description", "parameters", "strict"}, where)) {
      return reader.Require(false, "tools", *error);
    }
    Json function = tool;
    function.erase("type");
    converted.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  (*chat)["tools"] = std::move(converted);
}

void ReadToolChoice(FieldReader& reader, Json* chat) {
  const Json* choice = reader.Find("tool_choice");
  if (choice == nullptr) return;
  if (choice->is_object() && choice->value("type", "") == "function" && IsString(*choice, "name")) {
    (*chat)["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*choice)["name"]}}}};
    return reader.Require(!UnknownKey(*choice, {"type", "name"}, "tool_choice"), "tool_choice",
                          "tool_choice may hold only type and name");
  }
  if (choice->is_string()) return void((*chat)["tool_choice"] = *choice);  // the chat parser checks the word
  reader.Require(false, "tool_choice",
                 "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": ...}");
}

// text.format -> response_format: {"type": "json_schema", "name", "schema", "strict"} moves
// its fields into chat's "json_schema" object; the schema is required.
void ReadTextFormat(FieldReader& reader, Json* chat) {
  const Json* text = reader.Find("text");
  if (text == nullptr) return;
  if (!text->is_object()) return reader.Require(false, "text", "text must be an object");
  if (auto error = UnknownKey(*text, {"format"}, "text")) return reader.Require(false, "text", *error);
  if (!text->contains("format") || (*text)["format"].is_null()) return;
  const Json& format = (*text)["format"];
  if (!format.is_object() || !IsString(format, "type")) return reader.Require(false, "text.format", "text.format must be an object with a type");
  if (format["type"] != "json_schema") return void((*chat)["response_format"] = format);
  // The Responses API requires the schema (chat's response_format without one means any
  // object; here that answered 200 to what OpenAI refuses).
  if (!format.contains("schema") || format["schema"].is_null()) {
    return reader.Require(false, "text.format.schema", "text.format.schema is required when text.format.type is json_schema");
  }
  Json schema = format;
  schema.erase("type");
  (*chat)["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
}

// Fields with no effect here are refused unless they ask for what happens anyway.
void RefuseUnsupported(FieldReader& reader) {
  if (const Json* truncation = reader.Find("truncation")) {
    reader.Require(*truncation == "disabled", "truncation",
                   "truncation must be \"disabled\": an input past the context is an error, never cut");
  }
  if (const Json* reasoning = reader.Find("reasoning")) {
    reader.Require(reasoning->is_object() && reasoning->value("effort", Json()).is_null() &&
                       reasoning->value("summary", Json()).is_null(),
                   "reasoning", "reasoning.effort and reasoning.summary are not supported by this server");
  }
  if (const Json* include = reader.Find("include")) {
    reader.Require(include->is_array() && include->empty(), "include", "include is not supported by this server");
  }
  if (const Json* background = reader.Find("background")) {
    reader.Require(*background == false, "background", "background responses are not supported by this server");
  }
}

Json Echo(const FieldReader& reader, const ResponsesRequest& request) {
  auto field = [&](const char* name, Json otherwise) {
    const Json* value = reader.Find(name);
    return value != nullptr ? *value : otherwise;
  };
  return Json{{"instructions", field("instructions", nullptr)},
              {"max_output_tokens", field("max_output_tokens", nullptr)},
              {"metadata", field("metadata", Json::object())},
              {"parallel_tool_calls", field("parallel_tool_calls", true)},
              {"previous_response_id", field("previous_response_id", nullptr)},
              {"temperature", field("temperature", 1.0)},
              {"top_p", field("top_p", 1.0)},
              {"tool_choice", field("tool_choice", "auto")},
              {"tools", field("tools", Json::array())},
              {"text", field("text", Json{{"format", {{"type", "text"}}}})},
              {"truncation", "disabled"},
              {"store", request.store}};
}

}  // namespace

ApiResult<ResponsesRequest> ParseResponsesRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  ResponsesRequest request;
  FieldReader reader(*object);
  request.chat = Json::object();
  std::string model;
  if (reader.String("model", &model)) request.chat["model"] = model;
  ReadInput(reader, limits, &request.input_messages);
  reader.String("instructions", &request.instructions);
  int64_t max_output_tokens = 0;
  if (reader.IntInRange("max_output_tokens", 1, INT32_MAX, &max_output_tokens)) {
    request.chat["max_completion_tokens"] = max_output_tokens;
  }
  for (std::string_view name : kChatFields) {
    if (const Json* value = reader.Find(name)) request.chat[std::string(name)] = *value;
  }
  reader.Bool("stream", &request.stream);
  reader.Bool("store", &request.store);
  reader.String("previous_response_id", &request.previous_response_id);
  ReadTools(reader, &request.chat);
  ReadToolChoice(reader, &request.chat);
  ReadTextFormat(reader, &request.chat);
  RefuseUnsupported(reader);
  if (const Json* metadata = reader.Find("metadata")) reader.Require(metadata->is_object(), "metadata", "metadata must be an object");
  request.echo = Echo(reader, request);
  reader.RefuseUnread();
  if (reader.failed()) return reader.error();
  return request;
}

ApiResult<ChatCompletionRequest> ToChatRequest(const ResponsesRequest& request, const Json& history,
                                               const RequestLimits& limits) {
  Json chat = request.chat;
  Json& messages = chat["messages"] = Json::array();
  if (!request.instructions.empty()) messages.push_back({{"role", "system"}, {"content", request.instructions}});
  for (const Json& message : history) messages.push_back(message);
  for (const Json& message : request.input_messages) messages.push_back(message);
  ApiResult<ChatCompletionRequest> parsed = ChatCompletionRequestFromJson(chat, limits);
  if (parsed.ok()) return parsed;
  // In the Responses API's own words (the message indices still count chat messages).
  ApiError error = parsed.error();
  std::string message(error.status.message());
  for (const auto& [chat_name, name] : {std::pair<std::string_view, std::string_view>{"messages", "input"},
                                        {"max_completion_tokens", "max_output_tokens"},
                                        {"response_format", "text.format"}}) {
    if (error.param.starts_with(chat_name)) error.param = name;
    message = ReplaceAll(message, chat_name, name);
  }
  error.status = Status(error.status.code(), std::move(message));
  return error;
}

Json ConversationAfter(const Json& history, const ResponsesRequest& request, const Json& output_items) {
  Json messages = history;
  for (const Json& message : request.input_messages) messages.push_back(message);
  Json answer = {{"role", "assistant"}, {"content", ""}};
  for (const Json& item : output_items) {
    if (item["type"] == "message") {
      for (const Json& part : item["content"]) answer["content"] = answer["content"].get<std::string>() + part["text"].get<std::string>();
    } else if (item["type"] == "function_call") {
      answer["tool_calls"].push_back({{"id", item["call_id"]}, {"type", "function"},
                                      {"function", {{"name", item["name"]}, {"arguments", item["arguments"]}}}});
    }
  }
  messages.push_back(std::move(answer));
  return messages;
}

}  // namespace surge::api
