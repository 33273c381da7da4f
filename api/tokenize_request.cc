#include "api/tokenize_request.h"

#include "api/generation_params.h"

namespace surge::api {

ApiResult<TokenizeRequest> ParseTokenizeRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  FieldReader reader(*object);
  TokenizeRequest request;
  reader.String("model", &request.model);
  request.has_messages = reader.Has("messages");
  if (request.has_messages) {
    reader.Require(!reader.Has("prompt"), "prompt", "give either prompt or messages, not both");
    ReadChatInput(reader, limits, &request.chat);
    request.add_special_tokens = false;
  } else {
    reader.Require(reader.Has("prompt"), "prompt", "prompt or messages is required");
    reader.String("prompt", &request.prompt);
  }
  reader.Bool("add_special_tokens", &request.add_special_tokens);
  reader.RefuseUnread();
  if (reader.failed()) return reader.error();
  return request;
}

ApiResult<DetokenizeRequest> ParseDetokenizeRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  FieldReader reader(*object);
  DetokenizeRequest request;
  reader.String("model", &request.model);
  const Json* tokens = reader.Find("tokens");
  reader.Require(tokens != nullptr && tokens->is_array(), "tokens", "tokens must be a list of token ids");
  reader.RefuseUnread();
  if (reader.failed()) return reader.error();
  for (const Json& item : *tokens) {
    std::optional<int64_t> id = AsInteger(item);
    if (!id || *id < 0 || *id > INT32_MAX) return InvalidParam("tokens", "tokens must hold non-negative integers");
    request.tokens.push_back(static_cast<int32_t>(*id));
  }
  return request;
}

std::string TokenizeResponseJson(const std::vector<int32_t>& tokens, int64_t max_model_len,
                                 const std::string& rendered_prompt) {
  Json body = {{"count", tokens.size()}, {"max_model_len", max_model_len}, {"tokens", tokens}};
  if (!rendered_prompt.empty()) body["prompt"] = rendered_prompt;
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DetokenizeResponseJson(const std::string& text) {
  return Json{{"prompt", text}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace surge::api
