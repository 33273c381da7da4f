// The Responses API's answer (POST /v1/responses), built from one chat choice as it
// arrives: the output items (reasoning, message, function calls), the response object,
// and, for streams, its typed events in OpenAI's order:
//   response.created, response.in_progress,
//   per item: response.output_item.added, [response.content_part.added],
//     deltas (response.output_text.delta / response.reasoning_text.delta /
//     response.function_call_arguments.delta), their .done, [content_part.done],
//     response.output_item.done;
//   response.completed (or response.incomplete, response.failed).
// Every event carries "type" and a "sequence_number" counting from 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/response_common.h"
#include "base/status.h"

namespace surge::api {

struct ResponsesOutputItem {
  enum class Kind { kReasoning, kMessage, kFunctionCall };
  Kind kind = Kind::kMessage;
  std::string id;         // "rs_...", "msg_...", "fc_..."
  std::string text;       // reasoning or message text; a call's arguments (JSON text)
  std::string call_id;    // function calls: the "call_..." id a function_call_output names
  std::string name;       // function calls
};

class ResponsesBuilder {
 public:
  // `echo`: the request fields the response object repeats (instructions, tools, ...).
  ResponsesBuilder(std::string id, int64_t created_at, std::string model, Json echo);

  // The first events of a stream.
  std::vector<Json> Start();
  // One delta of the choice (text, reasoning, tool calls: a call with an id opens it, one
  // without continues its arguments). Returns its events.
  std::vector<Json> Add(const ChoiceOutput& delta);
  // The end: open items close; the response is completed, incomplete (finish_reason
  // "length": max_output_tokens) or failed (`error`). Returns the closing events.
  std::vector<Json> Finish(const std::optional<std::string>& finish_reason, const Usage& usage,
                           const Status& error);

  // The response object as it stands (after Finish: final).
  Json Response() const;
  const std::vector<ResponsesOutputItem>& output() const { return output_; }
  const std::string& id() const { return id_; }

 private:
  Json Event(const char* type, Json fields);
  // Opens an item of `kind` unless the last one is an open one of that kind.
  void Open(ResponsesOutputItem::Kind kind, std::vector<Json>* events, const ToolCallOutput* call = nullptr);
  void CloseOpen(std::vector<Json>* events);
  void AppendText(const std::string& text, std::vector<Json>* events);

  const std::string id_;
  const int64_t created_at_;
  const std::string model_;
  const Json echo_;
  std::vector<ResponsesOutputItem> output_;
  bool last_open_ = false;  // output_.back() is still receiving deltas
  int64_t sequence_number_ = 0;
  std::string status_ = "in_progress";
  Json incomplete_details_;  // null, or {"reason": "max_output_tokens"}
  Json error_;               // null, or {"code", "message"}
  Json usage_;               // null until Finish
};

// {"type": "message", "id", "status", "role": "assistant", "content": [{"type":
// "output_text", "text", "annotations": []}]}, and the like for the other kinds.
Json ResponsesOutputItemJson(const ResponsesOutputItem& item, const char* status);

}  // namespace surge::api
