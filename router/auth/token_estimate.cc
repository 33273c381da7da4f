#include "router/auth/token_estimate.h"

#include <algorithm>
#include <string>

namespace surge::router {
namespace {

using nlohmann::json;

int64_t TextTokens(const std::string& text, const TokenEstimateOptions& options) {
  const int64_t num_bytes = static_cast<int64_t>(text.size());
  return (num_bytes + options.bytes_per_token - 1) / options.bytes_per_token;
}

// A prompt / input: a string, token ids, or a list of either.
int64_t PromptTokens(const json& value, const TokenEstimateOptions& options) {
  if (value.is_string()) return TextTokens(value.get_ref<const std::string&>(), options);
  if (value.is_number()) return 1;  // one token id
  if (!value.is_array()) return 0;
  int64_t total = 0;
  for (const json& item : value) total += PromptTokens(item, options);
  return total;
}

// Chat messages: each content string or text part, plus a template overhead per message.
int64_t MessageTokens(const json& messages, const TokenEstimateOptions& options) {
  if (!messages.is_array()) return 0;
  int64_t total = 0;
  for (const json& message : messages) {
    total += options.tokens_per_message;
    if (!message.is_object()) continue;
    const auto content = message.find("content");
    if (content == message.end()) continue;
    if (content->is_string()) total += TextTokens(content->get_ref<const std::string&>(), options);
    if (!content->is_array()) continue;
    for (const json& part : *content) {
      const auto text = part.is_object() ? part.find("text") : part.end();
      if (part.is_object() && text != part.end() && text->is_string()) {
        total += TextTokens(text->get_ref<const std::string&>(), options);
      }
    }
  }
  return total;
}

int64_t PositiveInt(const json& body, const char* field, int64_t fallback) {
  const auto it = body.find(field);
  if (it == body.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return fallback;
  return it->get<int64_t>();
}

}  // namespace

int64_t EstimateRequestTokens(const json& body, bool generates, std::optional<int64_t> prompt_tokens,
                              const TokenEstimateOptions& options) {
  if (!body.is_object()) return 0;
  int64_t prompt = 0;
  if (prompt_tokens) {
    prompt = std::max<int64_t>(0, *prompt_tokens);
  } else {
    if (const auto it = body.find("prompt"); it != body.end()) prompt += PromptTokens(*it, options);
    if (const auto it = body.find("messages"); it != body.end()) prompt += MessageTokens(*it, options);
    if (const auto it = body.find("input"); it != body.end()) prompt += PromptTokens(*it, options);
  }
  int64_t max_tokens = generates ? options.default_max_tokens : 0;
  for (const char* field : {"max_tokens", "max_output_tokens", "max_completion_tokens"}) {
    if (generates) max_tokens = PositiveInt(body, field, max_tokens);
  }
  const int64_t n = std::max<int64_t>(1, PositiveInt(body, "n", 1));
  return prompt + max_tokens * n;
}

std::optional<int64_t> UsageTotalTokens(const nlohmann::ordered_json& response) {
  // Counts outside [0, 2^40] are not believed (and cannot overflow the sum).
  constexpr int64_t kMaxTokens = int64_t{1} << 40;
  const auto count = [](const nlohmann::ordered_json& value) -> std::optional<int64_t> {
    if (!value.is_number_integer()) return std::nullopt;
    if (value.is_number_unsigned()) {
      const uint64_t v = value.get<uint64_t>();
      return v <= static_cast<uint64_t>(kMaxTokens) ? std::optional<int64_t>(static_cast<int64_t>(v)) : std::nullopt;
    }
    const int64_t v = value.get<int64_t>();
    return v >= 0 && v <= kMaxTokens ? std::optional<int64_t>(v) : std::nullopt;
  };
  if (!response.is_object()) return std::nullopt;
  const auto usage = response.find("usage");
  if (usage == response.end() || !usage->is_object()) return std::nullopt;
  if (const auto total = usage->find("total_tokens"); total != usage->end() && count(*total)) return count(*total);
  int64_t sum = 0;
  bool any = false;
  for (const char* field : {"prompt_tokens", "completion_tokens", "input_tokens", "output_tokens"}) {
    const auto it = usage->find(field);
    if (it == usage->end()) continue;
    if (const std::optional<int64_t> n = count(*it)) {
      sum += *n;
      any = true;
    }
  }
  return any ? std::optional<int64_t>(sum) : std::nullopt;
}

}  // namespace surge::router
