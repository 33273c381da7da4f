// GGUF tokenizer -> tokenizer.json: the written files, loaded as a Hugging Face tokenizer,
// encode a corpus exactly as the GGUF tokenizer does (SmolLM2's byte-level BPE with the
// smollm pre-tokenizer; stories260K's SentencePiece vocabulary, merges rebuilt from scores).
#include "tokenizer/gguf_to_hf_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "tokenizer/gguf_vocab_io.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

constexpr const char* kSmolLm2 = "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf";

// A few hundred strings: prose, code, numbers, whitespace runs, other scripts, emoji, and
// special tokens inside text.
std::vector<std::string> Corpus() {
  std::vector<std::string> corpus = {
      "", " ", "  ", "\n", "\n\n\t  x", "Hello, world!", "Hello world", " Hello", "hello  world   ",
      "The quick brown fox jumps over the lazy dog.", "I'm sure you've heard it's 3.14159, isn't it?",
      "def f(x):\n    return x ** 2  # square\n", "for (int i = 0; i < n; ++i) { sum += a[i]; }",
      "1234567890", "12,345.67 and 0.001", "2026-12-07T19:14:54Z", "Größe, naïve café, Ærø", "Привет, мир!",
      "你好，世界。今天天气很好。", "こんにちは世界", "안녕하세요", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
      "emoji 😀🎉👍🏽 and 🇫🇷 flags", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
      "<s>text</s>", "<|endoftext|>after", "tab\there", "CRLF\r\nline", "    indented", "a\u00a0b (nbsp)",
      "URL: https://example.com/path?q=1&r=two#frag", "email@example.org", "$100 + 20% = ???", "...!!!???",
      "ALL CAPS SHOUTING", "camelCaseIdentifier snake_case_identifier", "\"quoted\" 'single'", "x=y+z*w/v",
      "   leading and trailing   ", "\u200b zero width", "mixed 中文 and English 123",
  };
  const std::vector<std::string> words = {"the", "Tokenizer", "  ", "42", "é", "🙂", "\n", "don't", "x1", "—",
                                          "中", "...", "<|im_end|>", "Ab", "  tab\t", "9999", "ñ"};
  for (int i = 0; i < 300; ++i) {
    std::string s;
    for (int j = 0; j < 1 + (i * 7) % 12; ++j) s += words[(i * 31 + j * 17) % words.size()] + ((i + j) % 3 ? " " : "");
    corpus.push_back(s);
  }
  return corpus;
}

// Encodes the corpus with the GGUF tokenizer and with the tokenizer.json written for it.
void ExpectSameIds(const GgufVocab& vocab, const std::string& name) {
  auto gguf = Tokenizer::FromGgufVocab(vocab, name);
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  auto files = HfTokenizerFromGgufVocab(vocab);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  auto hf = Tokenizer::FromJson(files->tokenizer_json, files->tokenizer_config_json, name + " (tokenizer.json)");
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  int num_different = 0;
  for (const std::string& text : Corpus()) {
    const std::vector<int32_t> want = (*gguf)->Encode(text), got = (*hf)->Encode(text);
    if (want != got && ++num_different <= 5) ADD_FAILURE() << name << ": '" << text << "' encodes differently";
    EXPECT_EQ((*hf)->Decode(got, false), (*gguf)->Decode(want, false)) << text;
  }
  EXPECT_EQ(num_different, 0) << name;
  EXPECT_EQ((*hf)->bos_token_id(), (*gguf)->bos_token_id());
  EXPECT_EQ((*hf)->chat_template(), (*gguf)->chat_template());
}

TEST(GgufToHfTokenizerTest, SmolLm2ByteLevelBpe) {
  if (!std::filesystem::exists(kSmolLm2)) GTEST_SKIP() << kSmolLm2 << " is not installed (scripts/setup.sh)";
  auto file = GgufFile::Open(kSmolLm2);
  ASSERT_TRUE(file.ok());
  auto vocab = ReadGgufVocab(**file);
  ASSERT_TRUE(vocab.ok());
  ExpectSameIds(*vocab, "SmolLM2");
  auto files = HfTokenizerFromGgufVocab(*vocab);
  const auto config = nlohmann::json::parse(files->tokenizer_config_json);
  EXPECT_EQ(config["eos_token"], "<|im_end|>");
  EXPECT_EQ(config["add_bos_token"], false);
  EXPECT_NE(config["chat_template"].get<std::string>().find("<|im_start|>"), std::string::npos);
}

TEST(GgufToHfTokenizerTest, StoriesSentencePiece) {
  auto vocab = GgufVocabFromHfDirectory("models/stories260K");
  ASSERT_TRUE(vocab.ok()) << vocab.status().ToString();
  ExpectSameIds(*vocab, "stories260K");
}

TEST(GgufToHfTokenizerTest, RefusesUnknownModels) {
  GgufVocab vocab;
  vocab.model = "bert";
  vocab.tokens = {"a"};
  EXPECT_EQ(HfTokenizerFromGgufVocab(vocab).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace surge
