#include "api/completion_response.h"


namespace surge::api {
namespace {

constexpr char kObject[] = "text_completion";

Json ChoiceJson(const ChoiceOutput& choice) {
  Json logprobs = choice.logprobs ? CompletionLogprobsJson(*choice.logprobs, choice.text_offset) : Json();
  return Json{{"index", choice.index},
              {"text", choice.text},
              {"logprobs", std::move(logprobs)},
              {"finish_reason", choice.finish_reason ? Json(*choice.finish_reason) : Json()}};
}

Json Envelope(const ResponseMeta& meta) {
  Json envelope = {{"id", meta.id}, {"object", kObject}, {"created", meta.created}, {"model", meta.model}};
  if (!meta.service_tier.empty()) envelope["service_tier"] = meta.service_tier;
  return envelope;
}

}  // namespace

Json CompletionLogprobsJson(const std::vector<TokenLogprobInfo>& logprobs, int64_t text_offset) {
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(), offsets = Json::array();
  for (const TokenLogprobInfo& info : logprobs) {
    tokens.push_back(info.token);
    offsets.push_back(text_offset);
    text_offset += NumChars(info.token);
    if (!info.scored) {
      token_logprobs.push_back(nullptr);
      top.push_back(nullptr);
      continue;
    }
    token_logprobs.push_back(ClampLogprob(info.logprob));
    Json alternatives = Json::object();
    for (const TopLogprob& alternative : info.top) {
      alternatives[alternative.token] = ClampLogprob(alternative.logprob);
    }
    if (!alternatives.contains(info.token)) alternatives[info.token] = ClampLogprob(info.logprob);
    top.push_back(std::move(alternatives));
  }
  return Json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(token_logprobs)},
              {"top_logprobs", std::move(top)},
              {"text_offset", std::move(offsets)}};
}

std::string CompletionResponseJson(const ResponseMeta& meta, const std::vector<ChoiceOutput>& choices,
                                   const Usage& usage) {
  Json body = Envelope(meta);
  body["choices"] = Json::array();
  for (const ChoiceOutput& choice : choices) body["choices"].push_back(ChoiceJson(choice));
  body["usage"] = UsageJson(usage);
  return Dump(body);
}

std::string CompletionChunkJson(const ResponseMeta& meta, const ChoiceOutput& choice, bool include_usage) {
  Json body = Envelope(meta);
  body["choices"] = Json::array({ChoiceJson(choice)});
  if (include_usage) body["usage"] = nullptr;
  return Dump(body);
}

std::string CompletionUsageChunkJson(const ResponseMeta& meta, const Usage& usage) {
  Json body = Envelope(meta);
  body["choices"] = Json::array();
  body["usage"] = UsageJson(usage);
  return Dump(body);
}

}  // namespace surge::api
