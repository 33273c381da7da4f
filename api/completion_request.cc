#include "api/completion_request.h"

namespace surge::api {
namespace {

// "prompt must be a string, a list of strings, ..." for `param`.
std::string PromptShape(std::string_view param) {
  return std::string(param) +
         " must be a string, a list of strings, a list of token ids or a list of lists of token ids";
}

// A list of token ids; nullopt when `value` is not one.
std::optional<std::vector<int32_t>> AsTokenIds(const Json& value) {
  if (!value.is_array()) return std::nullopt;
  std::vector<int32_t> ids;
  ids.reserve(value.size());
  for (const Json& item : value) {
    std::optional<int64_t> id = AsInteger(item);
    if (!id || *id < 0 || *id > INT32_MAX) return std::nullopt;
    ids.push_back(static_cast<int32_t>(*id));
  }
  return ids;
}

ApiResult<CompletionPrompt> ParseOnePrompt(const Json& value, const std::string& param) {
  CompletionPrompt prompt;
  if (value.is_string()) {
    prompt.text = value.get<std::string>();
    if (prompt.text.empty()) return InvalidParam(param, param + " must not be empty");
    return prompt;
  }
  std::optional<std::vector<int32_t>> ids = AsTokenIds(value);
  if (!ids) return InvalidParam(param, PromptShape(param) + " (token ids are non-negative integers)");
  if (ids->empty()) return InvalidParam(param, param + " must not be empty");
  prompt.is_tokens = true;
  prompt.token_ids = std::move(*ids);
  return prompt;
}

// Fields of the OpenAI API that change the output in ways this server does not offer:
// refusing them beats silently answering something else.
void RefuseUnsupported(FieldReader& reader, int32_t n) {
  std::string suffix;
  reader.String("suffix", &suffix);
  reader.Require(suffix.empty(), "suffix", "suffix is not supported");
  int64_t best_of = n;
  reader.Int("best_of", &best_of);
  reader.Require(best_of == n || best_of == 1, "best_of", "best_of is not supported (other than 1 or n)");
}

}  // namespace

// A list whose items are strings or lists is a batch; a list of numbers is one prompt.
ApiResult<std::vector<CompletionPrompt>> ParsePromptList(const Json* value, const PromptListSpec& spec) {
  const std::string param(spec.param);
  if (value == nullptr) return InvalidParam(param, param + " is required");
  if (!value->is_string() && !value->is_array()) {
    return InvalidParam(param, PromptShape(param) + ", got " + JsonTypeName(*value));
  }
  if (value->is_array() && value->empty()) return InvalidParam(param, param + " must not be empty");
  const bool batch = value->is_array() && ((*value)[0].is_string() || (*value)[0].is_array());
  if (batch && value->size() > spec.max_items) {
    return InvalidParam(param, param + " holds " + std::to_string(value->size()) + " " + std::string(spec.items) +
                                   "; the limit is " + std::to_string(spec.max_items));
  }
  std::vector<CompletionPrompt> prompts;
  if (!batch) {
    ApiResult<CompletionPrompt> prompt = ParseOnePrompt(*value, param);
    if (!prompt.ok()) return prompt.error();
    prompts.push_back(std::move(prompt).value());
    return prompts;
  }
  for (const Json& item : *value) {
    if (item.is_string() != (*value)[0].is_string()) {
      return InvalidParam(param, PromptShape(param) + "; a list must not mix strings and token lists");
    }
    ApiResult<CompletionPrompt> prompt = ParseOnePrompt(item, param);
    if (!prompt.ok()) return prompt.error();
    prompts.push_back(std::move(prompt).value());
  }
  return prompts;
}

ApiResult<CompletionRequest> CompletionRequestFromJson(const Json& object, const RequestLimits& limits) {
  CompletionRequest request;
  FieldReader reader(object);
  ApiResult<std::vector<CompletionPrompt>> prompts =
      ParsePromptList(reader.Find("prompt"), {"prompt", "prompts", limits.max_prompts});
  if (!prompts.ok()) return prompts.error();
  request.prompts = std::move(prompts).value();
  reader.Bool("echo", &request.echo);
  ReadGenerationParams(reader, limits, &request.params, /*min_max_tokens=*/request.echo ? 0 : 1);
  reader.IntInRange("logprobs", 0, kMaxLogprobs, &request.params.top_logprobs);
  reader.Bool("add_special_tokens", &request.add_special_tokens);
  RefuseUnsupported(reader, request.params.n);
  reader.RefuseUnread();
  if (reader.failed()) return reader.error();
  return request;
}

ApiResult<CompletionRequest> ParseCompletionRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  return CompletionRequestFromJson(*object, limits);
}

}  // namespace surge::api
