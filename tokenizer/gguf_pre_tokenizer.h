// The pre-tokenizer families a GGUF file names in `tokenizer.ggml.pre`, as llama.cpp's
// llama-vocab.cpp defines them: the regexes that split text before byte-level BPE, and
// the flags each family sets. Internal to tokenizer/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge {

struct GgufPreTokenizerSpec {
  // Applied in order; each splits every piece the previous one produced, keeping both
  // the matches and the text between them (tokenizers' Split with "Isolated").
  std::vector<std::string> regexes;
  bool ignore_merges = false;  // a pre-token that is a whole token is emitted as is
  bool clean_spaces = true;    // decode removes the space before . , ! ? and contractions
  bool add_bos = false;        // default of tokenizer.ggml.add_bos_token
  bool has_bos = true;         // false: the family has no BOS (chatglm-bpe, glm4)
};

// The spec for `pre` ("" means llama.cpp's "default"). Unknown names and families whose
// splitting llama.cpp hand-codes (kimi-k2, afmoe, ...) give UNIMPLEMENTED naming `pre`.
StatusOr<GgufPreTokenizerSpec> LookUpGgufPreTokenizer(std::string_view pre);

// Every name LookUpGgufPreTokenizer accepts (for tests and error messages).
std::vector<std::string> SupportedGgufPreTokenizers();

}  // namespace surge
