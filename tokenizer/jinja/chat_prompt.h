// RenderChatPrompt: a chat request's messages through the model's chat template, exactly as
// `surge serve` renders them -- shared with the router, which must tokenize the very same
// text to compute the engine's block hashes (and never links server code).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tokenizer/jinja/template.h"

namespace surge::jinja {

// api::ChatInput's fields (borrowed): messages in the template's shape, the same with
// tool-call arguments as strings (null: none), tools (null: none), extra variables.
struct ChatPromptInput {
  const nlohmann::ordered_json& messages;
  const nlohmann::ordered_json& string_argument_messages;
  const nlohmann::ordered_json& tools;
  const nlohmann::ordered_json& chat_template_kwargs;
  bool add_generation_prompt = true;
  bool continue_final_message = false;  // leave the last (assistant) message open
};

// The template sees messages, add_generation_prompt, bos_token, eos_token, tools and the
// kwargs. Errors are InvalidArgument with the message the server sends for `messages`
// ("chat template: ...", "continue_final_message: ...").
StatusOr<std::string> RenderChatPrompt(const Template& chat_template, const ChatPromptInput& input,
                                       const std::string& bos_token, const std::string& eos_token);

}  // namespace surge::jinja
