#include "bench/request_builder.h"

#include <nlohmann/json.hpp>

namespace surge::bench {
namespace {

using Json = nlohmann::json;

void AddStreamFields(const RequestOptions& options, int64_t max_tokens, Json& body) {
  if (!options.model.empty() && !body.contains("model")) body["model"] = options.model;
  if (max_tokens > 0) {
    body.erase("max_completion_tokens");
    body["max_tokens"] = max_tokens;
  }
  if (options.ignore_eos && max_tokens > 0) body["ignore_eos"] = true;
  if (options.temperature && !body.contains("temperature")) body["temperature"] = *options.temperature;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
}

Json ChatMessages(const Session& session, size_t turn, std::span<const std::string> answers) {
  Json messages = Json::array();
  if (!session.system_prompt.empty()) {
    messages.push_back({{"role", "system"}, {"content", session.system_prompt}});
  }
  for (size_t t = 0; t <= turn && t < session.turns.size(); ++t) {
    messages.push_back({{"role", "user"}, {"content", session.turns[t].text}});
    if (t < turn && t < answers.size()) messages.push_back({{"role", "assistant"}, {"content", answers[t]}});
  }
  return messages;
}

}  // namespace

BuiltRequest BuildRequest(const RequestOptions& options, const Session& session, size_t turn,
                          std::span<const std::string> answers, int64_t answer_tokens) {
  const Turn& current = session.turns.at(turn);
  BuiltRequest built;
  built.prompt_tokens_estimate = session.system_tokens + answer_tokens;
  for (size_t t = 0; t <= turn; ++t) built.prompt_tokens_estimate += session.turns[t].prompt_tokens;
  Json body;
  if (!session.raw_body.empty()) {
    body = Json::parse(session.raw_body, nullptr, /*allow_exceptions=*/false);  // validated at load
    built.path = body.contains("messages") ? "/v1/chat/completions" : "/v1/completions";
  } else if (options.endpoint == Endpoint::kChat) {
    body = Json::object();
    body["messages"] = ChatMessages(session, turn, answers);
    built.path = std::string(EndpointPath(Endpoint::kChat));
  } else {
    body = Json::object();
    body["prompt"] = session.system_prompt.empty() ? current.text : session.system_prompt + " " + current.text;
    built.path = std::string(EndpointPath(Endpoint::kCompletions));
  }
  AddStreamFields(options, current.max_tokens, body);
  built.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return built;
}

}  // namespace surge::bench
