#include "server/prompt_builder.h"

#include "tokenizer/jinja/chat_prompt.h"

namespace surge {

StatusOr<PromptBuilder> PromptBuilder::Create(const Tokenizer& tokenizer, const std::string& chat_template,
                                              int64_t max_model_len) {
  if (max_model_len <= 0) return InvalidArgumentError("max_model_len must be > 0");
  if (chat_template.empty()) return PromptBuilder(tokenizer, std::nullopt, max_model_len);
  StatusOr<jinja::Template> parsed = jinja::Template::Parse(chat_template);
  if (!parsed.ok()) return parsed.status().WithContext("chat template");
  return PromptBuilder(tokenizer, std::move(parsed).value(), max_model_len);
}

api::ApiResult<std::vector<int32_t>> PromptBuilder::FromCompletionPrompt(const api::CompletionPrompt& prompt,
                                                                         bool add_special_tokens) const {
  if (!prompt.is_tokens) return tokenizer_->Encode(prompt.text, add_special_tokens);
  const int32_t vocab_size = tokenizer_->vocab_size();
  for (int32_t id : prompt.token_ids) {
    if (id >= vocab_size) {
      return api::InvalidParam("prompt", "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                             std::to_string(vocab_size) + ")");
    }
  }
  return prompt.token_ids;
}

api::ApiResult<std::string> PromptBuilder::Render(const api::ChatInput& input) const {
  if (!chat_template_) {
    return api::InvalidParam("messages",
                             "the model has no chat template (start the server with --chat-template FILE)");
  }
  const jinja::ChatPromptInput prompt{input.messages, input.string_argument_messages, input.tools,
                                      input.chat_template_kwargs, input.add_generation_prompt,
                                      input.continue_final_message};
  StatusOr<std::string> text =
      jinja::RenderChatPrompt(*chat_template_, prompt, tokenizer_->bos_token(), tokenizer_->eos_token());
  if (!text.ok()) return api::InvalidParam("messages", text.status().message());
  return std::move(text).value();
}

api::ApiResult<ChatPrompt> PromptBuilder::FromChat(const api::ChatInput& input, bool add_special_tokens) const {
  api::ApiResult<std::string> text = Render(input);
  if (!text.ok()) return text.error();
  ChatPrompt prompt;
  prompt.token_ids = tokenizer_->Encode(*text, add_special_tokens);
  prompt.text = std::move(text).value();
  if (prompt.token_ids.empty()) return api::InvalidParam("messages", "the rendered chat has no tokens");
  return prompt;
}

api::ApiResult<int32_t> PromptBuilder::ResolveMaxTokens(size_t num_prompt_tokens, std::optional<int64_t> max_tokens,
                                                        std::string_view prompt_param,
                                                        std::string_view max_tokens_param) const {
  const int64_t num_prompt = static_cast<int64_t>(num_prompt_tokens);
  const std::string limit = "This model's maximum context length is " + std::to_string(max_model_len_) + " tokens";
  if (num_prompt >= max_model_len_) {
    return api::ApiError{InvalidArgumentError(limit + ", and the prompt alone has " + std::to_string(num_prompt) +
                                              " tokens. Shorten the prompt."),
                         std::string(prompt_param), kContextLengthExceeded};
  }
  if (!max_tokens) return static_cast<int32_t>(max_model_len_ - num_prompt);
  if (*max_tokens > max_model_len_ - num_prompt) {
    const std::string name(max_tokens_param);
    return api::ApiError{InvalidArgumentError(limit + ". However, you requested " + std::to_string(num_prompt) +
                                              " prompt tokens + " + std::to_string(*max_tokens) + " " + name +
                                              ". Reduce the prompt or " + name + "."),
                         name, kContextLengthExceeded};
  }
  return static_cast<int32_t>(*max_tokens);
}

}  // namespace surge
