#include "router/prefix/prompt_hasher.h"

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "base/block_hash.h"
#include "tokenizer/jinja/chat_prompt.h"

namespace surge::router {

StatusOr<PromptHasher> PromptHasher::Create(const Tokenizer& tokenizer, const std::string& chat_template,
                                            const KvConfig& config) {
  if (config.block_size <= 0) return InvalidArgumentError("block_size must be > 0");
  const std::string& source = chat_template.empty() ? tokenizer.chat_template() : chat_template;
  if (source.empty()) return PromptHasher(tokenizer, std::nullopt, config);
  StatusOr<jinja::Template> parsed = jinja::Template::Parse(source);
  if (!parsed.ok()) return parsed.status().WithContext("chat template");
  return PromptHasher(tokenizer, std::move(parsed).value(), config);
}

StatusOr<std::vector<int32_t>> PromptHasher::PromptTokens(std::string_view path, std::string_view body) const {
  if (path == "/v1/completions") return CompletionTokens(body);
  if (path == "/v1/chat/completions") return ChatTokens(body);
  return UnimplementedError("no prompt hashing for " + std::string(path));
}

// As the server's PromptBuilder::FromCompletionPrompt.
StatusOr<std::vector<int32_t>> PromptHasher::CompletionTokens(std::string_view body) const {
  api::ApiResult<api::CompletionRequest> request = api::ParseCompletionRequest(body);
  if (!request.ok()) return request.error().status;
  const api::CompletionPrompt& prompt = request->prompts.front();
  if (prompt.is_tokens) return prompt.token_ids;
  return tokenizer_->Encode(prompt.text, request->add_special_tokens);
}

// As the server's PromptBuilder::FromChat.
StatusOr<std::vector<int32_t>> PromptHasher::ChatTokens(std::string_view body) const {
  if (!chat_template_) return InvalidArgumentError("the model has no chat template");
  api::ApiResult<api::ChatCompletionRequest> request = api::ParseChatCompletionRequest(body);
  if (!request.ok()) return request.error().status;
  const api::ChatInput& input = request->input;
  const jinja::ChatPromptInput prompt{input.messages, input.string_argument_messages, input.tools,
                                      input.chat_template_kwargs, input.add_generation_prompt,
                                      input.continue_final_message};
  ASSIGN_OR_RETURN(std::string text, jinja::RenderChatPrompt(*chat_template_, prompt, tokenizer_->bos_token(),
                                                             tokenizer_->eos_token()));
  return tokenizer_->Encode(text, request->add_special_tokens);
}

std::vector<uint64_t> PromptHasher::BlockHashes(std::span<const int32_t> token_ids) const {
  return ChainedBlockHashes(token_ids, config_.block_size, config_.hash_seed);
}

StatusOr<std::vector<uint64_t>> PromptHasher::PromptBlockHashes(std::string_view path, std::string_view body) const {
  ASSIGN_OR_RETURN(std::vector<int32_t> tokens, PromptTokens(path, body));
  return BlockHashes(tokens);
}

}  // namespace surge::router
