#include "api/responses_response.h"

#include <utility>

namespace surge::api {
namespace {

using Kind = ResponsesOutputItem::Kind;

Json OutputTextPart(const std::string& text) {
  return Json{{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
}

Json ReasoningPart(const std::string& text) { return Json{{"type", "reasoning_text"}, {"text", text}}; }

// {"input_tokens", "input_tokens_details": {"cached_tokens"}, "output_tokens",
//  "output_tokens_details": {"reasoning_tokens"}, "total_tokens"}
Json ResponsesUsageJson(const Usage& usage) {
  return Json{{"input_tokens", usage.prompt_tokens},
              {"input_tokens_details", {{"cached_tokens", usage.cached_tokens}}},
              {"output_tokens", usage.completion_tokens},
              {"output_tokens_details", {{"reasoning_tokens", usage.reasoning_tokens.value_or(0)}}},
              {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

}  // namespace

Json ResponsesOutputItemJson(const ResponsesOutputItem& item, const char* status) {
  switch (item.kind) {
    case Kind::kReasoning:
      return Json{{"type", "reasoning"}, {"id", item.id}, {"summary", Json::array()},
                  {"content", Json::array({ReasoningPart(item.text)})}, {"status", status}};
    case Kind::kFunctionCall:
      return Json{{"type", "function_call"}, {"id", item.id}, {"call_id", item.call_id},
                  {"name", item.name}, {"arguments", item.text}, {"status", status}};
    case Kind::kMessage: break;
  }
  Json content = Json::array();
  if (std::string_view(status) == "completed" || !item.text.empty()) content.push_back(OutputTextPart(item.text));
  return Json{{"type", "message"}, {"id", item.id}, {"status", status}, {"role", "assistant"},
              {"content", std::move(content)}};
}

ResponsesBuilder::ResponsesBuilder(std::string id, int64_t created_at, std::string model, Json echo)
    : id_(std::move(id)), created_at_(created_at), model_(std::move(model)), echo_(std::move(echo)) {}

Json ResponsesBuilder::Event(const char* type, Json fields) {
  fields["type"] = type;
  fields["sequence_number"] = sequence_number_++;
  return fields;
}

std::vector<Json> ResponsesBuilder::Start() {
  std::vector<Json> events;
  events.push_back(Event("response.created", {{"response", Response()}}));
  events.push_back(Event("response.in_progress", {{"response", Response()}}));
  return events;
}

void ResponsesBuilder::Open(Kind kind, std::vector<Json>* events, const ToolCallOutput* call) {
  if (last_open_ && output_.back().kind == kind && call == nullptr) return;
  CloseOpen(events);
  ResponsesOutputItem item;
  item.kind = kind;
  item.id = NewResponseId(kind == Kind::kReasoning ? "rs_" : kind == Kind::kMessage ? "msg_" : "fc_");
  if (call != nullptr) {
    item.call_id = call->id;
    item.name = call->name;
  }
  output_.push_back(std::move(item));
  last_open_ = true;
  const int64_t index = static_cast<int64_t>(output_.size()) - 1;
  events->push_back(Event("response.output_item.added",
                          {{"output_index", index}, {"item", ResponsesOutputItemJson(output_.back(), "in_progress")}}));
  if (kind == Kind::kFunctionCall) return;
  const Json part = kind == Kind::kMessage ? OutputTextPart("") : ReasoningPart("");
  events->push_back(Event("response.content_part.added", {{"item_id", output_.back().id}, {"output_index", index},
                                                           {"content_index", 0}, {"part", part}}));
}

void ResponsesBuilder::AppendText(const std::string& text, std::vector<Json>* events) {
  ResponsesOutputItem& item = output_.back();
  item.text += text;
  const int64_t index = static_cast<int64_t>(output_.size()) - 1;
  Json fields = {{"item_id", item.id}, {"output_index", index}, {"delta", text}};
  if (item.kind == Kind::kFunctionCall) return events->push_back(Event("response.function_call_arguments.delta", fields));
  fields["content_index"] = 0;
  if (item.kind == Kind::kMessage) fields["logprobs"] = Json::array();
  events->push_back(Event(item.kind == Kind::kMessage ? "response.output_text.delta" : "response.reasoning_text.delta",
                          std::move(fields)));
}

void ResponsesBuilder::CloseOpen(std::vector<Json>* events) {
  if (!last_open_) return;
  last_open_ = false;
  const ResponsesOutputItem& item = output_.back();
  const int64_t index = static_cast<int64_t>(output_.size()) - 1;
  const Json where = {{"item_id", item.id}, {"output_index", index}};
  if (item.kind == Kind::kFunctionCall) {
    Json done = where;
    done["arguments"] = item.text;
    events->push_back(Event("response.function_call_arguments.done", std::move(done)));
  } else {
    const bool message = item.kind == Kind::kMessage;
    Json done = where;
    done["content_index"] = 0;
    done["text"] = item.text;
    if (message) done["logprobs"] = Json::array();
    events->push_back(Event(message ? "response.output_text.done" : "response.reasoning_text.done", done));
    Json part = where;
    part["content_index"] = 0;
    part["part"] = message ? OutputTextPart(item.text) : ReasoningPart(item.text);
    events->push_back(Event("response.content_part.done", std::move(part)));
  }
  events->push_back(Event("response.output_item.done",
                          {{"output_index", index}, {"item", ResponsesOutputItemJson(item, "completed")}}));
}

std::vector<Json> ResponsesBuilder::Add(const ChoiceOutput& delta) {
  std::vector<Json> events;
  if (delta.reasoning && !delta.reasoning->empty()) {
    Open(Kind::kReasoning, &events);
    AppendText(*delta.reasoning, &events);
  }
  if (!delta.text.empty()) {
    Open(Kind::kMessage, &events);
    AppendText(delta.text, &events);
  }
  for (const ToolCallOutput& call : delta.tool_calls) {
    if (!call.id.empty()) Open(Kind::kFunctionCall, &events, &call);
    if (!call.arguments.empty()) AppendText(call.arguments, &events);
  }
  return events;
}

std::vector<Json> ResponsesBuilder::Finish(const std::optional<std::string>& finish_reason, const Usage& usage,
                                           const Status& error) {
  std::vector<Json> events;
  CloseOpen(&events);
  usage_ = ResponsesUsageJson(usage);
  if (!error.ok()) {
    status_ = "failed";
    const char* code = error.code() == StatusCode::kDeadlineExceeded ? "timeout_error" : "server_error";
    error_ = {{"code", code}, {"message", std::string(error.message())}};
    events.push_back(Event("response.failed", {{"response", Response()}}));
    return events;
  }
  if (finish_reason == "length") {
    status_ = "incomplete";
    incomplete_details_ = {{"reason", "max_output_tokens"}};
    events.push_back(Event("response.incomplete", {{"response", Response()}}));
    return events;
  }
  status_ = "completed";
  events.push_back(Event("response.completed", {{"response", Response()}}));
  return events;
}

Json ResponsesBuilder::Response() const {
  Json response = echo_.is_object() ? echo_ : Json::object();
  response["id"] = id_;
  response["object"] = "response";
  response["created_at"] = created_at_;
  response["model"] = model_;
  response["status"] = status_;
  response["error"] = error_;
  response["incomplete_details"] = incomplete_details_;
  Json output = Json::array();
  for (size_t i = 0; i < output_.size(); ++i) {
    const bool open = last_open_ && i + 1 == output_.size();
    output.push_back(ResponsesOutputItemJson(output_[i], open ? "in_progress" : "completed"));
  }
  response["output"] = std::move(output);
  response["usage"] = usage_;
  return response;
}

}  // namespace surge::api
