#include "router/cache/cached_response.h"

#include <chrono>

#include "api/response_common.h"

namespace surge::router {
namespace {

// Engine text is valid UTF-8, but an entry may come from Redis: never throw on a bad byte.
std::string Text(const OrderedJson& value) { return value.dump(-1, ' ', false, OrderedJson::error_handler_t::replace); }

constexpr char kChatObject[] = "chat.completion";
constexpr char kChatChunkObject[] = "chat.completion.chunk";
constexpr char kCompletionObject[] = "text_completion";

bool ChoicesCompleted(const OrderedJson& choices) {
  if (!choices.is_array() || choices.empty()) return false;
  for (const OrderedJson& choice : choices) {
    if (!choice.is_object() || !IsCompletedFinishReason(choice.value("finish_reason", OrderedJson()))) return false;
  }
  return true;
}

// id, object, created, model[, system_fingerprint]: the envelope every answer and chunk opens with.
OrderedJson Envelope(const OrderedJson& entry, const ReplayMeta& meta, const char* object) {
  OrderedJson out = {{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", entry["model"]}};
  if (entry.contains("system_fingerprint")) out["system_fingerprint"] = entry["system_fingerprint"];
  return out;
}

std::string Chunk(const CachedResponse& cached, const ReplayMeta& meta, OrderedJson choice, bool include_usage) {
  OrderedJson body = Envelope(cached.entry, meta, cached.chat() ? kChatChunkObject : kCompletionObject);
  body["choices"] = OrderedJson::array({std::move(choice)});
  if (include_usage) body["usage"] = nullptr;
  return Text(body);
}

OrderedJson ChatChoiceChunk(int64_t index, OrderedJson delta, OrderedJson logprobs, OrderedJson finish_reason) {
  return {{"index", index}, {"delta", std::move(delta)}, {"logprobs", std::move(logprobs)},
          {"finish_reason", std::move(finish_reason)}};
}

// One choice as chat chunks: role, the text (and reasoning), each tool call (its head with
// id and name, then its arguments, as OpenAI streams them), the finish.
void AppendChatChoice(const CachedResponse& cached, const ReplayMeta& meta, const OrderedJson& choice,
                      bool include_usage, std::vector<std::string>* out) {
  const int64_t index = choice.value("index", 0);
  const OrderedJson& message = choice["message"];
  auto chunk = [&](OrderedJson delta, OrderedJson logprobs = nullptr, OrderedJson finish = nullptr) {
    out->push_back(Chunk(cached, meta, ChatChoiceChunk(index, std::move(delta), std::move(logprobs), std::move(finish)),
                         include_usage));
  };
  chunk({{"role", "assistant"}, {"content", ""}});
  OrderedJson delta = OrderedJson::object();
  const OrderedJson reasoning = message.value("reasoning_content", OrderedJson());
  const OrderedJson content = message.value("content", OrderedJson());
  if (reasoning.is_string() && !reasoning.get<std::string>().empty()) delta["reasoning_content"] = reasoning;
  if (content.is_string() && !content.get<std::string>().empty()) delta["content"] = content;
  const OrderedJson logprobs = choice.value("logprobs", OrderedJson());
  if (!delta.empty() || !logprobs.is_null()) chunk(std::move(delta), logprobs);
  const OrderedJson calls = message.value("tool_calls", OrderedJson::array());
  for (size_t call_index = 0; call_index < calls.size(); ++call_index) {
    const OrderedJson& call = calls[call_index];
    const OrderedJson function = call.value("function", OrderedJson::object());
    chunk({{"tool_calls", OrderedJson::array({{{"index", call_index}, {"id", call.value("id", "")}, {"type", "function"},
                                              {"function", {{"name", function.value("name", "")}, {"arguments", ""}}}}})}});
    chunk({{"tool_calls", OrderedJson::array(
                              {{{"index", call_index}, {"function", {{"arguments", function.value("arguments", "")}}}}})}});
  }
  chunk(OrderedJson::object(), nullptr, choice["finish_reason"]);
}

// One choice as completion chunks: its text (with its logprobs), then the finish.
void AppendCompletionChoice(const CachedResponse& cached, const ReplayMeta& meta, const OrderedJson& choice,
                            bool include_usage, std::vector<std::string>* out) {
  const int64_t index = choice.value("index", 0);
  auto chunk = [&](OrderedJson text, OrderedJson logprobs, OrderedJson finish) {
    OrderedJson body = {{"index", index}, {"text", std::move(text)}, {"logprobs", std::move(logprobs)},
                        {"finish_reason", std::move(finish)}};
    out->push_back(Chunk(cached, meta, std::move(body), include_usage));
  };
  chunk(choice.value("text", ""), choice.value("logprobs", OrderedJson()), nullptr);
  chunk("", nullptr, choice["finish_reason"]);
}

}  // namespace

bool IsCompletedFinishReason(const OrderedJson& finish_reason) {
  if (!finish_reason.is_string()) return false;
  const std::string& reason = finish_reason.get_ref<const std::string&>();
  return reason == "stop" || reason == "length" || reason == "tool_calls" || reason == "function_call" ||
         reason == "content_filter";
}

std::optional<std::string> EntryFromParts(const OrderedJson& envelope, OrderedJson choices, OrderedJson usage) {
  const OrderedJson object = envelope.value("object", OrderedJson());
  if (object != kChatObject && object != kChatChunkObject && object != kCompletionObject) return std::nullopt;
  if (!ChoicesCompleted(choices)) return std::nullopt;
  const bool chat = object != kCompletionObject;
  OrderedJson entry = {{"object", chat ? kChatObject : kCompletionObject}, {"model", envelope.value("model", "")}};
  if (envelope.contains("system_fingerprint")) entry["system_fingerprint"] = envelope["system_fingerprint"];
  entry["choices"] = std::move(choices);
  entry["usage"] = usage.is_object() ? std::move(usage) : OrderedJson();
  return Text(entry);
}

std::optional<std::string> EntryFromWholeResponse(std::string_view body) {
  OrderedJson response = OrderedJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!response.is_object() || response.value("object", OrderedJson()) == kChatChunkObject) return std::nullopt;
  try {
    OrderedJson choices = response.value("choices", OrderedJson());
    return EntryFromParts(response, std::move(choices), response.value("usage", OrderedJson()));
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a field of an unexpected type: not an answer to store
  }
}

ReplayMeta NewReplayMeta(std::string_view entry_object) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return {api::NewResponseId(entry_object == kCompletionObject ? "cmpl-" : "chatcmpl-"),
          std::chrono::duration_cast<std::chrono::seconds>(now).count()};
}

bool CachedResponse::chat() const { return entry.value("object", "") == kChatObject; }

std::optional<CachedResponse> ParseCachedResponse(std::string_view text) {
  CachedResponse cached{OrderedJson::parse(text, nullptr, /*allow_exceptions=*/false)};
  if (!cached.entry.is_object() || !cached.entry.contains("choices") || !cached.entry["choices"].is_array()) {
    return std::nullopt;  // not an entry this router wrote: a miss
  }
  return cached;
}

OrderedJson CachedUsage(const OrderedJson& usage) {
  OrderedJson out = usage;
  out["prompt_tokens_details"]["cached_tokens"] = usage.value("prompt_tokens", 0);
  return out;
}

std::string ReplayWhole(const CachedResponse& cached, const ReplayMeta& meta) {
  OrderedJson body = Envelope(cached.entry, meta, cached.chat() ? kChatObject : kCompletionObject);
  body["choices"] = cached.entry["choices"];
  body["usage"] = CachedUsage(cached.entry["usage"]);
  return Text(body);
}

std::vector<std::string> ReplayStream(const CachedResponse& cached, const ReplayMeta& meta, bool include_usage) {
  std::vector<std::string> events;
  for (const OrderedJson& choice : cached.entry["choices"]) {
    if (cached.chat()) AppendChatChoice(cached, meta, choice, include_usage, &events);
    else AppendCompletionChoice(cached, meta, choice, include_usage, &events);
  }
  if (include_usage) {
    OrderedJson body = Envelope(cached.entry, meta, cached.chat() ? kChatChunkObject : kCompletionObject);
    body["choices"] = OrderedJson::array();
    body["usage"] = CachedUsage(cached.entry["usage"]);
    events.push_back(Text(body));
  }
  events.emplace_back(api::kStreamDone);
  return events;
}

}  // namespace surge::router
