#include "router/complexity.h"

#include <nlohmann/json.hpp>

#include <array>

#include "router/auth/token_estimate.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

int64_t MaxTokens(const Json& body) {
  for (const char* key : {"max_tokens", "max_completion_tokens", "max_output_tokens"}) {
    auto it = body.find(key);
    if (it != body.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return 0;
}

bool AsksForReasoning(const Json& body) {
  const Json* effort = nullptr;
  if (auto it = body.find("reasoning_effort"); it != body.end()) effort = &*it;
  if (auto it = body.find("reasoning"); it != body.end() && it->is_object()) {
    if (auto e = it->find("effort"); e != it->end()) effort = &*e;
  }
  if (effort == nullptr || !effort->is_string()) return false;
  const std::string& value = effort->get_ref<const std::string&>();
  return value != "none" && value != "minimal";
}

// Every prompt text of a completions, chat or responses body, appended.
void CollectText(const Json& value, std::string* out, int depth = 0) {
  if (depth > 8 || out->size() > (1 << 20)) return;  // bounded: bodies are bounded, keep it so
  if (value.is_string()) {
    out->append(value.get_ref<const std::string&>()).push_back('\n');
  } else if (value.is_array()) {
    for (const Json& item : value) CollectText(item, out, depth + 1);
  } else if (value.is_object()) {
    for (const char* key : {"content", "text", "prompt", "messages", "input"}) {
      if (auto it = value.find(key); it != value.end()) CollectText(*it, out, depth + 1);
    }
  }
}

bool LooksLikeSourceLine(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) return false;
  constexpr std::array<std::string_view, 8> kStarts = {"def ", "#include", "import ", "function ",
                                                        "class ", "return ", "fn ", "public "};
  for (std::string_view start : kStarts) {
    if (line.substr(0, start.size()) == start) return true;
  }
  return line.back() == ';' || line.back() == '{';
}

}  // namespace

bool LooksLikeCode(std::string_view text) {
  if (text.find("```") != std::string_view::npos) return true;
  int num_source_lines = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (LooksLikeSourceLine(text.substr(0, end)) && ++num_source_lines >= 2) return true;
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return false;
}

ComplexityChoice ChoosePoolByComplexity(const ComplexityRule& rule, const Json& body) {
  const ComplexityChoice large{&rule.large_pool, ""};
  if (rule.max_tokens_over > 0 && MaxTokens(body) > rule.max_tokens_over) return {large.pool, "max_tokens"};
  if (rule.reasoning && AsksForReasoning(body)) return {large.pool, "reasoning"};
  if (rule.prompt_tokens_over > 0 &&
      EstimateRequestTokens(body, /*generates=*/false) > rule.prompt_tokens_over) {
    return {large.pool, "prompt_tokens"};
  }
  if (rule.code) {
    std::string text;
    CollectText(body, &text);
    if (LooksLikeCode(text)) return {large.pool, "code"};
  }
  return {&rule.small_pool, "simple"};
}

}  // namespace surge::router
