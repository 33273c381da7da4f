// POST /v1/completions and /v1/chat/completions: parse, build the prompt, fit it into the
// context, and hand the engine requests to a Generation that answers.
#include <utility>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "server/routes.h"

namespace surge {
namespace {

constexpr char kCompletions[] = "/v1/completions";
constexpr char kChat[] = "/v1/chat/completions";

api::ApiResult<EngineRequest> MakeEngineRequest(const ServerContext& context, std::vector<int32_t> prompt_ids,
                                                const api::GenerationParams& params, std::string_view prompt_param) {
  api::ApiResult<int32_t> max_tokens =
      context.prompts.ResolveMaxTokens(prompt_ids.size(), params.max_tokens, prompt_param);
  if (!max_tokens.ok()) return max_tokens.error();
  EngineRequest request;
  request.prompt_ids = std::move(prompt_ids);
  SamplingParams& sampling = request.sampling;
  sampling.temperature = params.temperature;
  sampling.top_k = params.top_k;
  sampling.top_p = params.top_p;
  sampling.min_p = params.min_p;
  sampling.repetition_penalty = params.repetition_penalty;
  sampling.presence_penalty = params.presence_penalty;
  sampling.frequency_penalty = params.frequency_penalty;
  if (params.seed) sampling.seed = static_cast<uint64_t>(*params.seed);
  request.stop.max_tokens = *max_tokens;
  request.stop.stop = params.stop;
  request.stop.stop_token_ids = params.stop_token_ids;
  request.stop.ignore_eos = params.ignore_eos;
  request.n = params.n;
  request.top_logprobs = params.top_logprobs;
  request.skip_special_tokens = params.skip_special_tokens;
  request.priority = params.priority;
  return request;
}

// X-Priority (a tier name or an integer) overrides the body's `priority`: a gateway sets
// it from what it knows of the caller, which the body cannot overrule.
std::optional<api::ApiError> ApplyPriorityHeader(const net::HttpRequest& http, api::GenerationParams* params) {
  const std::string* header = http.headers.Find("X-Priority");
  if (header == nullptr) return std::nullopt;
  std::string_view value = *header;
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  const std::optional<int32_t> priority = api::ParsePriority(value);
  if (!priority) {
    return api::InvalidParam("X-Priority", std::string("the X-Priority header must be ") + api::kPriorityValues +
                                               ", got '" + std::string(value) + "'");
  }
  params->priority = *priority;
  return std::nullopt;
}

GenerationSpec MakeSpec(const ServerContext& context, const api::GenerationParams& params, bool chat,
                        SteadyClock::time_point arrival) {
  GenerationSpec spec;
  spec.endpoint = chat ? kChat : kCompletions;
  spec.chat = chat;
  spec.stream = params.stream;
  spec.include_usage = params.include_usage;
  spec.n = params.n;
  spec.logprobs = params.top_logprobs >= 0;
  spec.meta = {api::NewResponseId(chat ? "chatcmpl-" : "cmpl-"), api::UnixSeconds(),
               context.options.served_model_name};
  spec.arrival = arrival;
  spec.priority = params.priority;
  return spec;
}

// Under --reasoning-parser the think tags must reach the parser as text. Where the
// tokenizer marks one special, skip_special_tokens would drop it, so such a choice is
// decoded with its special tokens (as vLLM's parsers whose markers are special tokens
// do); stop tokens such as EOS still never show.
void PrepareReasoning(const ServerContext& context, EngineRequest* request, GenerationSpec* spec) {
  if (context.options.reasoning_parser == ReasoningParserKind::kNone) return;
  const Tokenizer& tokenizer = context.prompts.tokenizer();
  spec->parse_reasoning = true;
  spec->think_end_token_id = tokenizer.TokenToId(kThinkCloseTag);
  for (std::string_view tag : {kThinkOpenTag, kThinkCloseTag}) {
    std::optional<int32_t> id = tokenizer.TokenToId(tag);
    if (id && tokenizer.IsSpecial(*id)) request->skip_special_tokens = false;
  }
}

// Starts the generation; a refusal (draining 503, full queue 429, too large 400) is
// answered here.
void Launch(ServerContext& context, GenerationSpec spec, std::vector<EngineRequest> requests, Writer writer) {
  const std::string endpoint = spec.endpoint;
  if (context.draining) {
    return context.ReplyError(*writer, endpoint, {UnavailableError("the server is shutting down"), "", ""});
  }
  auto generation = std::make_shared<Generation>(context, std::move(spec), writer);
  Status status = generation->Start(std::move(requests));
  if (!status.ok()) context.ReplyError(*writer, endpoint, api::ApiError{status, "", ""});
}

}  // namespace

void HandleCompletions(ServerContext& context, const net::HttpRequest& http, Writer writer,
                       SteadyClock::time_point arrival) {
  api::ApiResult<api::CompletionRequest> parsed = api::ParseCompletionRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kCompletions, parsed.error());
  api::CompletionRequest& request = *parsed;
  if (auto error = CheckModel(context, request.params.model)) return context.ReplyError(*writer, kCompletions, *error);
  if (auto error = ApplyPriorityHeader(http, &request.params)) return context.ReplyError(*writer, kCompletions, *error);
  std::vector<EngineRequest> requests;
  for (const api::CompletionPrompt& prompt : request.prompts) {
    api::ApiResult<std::vector<int32_t>> ids = context.prompts.FromCompletionPrompt(prompt, request.add_special_tokens);
    if (!ids.ok()) return context.ReplyError(*writer, kCompletions, ids.error());
    if (ids->empty()) return context.ReplyError(*writer, kCompletions, api::InvalidParam("prompt", "the prompt has no tokens"));
    api::ApiResult<EngineRequest> engine_request =
        MakeEngineRequest(context, std::move(ids).value(), request.params, "prompt");
    if (!engine_request.ok()) return context.ReplyError(*writer, kCompletions, engine_request.error());
    requests.push_back(std::move(engine_request).value());
  }
  Launch(context, MakeSpec(context, request.params, /*chat=*/false, arrival), std::move(requests), std::move(writer));
}

void HandleChatCompletions(ServerContext& context, const net::HttpRequest& http, Writer writer,
                           SteadyClock::time_point arrival) {
  api::ApiResult<api::ChatCompletionRequest> parsed = api::ParseChatCompletionRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kChat, parsed.error());
  api::ChatCompletionRequest& request = *parsed;
  if (auto error = CheckModel(context, request.params.model)) return context.ReplyError(*writer, kChat, *error);
  if (auto error = ApplyPriorityHeader(http, &request.params)) return context.ReplyError(*writer, kChat, *error);
  api::ApiResult<ChatPrompt> prompt = context.prompts.FromChat(request.input, request.add_special_tokens);
  if (!prompt.ok()) return context.ReplyError(*writer, kChat, prompt.error());
  api::ApiResult<EngineRequest> engine_request =
      MakeEngineRequest(context, std::move(prompt->token_ids), request.params, "messages");
  if (!engine_request.ok()) return context.ReplyError(*writer, kChat, engine_request.error());
  GenerationSpec spec = MakeSpec(context, request.params, /*chat=*/true, arrival);
  PrepareReasoning(context, &*engine_request, &spec);
  std::vector<EngineRequest> requests;
  requests.push_back(std::move(engine_request).value());
  Launch(context, std::move(spec), std::move(requests), std::move(writer));
}

std::optional<api::ApiError> CheckModel(const ServerContext& context, const std::string& model) {
  if (model.empty() || model == context.options.served_model_name) return std::nullopt;
  return api::ApiError{NotFoundError("The model `" + model + "` does not exist."), "model", "model_not_found"};
}

}  // namespace surge
