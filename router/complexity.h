// Routing by request complexity: a `model` alias (e.g. "auto") that sends each request to a
// small- or a large-model pool by rules over the request itself — its prompt size, the
// output it asks for, whether it asks for reasoning, whether it carries code — so that
// simple questions stay on the cheap pool (seed: multi-model routing by complexity).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace surge::router {

// "aliases": {"auto": {"small": POOL, "large": POOL, "prompt_tokens_over": N,
// "max_tokens_over": N, "reasoning": true, "code": true}}. A request goes to `large` when
// ANY enabled rule holds (0 / false: that rule is off), else to `small`.
struct ComplexityRule {
  std::string small_pool;
  std::string large_pool;
  int64_t prompt_tokens_over = 0;  // the prompt's estimated tokens (router/auth/token_estimate.h)
  int64_t max_tokens_over = 0;     // max_tokens / max_completion_tokens / max_output_tokens
  bool reasoning = false;          // reasoning_effort (chat) or reasoning.effort (responses), not "none"/"minimal"
  bool code = false;               // a ``` fence or source-like lines in the prompt (see .cc)
};

struct ComplexityChoice {
  const std::string* pool;  // into the rule
  std::string_view reason;  // "prompt_tokens", "max_tokens", "reasoning", "code", or "simple"
};

ComplexityChoice ChoosePoolByComplexity(const ComplexityRule& rule, const nlohmann::json& body);

// The lexical check behind `code`: a fenced block, or at least two lines that look like
// source (a statement ending in ';' or '{', `def f(`, `#include`, `import x`, `function`).
bool LooksLikeCode(std::string_view text);

}  // namespace surge::router
