// Detokenizer: one choice's output text, decoded incrementally in the context of its
// prompt, so that the first output token keeps the leading space that a tokenizer strips
// at the start of a text (SentencePiece "▁Once" decodes to "Once" alone, " Once" after
// other text). Like vLLM, the decoder is primed with the prompt's last few tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tokenizer/tokenizer.h"

namespace surge {

class Detokenizer {
 public:
  // Holds a reference to `tokenizer`.
  Detokenizer(const Tokenizer& tokenizer, std::span<const int32_t> prompt_ids,
              bool skip_special_tokens);

  // The text that `token` completes (whole UTF-8 characters only; maybe empty).
  std::string Add(int32_t token);
  // Whatever is still held back, at the end of the choice.
  std::string Flush();

 private:
  std::string DropPromptText(std::string text);

  IncrementalDecoder decoder_;
  // Bytes of the priming tokens' text that the decoder held back and will return with
  // the first outputs; they belong to the prompt and are dropped.
  size_t num_prompt_bytes_pending_ = 0;
};

}  // namespace surge
