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
  return Json{{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model}};
}

Json LogprobsOrNull(const ChoiceOutput& choice) {
  return choice.logprobs ? ChatLogprobsJson(*choice.logprobs) : Json();
}

Json TextOrNull(const std::string& text) { return text.empty() ? Json() : Json(text); }

Json Message(const ChoiceOutput& choice) {
  if (!choice.reasoning) return {{"role", "assistant"}, {"content", choice.text}, {"refusal", nullptr}};
  return {{"role", "assistant"},
          {"content", TextOrNull(choice.text)},
          {"reasoning_content", TextOrNull(*choice.reasoning)},
          {"refusal", nullptr}};
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
                     {"bytes", Bytes(alternative.token)}});
    }
    content.push_back({{"token", info.token},
                       {"logprob", ClampLogprob(info.logprob)},
                       {"bytes", Bytes(info.token)},
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

std::string ChatUsageChunkJson(const ResponseMeta& meta, const Usage& usage) {
  Json body = Envelope(meta, kChunkObject);
  body["choices"] = Json::array();
  body["usage"] = UsageJson(usage);
  return Dump(body);
}

}  // namespace surge::api
