#include "api/chat_request.h"

namespace surge::api {
namespace {

// logprobs: bool; top_logprobs: 0..20, only together with logprobs (as OpenAI).
void ReadLogprobs(FieldReader& reader, int32_t* top_logprobs) {
  bool logprobs = false;
  reader.Bool("logprobs", &logprobs);
  int32_t top = 0;
  const bool has_top = reader.IntInRange("top_logprobs", 0, kMaxLogprobs, &top);
  reader.Require(!has_top || logprobs, "top_logprobs", "top_logprobs requires logprobs to be true");
  *top_logprobs = logprobs ? top : -1;
}

}  // namespace

ApiResult<ChatCompletionRequest> ChatCompletionRequestFromJson(const Json& object, const RequestLimits& limits) {
  ChatCompletionRequest request;
  FieldReader reader(object);
  ReadChatInput(reader, limits, &request.input);
  ReadGenerationParams(reader, limits, &request.params);
  int64_t max_completion_tokens = 0;
  if (reader.IntInRange("max_completion_tokens", 1, INT64_MAX, &max_completion_tokens)) {
    request.params.max_tokens = max_completion_tokens;
  }
  ReadLogprobs(reader, &request.params.top_logprobs);
  reader.Bool("add_special_tokens", &request.add_special_tokens);
  reader.RefuseUnread();
  if (reader.failed()) return reader.error();
  return request;
}

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  return ChatCompletionRequestFromJson(*object, limits);
}

}  // namespace surge::api
