// POST /v1/completions and /v1/chat/completions: parse, build the prompt, fit it into the
// context, and hand the engine requests to a Generation that answers.
#include <sstream>
#include <utility>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "server/constraint_compile.h"
#include "server/routes.h"

namespace surge {
namespace {

constexpr char kCompletions[] = "/v1/completions";
constexpr char kChat[] = "/v1/chat/completions";

api::ApiResult<EngineRequest> MakeEngineRequest(const ServerContext& context, std::vector<int32_t> prompt_ids,
                                                const api::GenerationParams& params, std::string_view prompt_param) {
  api::ApiResult<int32_t> max_tokens =
      context.prompts.ResolveMaxTokens(prompt_ids.size(), params.max_tokens, prompt_param, params.max_tokens_param);
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
  const int32_t vocab_size = context.prompts.tokenizer().vocab_size();
  for (const auto& [token, bias] : params.logit_bias) {
    if (token >= vocab_size) {
      return api::InvalidParam("logit_bias", "logit_bias names token " + std::to_string(token) +
                                                 ", outside the vocabulary of " + std::to_string(vocab_size) + " tokens");
    }
    sampling.logit_bias.emplace_back(token, static_cast<float>(bias));
  }
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

// `encoder` null: the endpoint's own (chat or completions).
GenerationSpec MakeSpec(const ServerContext& context, const api::GenerationParams& params, std::string_view endpoint,
                        SteadyClock::time_point arrival, std::shared_ptr<ResponseEncoder> encoder = nullptr) {
  GenerationSpec spec;
  spec.endpoint = endpoint;
  spec.stream = params.stream;
  spec.n = params.n;
  spec.logprobs = params.top_logprobs >= 0;
  spec.encoder = std::move(encoder);
  if (!spec.encoder) {
    const bool chat = endpoint == kChat;
    api::ResponseMeta meta = {api::NewResponseId(chat ? "chatcmpl-" : "cmpl-"), api::UnixSeconds(),
                              context.options.served_model_name, params.service_tier};
    spec.encoder = chat ? MakeChatEncoder(std::move(meta), params.include_usage)
                        : MakeCompletionEncoder(std::move(meta), params.include_usage);
  }
  spec.arrival = arrival;
  spec.timeout_s = params.timeout_s.value_or(context.options.request_timeout_s);
  spec.priority = params.priority;
  return spec;
}

// The server's --request-timeout is also the most a body may ask for: a client cannot
// hold the engine longer than the operator allows.
std::optional<api::ApiError> CheckTimeout(const ServerContext& context, const api::GenerationParams& params) {
  const double limit_s = context.options.request_timeout_s;
  if (!params.timeout_s || limit_s <= 0 || *params.timeout_s <= limit_s) return std::nullopt;
  std::ostringstream message;
  message << "timeout (" << *params.timeout_s << " s) exceeds this server's --request-timeout of " << limit_s << " s";
  return api::InvalidParam("timeout", message.str());
}

// A parser's markers must reach it as text. Where the tokenizer marks one special,
// skip_special_tokens would drop it, so such a choice is decoded with its special tokens
// (as vLLM's parsers whose markers are special tokens do); stop tokens such as EOS still
// never show.
void DecodeMarkers(const Tokenizer& tokenizer, const std::vector<std::string_view>& markers, EngineRequest* request) {
  for (std::string_view marker : markers) {
    std::optional<int32_t> id = tokenizer.TokenToId(marker);
    if (id && tokenizer.IsSpecial(*id)) request->skip_special_tokens = false;
  }
}

void PrepareReasoning(const ServerContext& context, EngineRequest* request, GenerationSpec* spec) {
  if (context.options.reasoning_parser == ReasoningParserKind::kNone) return;
  const Tokenizer& tokenizer = context.prompts.tokenizer();
  spec->parse_reasoning = true;
  spec->think_end_token_id = tokenizer.TokenToId(kThinkCloseTag);
  DecodeMarkers(tokenizer, {kThinkOpenTag, kThinkCloseTag}, request);
}

// Tools given and tool_choice auto: each choice is parsed for calls under the server's
// --tool-call-parser. tool_choice none renders the tools all the same (as vLLM does by
// default) but never parses; with parser none, tool_choice auto returns plain text.
// "required" and a named function hold the output to JSON calls (the request's
// constraint) and parse that, whatever the parser.
void PrepareTools(const ServerContext& context, const api::ChatCompletionRequest& chat, EngineRequest* request,
                  GenerationSpec* spec) {
  spec->parallel_tool_calls = chat.parallel_tool_calls;
  switch (chat.tool_choice.mode) {
    case api::ToolChoiceMode::kNone: return;
    case api::ToolChoiceMode::kRequired:
    case api::ToolChoiceMode::kFunction: {
      std::string name = chat.tool_choice.mode == api::ToolChoiceMode::kFunction ? chat.tool_choice.function_name : "";
      spec->make_tool_parser = [name] { return MakeForcedToolCallParser(name); };
      return;
    }
    case api::ToolChoiceMode::kAuto: break;
  }
  const ToolCallParserKind kind = context.options.tool_call_parser;
  const bool has_tools = chat.input.tools.is_array() && !chat.input.tools.empty();
  if (!has_tools || kind == ToolCallParserKind::kNone) return;
  spec->make_tool_parser = [kind] { return MakeToolCallParser(kind); };
  DecodeMarkers(context.prompts.tokenizer(), ToolCallMarkers(kind), request);
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

// After the constraint is compiled: the prompts, each an engine request, then the launch.
void LaunchCompletions(ServerContext& context, const api::CompletionRequest& request,
                       std::shared_ptr<const CompiledGrammar> constraint, Writer writer, SteadyClock::time_point arrival) {
  std::vector<EngineRequest> requests;
  for (const api::CompletionPrompt& prompt : request.prompts) {
    api::ApiResult<std::vector<int32_t>> ids = context.prompts.FromCompletionPrompt(prompt, request.add_special_tokens);
    if (!ids.ok()) return context.ReplyError(*writer, kCompletions, ids.error());
    if (ids->empty()) return context.ReplyError(*writer, kCompletions, api::InvalidParam("prompt", "the prompt has no tokens"));
    api::ApiResult<EngineRequest> engine_request =
        MakeEngineRequest(context, std::move(ids).value(), request.params, "prompt");
    if (!engine_request.ok()) return context.ReplyError(*writer, kCompletions, engine_request.error());
    engine_request->constraint = constraint;
    // echo with logprobs scores the prompt; max_tokens 0 only scores it (echo alone too).
    if (request.echo && (request.params.top_logprobs >= 0 || engine_request->stop.max_tokens == 0)) {
      engine_request->prompt_logprobs = std::max(request.params.top_logprobs, 0);
    }
    requests.push_back(std::move(engine_request).value());
  }
  GenerationSpec spec = MakeSpec(context, request.params, kCompletions, arrival);
  spec.echo = request.echo;
  Launch(context, std::move(spec), std::move(requests), std::move(writer));
}

// After the constraint is compiled: the prompt, the engine request, reasoning and tools.
void LaunchChat(ServerContext& context, const api::ChatCompletionRequest& request, const ChatRoute& route,
                std::shared_ptr<const CompiledGrammar> constraint, Writer writer, SteadyClock::time_point arrival) {
  const std::string_view endpoint = route.endpoint;
  api::ApiResult<ChatPrompt> prompt = context.prompts.FromChat(request.input, request.add_special_tokens);
  if (!prompt.ok()) return context.ReplyError(*writer, endpoint, prompt.error());
  api::ApiResult<EngineRequest> engine_request =
      MakeEngineRequest(context, std::move(prompt->token_ids), request.params, route.prompt_param);
  if (!engine_request.ok()) return context.ReplyError(*writer, endpoint, engine_request.error());
  GenerationSpec spec = MakeSpec(context, request.params, endpoint, arrival, route.encoder);
  PrepareReasoning(context, &*engine_request, &spec);
  PrepareTools(context, request, &*engine_request, &spec);
  engine_request->constraint = std::move(constraint);
  // Under a reasoning parser the answer -- what the constraint is about -- starts after
  // "</think>"; where that is not one token the constraint holds from the first token.
  if (spec.parse_reasoning && spec.think_end_token_id) {
    engine_request->constraint_start_token_id = *spec.think_end_token_id;
  }
  std::vector<EngineRequest> requests;
  requests.push_back(std::move(engine_request).value());
  Launch(context, std::move(spec), std::move(requests), std::move(writer));
}

// The deadline of the request's own `timeout`, which also bounds its constraint's compile.
double RequestTimeoutSeconds(const ServerContext& context, const api::GenerationParams& params) {
  return params.timeout_s.value_or(context.options.request_timeout_s);
}

}  // namespace

void HandleCompletions(ServerContext& context, const net::HttpRequest& http, Writer writer,
                       SteadyClock::time_point arrival) {
  api::ApiResult<api::CompletionRequest> parsed = api::ParseCompletionRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kCompletions, parsed.error());
  auto request = std::make_shared<api::CompletionRequest>(std::move(parsed).value());
  if (auto error = CheckModel(context, request->params.model)) return context.ReplyError(*writer, kCompletions, *error);
  if (auto error = ApplyPriorityHeader(http, &request->params)) return context.ReplyError(*writer, kCompletions, *error);
  if (auto error = CheckTimeout(context, request->params)) return context.ReplyError(*writer, kCompletions, *error);
  WithOutputConstraint(context, request->params.constraint, RequestTimeoutSeconds(context, request->params),
                       kCompletions, writer, [&context, request, writer, arrival](auto constraint) {
                         LaunchCompletions(context, *request, std::move(constraint), writer, arrival);
                       });
}

void HandleChatCompletions(ServerContext& context, const net::HttpRequest& http, Writer writer,
                           SteadyClock::time_point arrival) {
  api::ApiResult<api::ChatCompletionRequest> parsed = api::ParseChatCompletionRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kChat, parsed.error());
  RunChatRequest(context, http, std::move(parsed).value(), {kChat, "messages", nullptr}, std::move(writer), arrival);
}

void RunChatRequest(ServerContext& context, const net::HttpRequest& http, api::ChatCompletionRequest request,
                    const ChatRoute& route, Writer writer, SteadyClock::time_point arrival) {
  const std::string_view endpoint = route.endpoint;
  if (auto error = CheckModel(context, request.params.model)) return context.ReplyError(*writer, endpoint, *error);
  if (auto error = ApplyPriorityHeader(http, &request.params)) return context.ReplyError(*writer, endpoint, *error);
  if (auto error = CheckTimeout(context, request.params)) return context.ReplyError(*writer, endpoint, *error);
  auto shared = std::make_shared<api::ChatCompletionRequest>(std::move(request));
  WithOutputConstraint(context, shared->params.constraint, RequestTimeoutSeconds(context, shared->params), endpoint,
                       writer, [&context, shared, route, writer, arrival](auto constraint) {
                         LaunchChat(context, *shared, route, std::move(constraint), writer, arrival);
                       });
}

std::optional<api::ApiError> CheckModel(const ServerContext& context, const std::string& model) {
  if (model.empty() || model == context.options.served_model_name) return std::nullopt;
  return api::ApiError{NotFoundError("The model `" + model + "` does not exist."), "model", "model_not_found"};
}

}  // namespace surge
