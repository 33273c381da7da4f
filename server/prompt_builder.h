// PromptBuilder: turns API prompts into token ids — text through the tokenizer, chat
// messages through the chat template — and fits max_tokens into the model's context.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/chat_input.h"
#include "api/completion_request.h"
#include "api/error.h"
#include "tokenizer/jinja/template.h"
#include "tokenizer/tokenizer.h"

namespace surge {

struct ChatPrompt {
  std::string text;  // the rendered template
  std::vector<int32_t> token_ids;
};

inline constexpr char kContextLengthExceeded[] = "context_length_exceeded";

class PromptBuilder {
 public:
  // `chat_template` "" means the model has none: chat requests are then refused (400).
  // A template that does not parse is an error here, at start-up, not per request.
  static StatusOr<PromptBuilder> Create(const Tokenizer& tokenizer, const std::string& chat_template,
                                        int64_t max_model_len);

  // Text prompts go through the tokenizer (add_special_tokens applies its post-processor,
  // e.g. Llama's BOS); token prompts are checked against the vocabulary.
  api::ApiResult<std::vector<int32_t>> FromCompletionPrompt(const api::CompletionPrompt& prompt,
                                                            bool add_special_tokens) const;
  // Renders the chat template (messages, add_generation_prompt, bos_token, eos_token,
  // tools, chat_template_kwargs) and encodes the text. As vLLM does, add_special_tokens
  // is normally false here: the template writes BOS itself and must not get a second one.
  api::ApiResult<ChatPrompt> FromChat(const api::ChatInput& input, bool add_special_tokens) const;

  // The max_tokens to run with: the request's own, or all that the context leaves. A
  // prompt that fills the context, or a total past it, is a 400 that names the limit,
  // with OpenAI's code context_length_exceeded and the field the request used.
  api::ApiResult<int32_t> ResolveMaxTokens(size_t num_prompt_tokens, std::optional<int64_t> max_tokens,
                                           std::string_view prompt_param,
                                           std::string_view max_tokens_param = "max_tokens") const;

  int64_t max_model_len() const { return max_model_len_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  bool has_chat_template() const { return chat_template_.has_value(); }

 private:
  PromptBuilder(const Tokenizer& tokenizer, std::optional<jinja::Template> chat_template, int64_t max_model_len)
      : tokenizer_(&tokenizer), chat_template_(std::move(chat_template)), max_model_len_(max_model_len) {}

  api::ApiResult<std::string> Render(const api::ChatInput& input) const;

  const Tokenizer* tokenizer_;
  std::optional<jinja::Template> chat_template_;
  int64_t max_model_len_;
};

}  // namespace surge
