#include "engine/detokenizer.h"

#include <algorithm>
#include <string_view>

namespace surge {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// The prompt's shortest suffix of at least 4 tokens that decodes to whole characters
// (vLLM's rule, up to 23 tokens), or its last 4 tokens when none does.
std::span<const int32_t> PrimingSuffix(const Tokenizer& tokenizer,
                                       std::span<const int32_t> prompt_ids,
                                       bool skip_special_tokens) {
  constexpr size_t kMinTokens = 4, kMaxTokens = 23;
  if (prompt_ids.size() <= kMinTokens) return prompt_ids;
  for (size_t n = kMinTokens; n <= std::min(prompt_ids.size(), kMaxTokens); ++n) {
    std::span<const int32_t> suffix = prompt_ids.last(n);
    if (tokenizer.Decode(suffix, skip_special_tokens).find(kReplacementCharacter) ==
        std::string::npos) {
      return suffix;
    }
  }
  return prompt_ids.last(kMinTokens);
}

}  // namespace

Detokenizer::Detokenizer(const Tokenizer& tokenizer, std::span<const int32_t> prompt_ids,
                         bool skip_special_tokens)
    : decoder_(tokenizer, skip_special_tokens) {
  std::span<const int32_t> suffix = PrimingSuffix(tokenizer, prompt_ids, skip_special_tokens);
  size_t num_returned_bytes = 0;
  for (int32_t id : suffix) num_returned_bytes += decoder_.Add(id).size();
  const size_t num_text_bytes = tokenizer.Decode(suffix, skip_special_tokens).size();
  num_prompt_bytes_pending_ =
      num_text_bytes > num_returned_bytes ? num_text_bytes - num_returned_bytes : 0;
}

std::string Detokenizer::Add(int32_t token) { return DropPromptText(decoder_.Add(token)); }

std::string Detokenizer::Flush() { return DropPromptText(decoder_.Flush()); }

std::string Detokenizer::DropPromptText(std::string text) {
  const size_t num_drop = std::min(num_prompt_bytes_pending_, text.size());
  num_prompt_bytes_pending_ -= num_drop;
  text.erase(0, num_drop);
  return text;
}

}  // namespace surge
