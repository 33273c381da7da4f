#include "api/chat_response.h"

namespace surge::api {
namespace {

constexpr char kObject[] = "chat.completion";
constexpr char kChunkObject[] = "chat.completion.chunk";

Json Bytes(const std::string& text) {
  Json bytes = Json::array();
  for (char c : text) bytes.push_back(static_cast<uint8_t>(c));
  return bytes;
}

Json Envelope(const ResponseMeta& meta, const char* object) {
  Json envelope = {{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model}};
  if (!meta.service_tier.empty()) envelope["service_tier"] = meta.service_tier;
  return envelope;
}

Json LogprobsOrNull(const ChoiceOutput& choice) {
  return choice.logprobs ? ChatLogprobsJson(*choice.logprobs) : Json();
}

Json TextOrNull(const std::string& text) { return text.empty() ? Json() : Json(text); }

Json ToolCallsJson(const std::vector<ToolCallOutput>& calls) {
  Json json = Json::array();
  for (const ToolCallOutput& call : calls) {
    json.push_back({{"id", call.id},
                    {"type", "function"},
                    {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return json;
}

// content is null when empty beside reasoning or tool calls (OpenAI: no text, only calls).
Json Message(const ChoiceOutput& choice) {
  const bool calls = !choice.tool_calls.empty();
  Json message = {{"role", "assistant"}, {"content", choice.reasoning || calls ? TextOrNull(choice.text) : Json(choice.text)}};
  if (choice.reasoning) message["reasoning_content"] = TextOrNull(*choice.reasoning);
  if (calls) message["tool_calls"] = ToolCallsJson(choice.tool_calls);
  message["refusal"] = nullptr;
  return message;
}

Json FinishOrNull(const ChoiceOutput& choice) {
  return choice.finish_reason ? Json(*choice.finish_reason) : Json();
}

std::string Chunk(const ResponseMeta& meta, Json choice, bool include_usage) {
  Json body = Envelope(meta, kChunkObject);
  body["choices"] = Json::array({std::move(choice)});
  if (include_usage) body["usage"] = nullptr;
  return Dump(body);
}

}  // namespace

Json ChatLogprobsJson(const std::vector<TokenLogprobInfo>& logprobs) {
  Json content = Json::array();
  for (const TokenLogprobInfo& info : logprobs) {
    Json top = Json::array();
    for (const TopLogprob& alternative : info.top) {
      top.push_back({{"token", alternative.token},
                     {"logprob", ClampLogprob(alternative.logprob)},
                     {"bytes", Bytes(alternative.bytes)}});
    }
    content.push_back({{"token", info.token},
                       {"logprob", ClampLogprob(info.logprob)},
                       {"bytes", Bytes(info.bytes)},
                       {"top_logprobs", std::move(top)}});
  }
  return Json{{"content", std::move(content)}, {"refusal", nullptr}};
}

std::string ChatResponseJson(const ResponseMeta& meta, const std::vector<ChoiceOutput>& choices,
                             const Usage& usage) {
  Json body = Envelope(meta, kObject);
  body["choices"] = Json::array();
  for (const ChoiceOutput& choice : choices) {
    body["choices"].push_back({{"index", choice.index},
                               {"message", Message(choice)},
                               {"logprobs", LogprobsOrNull(choice)},
                               {"finish_reason", FinishOrNull(choice)}});
  }
  body["usage"] = UsageJson(usage);
  return Dump(body);
}

std::string ChatRoleChunkJson(const ResponseMeta& meta, int32_t index, bool include_usage) {
  Json choice = {{"index", index},
                 {"delta", {{"role", "assistant"}, {"content", ""}}},
                 {"logprobs", nullptr},
                 {"finish_reason", nullptr}};
  return Chunk(meta, std::move(choice), include_usage);
}

std::string ChatChunkJson(const ResponseMeta& meta, const ChoiceOutput& choice, bool include_usage) {
  Json delta = Json::object();
  if (choice.reasoning && !choice.reasoning->empty()) delta["reasoning_content"] = *choice.reasoning;
  if (!choice.text.empty()) delta["content"] = choice.text;
  Json out = {{"index", choice.index},
              {"delta", std::move(delta)},
              {"logprobs", LogprobsOrNull(choice)},
              {"finish_reason", FinishOrNull(choice)}};
  return Chunk(meta, std::move(out), include_usage);
}

std::vector<std::string> ChatChunksJson(const ResponseMeta& meta, const ChoiceOutput& choice, bool include_usage) {
  if (choice.tool_calls.empty()) return {ChatChunkJson(meta, choice, include_usage)};
  std::vector<std::string> chunks;
  ChoiceOutput head = choice;
  head.tool_calls.clear();
  head.finish_reason.reset();
  const bool head_news = !head.text.empty() || (head.reasoning && !head.reasoning->empty()) ||
                         (head.logprobs && !head.logprobs->empty());
  if (head_news) chunks.push_back(ChatChunkJson(meta, head, include_usage));
  auto chunk = [&](Json call, bool last) {
    Json out = {{"index", choice.index},
                {"delta", {{"tool_calls", Json::array({std::move(call)})}}},
                {"logprobs", nullptr},
                {"finish_reason", last ? FinishOrNull(choice) : Json()}};
    return Chunk(meta, std::move(out), include_usage);
  };
  for (size_t i = 0; i < choice.tool_calls.size(); ++i) {
    const ToolCallOutput& call = choice.tool_calls[i];
    const bool last = i + 1 == choice.tool_calls.size();
    if (!call.id.empty()) {
      chunks.push_back(chunk({{"index", call.index},
                              {"id", call.id},
                              {"type", "function"},
                              {"function", {{"name", call.name}, {"arguments", ""}}}},
                             last && call.arguments.empty()));
    }
    if (!call.arguments.empty() || call.id.empty()) {
      chunks.push_back(chunk({{"index", call.index}, {"function", {{"arguments", call.arguments}}}}, last));
    }
  }
  return chunks;
}

std::string ChatUsageChunkJson(const ResponseMeta& meta, const Usage& usage) {
  Json body = Envelope(meta, kChunkObject);
  body["choices"] = Json::array();
  body["usage"] = UsageJson(usage);
  return Dump(body);
}

}  // namespace surge::api
