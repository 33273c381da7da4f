// POST /tokenize and /detokenize, as vLLM offers them: the server's own tokenizer and
// chat template, so that clients count tokens exactly as generation will.
#include "api/tokenize_request.h"
#include "server/routes.h"

namespace surge {
namespace {

constexpr char kTokenize[] = "/tokenize";
constexpr char kDetokenize[] = "/detokenize";

}  // namespace

void HandleTokenize(ServerContext& context, const net::HttpRequest& http, Writer writer) {
  api::ApiResult<api::TokenizeRequest> parsed = api::ParseTokenizeRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kTokenize, parsed.error());
  const api::TokenizeRequest& request = *parsed;
  if (auto error = CheckModel(context, request.model)) return context.ReplyError(*writer, kTokenize, *error);
  std::vector<int32_t> tokens;
  std::string rendered;
  if (request.has_messages) {
    api::ApiResult<ChatPrompt> prompt = context.prompts.FromChat(request.chat, request.add_special_tokens);
    if (!prompt.ok()) return context.ReplyError(*writer, kTokenize, prompt.error());
    tokens = std::move(prompt->token_ids);
    rendered = std::move(prompt->text);
  } else {
    tokens = context.prompts.tokenizer().Encode(request.prompt, request.add_special_tokens);
  }
  context.Reply(*writer, kTokenize, 200, api::TokenizeResponseJson(tokens, context.prompts.max_model_len(), rendered));
}

void HandleDetokenize(ServerContext& context, const net::HttpRequest& http, Writer writer) {
  api::ApiResult<api::DetokenizeRequest> parsed = api::ParseDetokenizeRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kDetokenize, parsed.error());
  const api::DetokenizeRequest& request = *parsed;
  if (auto error = CheckModel(context, request.model)) return context.ReplyError(*writer, kDetokenize, *error);
  const Tokenizer& tokenizer = context.prompts.tokenizer();
  for (int32_t id : request.tokens) {
    if (id >= tokenizer.vocab_size()) {
      return context.ReplyError(*writer, kDetokenize,
                                api::InvalidParam("tokens", "token id " + std::to_string(id) +
                                                                " is outside the vocabulary [0, " +
                                                                std::to_string(tokenizer.vocab_size()) + ")"));
    }
  }
  // As vLLM (tokenizer.decode's default): special tokens stay in the text.
  context.Reply(*writer, kDetokenize, 200,
                api::DetokenizeResponseJson(tokenizer.Decode(request.tokens, /*skip_special_tokens=*/false)));
}

}  // namespace surge
