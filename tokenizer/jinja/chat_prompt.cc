#include "tokenizer/jinja/chat_prompt.h"

namespace surge::jinja {
namespace {

using Json = nlohmann::ordered_json;

// The messages with every null content (an assistant turn that only calls tools) as "".
Json WithEmptyContent(Json messages) {
  for (Json& message : messages) {
    if (message.contains("content") && message["content"].is_null()) message["content"] = "";
  }
  return messages;
}

// Templates disagree on tool-call history, and one message list cannot suit them all:
// tried first as transformers wants it (arguments as objects, content null when a turn
// only calls tools); a template that fails on that gets the arguments as the strings that
// came (DeepSeek-V3's concatenates them and tests `content is none`), then objects with
// content "" (Qwen3's concatenates the content). The first failure is the one reported.
StatusOr<std::string> RenderMessages(const Template& chat_template, const ChatPromptInput& input,
                                     bool add_generation_prompt, const Json& extra) {
  StatusOr<std::string> text = RenderChatTemplate(chat_template, input.messages, add_generation_prompt, extra);
  if (text.ok() || input.string_argument_messages.is_null()) return text;
  for (const Json& messages : {input.string_argument_messages, WithEmptyContent(input.messages)}) {
    StatusOr<std::string> retry = RenderChatTemplate(chat_template, messages, add_generation_prompt, extra);
    if (retry.ok()) return retry;
  }
  return text;
}

}  // namespace

StatusOr<std::string> RenderChatPrompt(const Template& chat_template, const ChatPromptInput& input,
                                       const std::string& bos_token, const std::string& eos_token) {
  Json extra = {{"bos_token", bos_token}, {"eos_token", eos_token}, {"tools", input.tools}};
  for (const auto& [key, value] : input.chat_template_kwargs.items()) extra[key] = value;
  const bool add_generation_prompt = input.add_generation_prompt && !input.continue_final_message;
  StatusOr<std::string> text = RenderMessages(chat_template, input, add_generation_prompt, extra);
  if (!text.ok()) return InvalidArgumentError("chat template: " + text.status().message());
  if (!input.continue_final_message) return text;
  // As vLLM: cut the text right after the final message's content, so that generation
  // continues that message instead of closing it.
  const Json& last = input.messages.back();
  const bool has_text = last.contains("content") && last["content"].is_string();
  const std::string content = has_text ? last["content"].get<std::string>() : "";
  const size_t at = content.empty() ? std::string::npos : text->rfind(content);
  if (at == std::string::npos) {
    return InvalidArgumentError(
        "continue_final_message: the final message's content does not appear in the rendered chat");
  }
  return text->substr(0, at + content.size());
}

}  // namespace surge::jinja
