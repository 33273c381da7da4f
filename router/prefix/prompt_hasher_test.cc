// PromptHasher on the bundled stories260K tokenizer: completion and chat bodies become the
// token ids the server would run, then the engine's chained block hashes.
#include "router/prefix/prompt_hasher.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/block_hash.h"
#include "base/check.h"

namespace surge::router {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

class PromptHasherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto tokenizer = Tokenizer::FromDirectory("models/stories260K");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    tokenizer_ = std::move(tokenizer).value().release();
  }
  static void TearDownTestSuite() { delete tokenizer_; }

  static PromptHasher Make(const KvConfig& config = {.block_size = 4, .hash_seed = 0, .num_total_blocks = 64}) {
    auto hasher = PromptHasher::Create(*tokenizer_, ReadFile("tests/data/chat_template_simple.jinja"), config);
    CHECK(hasher.ok()) << hasher.status().ToString();
    return std::move(hasher).value();
  }

  static Tokenizer* tokenizer_;
};

Tokenizer* PromptHasherTest::tokenizer_ = nullptr;

TEST_F(PromptHasherTest, ACompletionPromptIsEncodedWithSpecialTokens) {
  const PromptHasher hasher = Make();
  const std::string text = "Once upon a time there was a little girl named Lily.";
  auto tokens = hasher.PromptTokens("/v1/completions", R"({"model":"m","prompt":")" + text + R"("})");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(*tokens, tokenizer_->Encode(text, true));
  auto hashes = hasher.PromptBlockHashes("/v1/completions", R"({"model":"m","prompt":")" + text + R"("})");
  ASSERT_TRUE(hashes.ok());
  EXPECT_EQ(*hashes, ChainedBlockHashes(*tokens, 4));
  EXPECT_EQ(hashes->size(), tokens->size() / 4);
  // add_special_tokens: false is honoured, as the server honours it.
  auto plain = hasher.PromptTokens("/v1/completions",
                                   R"({"model":"m","prompt":")" + text + R"(","add_special_tokens":false})");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, tokenizer_->Encode(text, false));
}

TEST_F(PromptHasherTest, TokenPromptsPassThroughAndTheSeedIsTheFirstParent) {
  const PromptHasher hasher = Make({.block_size = 2, .hash_seed = 9, .num_total_blocks = 8});
  auto hashes = hasher.PromptBlockHashes("/v1/completions", R"({"model":"m","prompt":[5,6,7,8,9]})");
  ASSERT_TRUE(hashes.ok()) << hashes.status().ToString();
  const std::vector<int32_t> tokens{5, 6, 7, 8};
  EXPECT_EQ(*hashes, ChainedBlockHashes(tokens, 2, 9));
}

TEST_F(PromptHasherTest, AChatIsRenderedWithTheTemplateThenEncodedWithoutSpecialTokens) {
  const PromptHasher hasher = Make();
  auto tokens = hasher.PromptTokens(
      "/v1/chat/completions",
      R"({"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi there"}]})");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  const std::string text = tokenizer_->bos_token() + "system: Be brief.\nuser: Hi there\nassistant:";
  EXPECT_EQ(*tokens, tokenizer_->Encode(text, false));
}

TEST_F(PromptHasherTest, RefusesWhatTheServerRefuses) {
  const PromptHasher hasher = Make();
  EXPECT_EQ(hasher.PromptTokens("/v1/embeddings", "{}").status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(hasher.PromptTokens("/v1/completions", R"({"model":"m"})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(hasher.PromptTokens("/v1/chat/completions", "not json").status().code(), StatusCode::kInvalidArgument);
  auto no_template = PromptHasher::Create(*tokenizer_, "", {.block_size = 4, .hash_seed = 0, .num_total_blocks = 8});
  ASSERT_TRUE(no_template.ok());  // stories260K has no template of its own
  EXPECT_FALSE(no_template->PromptTokens("/v1/chat/completions",
                                         R"({"model":"m","messages":[{"role":"user","content":"x"}]})")
                   .ok());
  EXPECT_FALSE(PromptHasher::Create(*tokenizer_, "{% if %}", {.block_size = 4}).ok());
  EXPECT_FALSE(PromptHasher::Create(*tokenizer_, "", {.block_size = 0}).ok());
}

}  // namespace
}  // namespace surge::router
