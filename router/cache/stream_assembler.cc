#include "router/cache/stream_assembler.h"

#include <vector>

#include "base/json_access.h"

namespace surge::router {
namespace {

// A chunk nests a few levels (choices, delta, tool_calls, function, logprobs); deeper is not an
// answer to store, and must not reach the recursive copies below.
constexpr int kMaxChunkDepth = 32;
// More choices or tool calls than this in one answer is not one to store.
constexpr int64_t kMaxIndex = 1 << 16;

// A choice's or tool call's "index" (absent: 0); -1 when it is not an integer in range.
int64_t IndexOf(const OrderedJson& value) {
  const auto it = value.find("index");
  if (it == value.end() || it->is_null()) return 0;
  StatusOr<int64_t> index = json::ToInt64(*it, 0, kMaxIndex);
  return index.ok() ? *index : -1;
}

// Appends `more` to `merged`: arrays concatenated key by key (completion logprobs: tokens,
// token_logprobs, top_logprobs, text_offset; chat logprobs: content), the rest kept.
void MergeLogprobs(const OrderedJson& more, OrderedJson* merged) {
  if (!more.is_object()) return;
  if (merged->is_null()) {
    *merged = more;
    return;
  }
  for (const auto& [key, value] : more.items()) {
    OrderedJson& into = (*merged)[key];
    if (!value.is_array() || !into.is_array()) continue;
    for (const OrderedJson& item : value) into.push_back(item);
  }
}

void MergeToolCall(const OrderedJson& delta, OrderedJson* call) {
  if (delta.contains("id") && delta["id"].is_string()) (*call)["id"] = delta["id"];
  (*call)["type"] = "function";
  const OrderedJson function = delta.value("function", OrderedJson::object());
  OrderedJson& into = (*call)["function"];
  if (!into.is_object()) into = {{"name", ""}, {"arguments", ""}};
  if (function.contains("name") && function["name"].is_string()) into["name"] = function["name"];
  if (function.contains("arguments") && function["arguments"].is_string()) {
    into["arguments"] = into["arguments"].get<std::string>() + function["arguments"].get<std::string>();
  }
}

}  // namespace

void StreamAssembler::Feed(std::string_view bytes) {
  if (failed_) return;
  num_bytes_ += bytes.size();
  if (num_bytes_ > max_bytes_) {
    failed_ = true;
    return;
  }
  std::vector<net::SseEvent> events;
  if (!parser_.Feed(bytes, &events).ok()) failed_ = true;
  for (const net::SseEvent& event : events) OnEvent(event.data);
}

void StreamAssembler::OnEvent(const std::string& data) {
  if (failed_ || data.empty()) return;
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  StatusOr<OrderedJson> parsed = json::Parse(data, "stream chunk", kMaxChunkDepth);
  const OrderedJson chunk = parsed.ok() ? std::move(*parsed) : OrderedJson();
  if (!chunk.is_object() || chunk.contains("error") || done_) {
    failed_ = true;  // an error event (the engine's or the router's mid-stream one)
    return;
  }
  try {
    OnChunk(chunk);
  } catch (const nlohmann::json::exception&) {
    failed_ = true;  // a field of an unexpected type: not an answer to store
  }
}

void StreamAssembler::OnChunk(const OrderedJson& chunk) {
  if (envelope_.is_null()) {
    envelope_ = chunk;
    chat_ = chunk.value("object", "") == "chat.completion.chunk";
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) usage_ = chunk["usage"];
  for (const OrderedJson& choice : chunk.value("choices", OrderedJson::array())) OnChoice(choice);
}

void StreamAssembler::OnChoice(const OrderedJson& delta_choice) {
  if (!delta_choice.is_object()) return;
  const int64_t index = IndexOf(delta_choice);
  if (index < 0) {
    failed_ = true;  // not an answer to store
    return;
  }
  Choice& choice = choices_[index];
  const OrderedJson delta = chat_ ? delta_choice.value("delta", OrderedJson::object()) : delta_choice;
  const char* text_field = chat_ ? "content" : "text";
  if (delta.contains(text_field) && delta[text_field].is_string()) choice.text += delta[text_field].get<std::string>();
  if (delta.contains("reasoning_content") && delta["reasoning_content"].is_string()) {
    choice.reasoning = choice.reasoning.value_or("") + delta["reasoning_content"].get<std::string>();
  }
  for (const OrderedJson& call : delta.value("tool_calls", OrderedJson::array())) {
    const int64_t call_index = call.is_object() ? IndexOf(call) : -1;
    if (call_index < 0) {
      failed_ = true;
      return;
    }
    MergeToolCall(call, &choice.tool_calls[call_index]);
  }
  MergeLogprobs(delta_choice.value("logprobs", OrderedJson()), &choice.logprobs);
  const OrderedJson finish = delta_choice.value("finish_reason", OrderedJson());
  if (!finish.is_null()) choice.finish_reason = finish;
}

// The choice as a whole answer holds it (api/chat_response.h's message: content null when
// empty beside reasoning or tool calls).
OrderedJson StreamAssembler::WholeChoice(int64_t index, const Choice& choice) const {
  if (!chat_) {
    return {{"index", index}, {"text", choice.text}, {"logprobs", choice.logprobs},
            {"finish_reason", choice.finish_reason}};
  }
  const bool calls = !choice.tool_calls.empty();
  const bool nullable = calls || choice.reasoning.has_value();
  OrderedJson message = {{"role", "assistant"},
                         {"content", nullable && choice.text.empty() ? OrderedJson() : OrderedJson(choice.text)}};
  if (choice.reasoning) message["reasoning_content"] = choice.reasoning->empty() ? OrderedJson() : OrderedJson(*choice.reasoning);
  if (calls) {
    message["tool_calls"] = OrderedJson::array();
    for (const auto& [unused, call] : choice.tool_calls) message["tool_calls"].push_back(call);
  }
  message["refusal"] = nullptr;
  return {{"index", index}, {"message", std::move(message)}, {"logprobs", choice.logprobs},
          {"finish_reason", choice.finish_reason}};
}

std::optional<std::string> StreamAssembler::Finish() {
  if (failed_ || !done_ || choices_.empty()) return std::nullopt;
  OrderedJson choices = OrderedJson::array();
  for (const auto& [index, choice] : choices_) choices.push_back(WholeChoice(index, choice));
  return EntryFromParts(envelope_, std::move(choices), usage_);
}

}  // namespace surge::router
