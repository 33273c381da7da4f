// Tokenizer end to end: the bundled model's goldens, loading errors, the accessors.
#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "tokenizer/test_tokenizers.h"

namespace surge {
namespace {

using Json = nlohmann::json;
constexpr char kStories[] = "models/stories260K";

std::unique_ptr<Tokenizer> LoadStories() {
  auto tokenizer = Tokenizer::FromDirectory(kStories);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

Json Goldens() {
  auto text = ReadFileToString(std::string(kStories) + "/tokenizer_goldens.json");
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return Json::parse(text.ok() ? *text : "{}");
}

TEST(TokenizerGoldenTest, Stories260KCases) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  Json goldens = Goldens();
  ASSERT_GT(goldens["cases"].size(), 20u);
  for (const Json& golden : goldens["cases"]) {
    const std::string text = golden["text"];
    const auto ids = golden["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer->Encode(text), ids) << "text: " << text;
    EXPECT_EQ(tokenizer->Decode(ids), golden["decoded"].get<std::string>()) << "text: " << text;
  }
}

TEST(TokenizerGoldenTest, Stories260KSpecialTextSplitsOutSpecialTokens) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  Json goldens = Goldens();
  ASSERT_EQ(goldens["special_text_cases"].size(), 3u);
  for (const Json& golden : goldens["special_text_cases"]) {
    const std::string text = golden["text"];
    // The HF behaviour (added specials match inside text), not llama2.c's.
    EXPECT_EQ(tokenizer->Encode(text), golden["ids"].get<std::vector<int32_t>>()) << "text: " << text;
  }
}

TEST(TokenizerTest, Stories260KAccessors) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->vocab_size(), 512);
  EXPECT_EQ(tokenizer->bos_token_id(), 1);
  EXPECT_EQ(tokenizer->eos_token_ids(), std::vector<int32_t>({2}));
  EXPECT_EQ(tokenizer->bos_token(), "<s>");
  EXPECT_EQ(tokenizer->eos_token(), "</s>");
  EXPECT_TRUE(tokenizer->add_bos_token());
  EXPECT_FALSE(tokenizer->add_eos_token());
  EXPECT_TRUE(tokenizer->IsSpecial(0));
  EXPECT_TRUE(tokenizer->IsSpecial(1));
  EXPECT_FALSE(tokenizer->IsSpecial(3));
  EXPECT_FALSE(tokenizer->IsSpecial(-1));
  EXPECT_FALSE(tokenizer->IsSpecial(512));
  EXPECT_EQ(tokenizer->TokenToId("<0x0A>"), 13);
  EXPECT_EQ(tokenizer->TokenToId("no such token"), std::nullopt);
  EXPECT_EQ(tokenizer->IdToToken(1), "<s>");
  EXPECT_EQ(tokenizer->chat_template(), "");
}

TEST(TokenizerTest, AddSpecialTokensFollowsTheTemplate) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> with = tokenizer->Encode("Once upon a time");
  std::vector<int32_t> without = tokenizer->Encode("Once upon a time", false);
  ASSERT_EQ(with.size(), without.size() + 1);
  EXPECT_EQ(with[0], 1);
  EXPECT_EQ(std::vector<int32_t>(with.begin() + 1, with.end()), without);
}

TEST(TokenizerTest, DecodeSkipsOrKeepsSpecials) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> ids = tokenizer->Encode("Hello");
  EXPECT_EQ(tokenizer->Decode(ids, true), "Hello");
  EXPECT_EQ(tokenizer->Decode(ids, false), "<s> Hello");
}

TEST(TokenizerTest, DecodeSkipsOutOfRangeIds) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> ids = tokenizer->Encode("Hello", false);
  std::vector<int32_t> with_junk = {-5, 100000};
  with_junk.insert(with_junk.end(), ids.begin(), ids.end());
  with_junk.push_back(512);
  EXPECT_EQ(tokenizer->Decode(with_junk), "Hello");
  EXPECT_EQ(tokenizer->Decode({}), "");
}

TEST(TokenizerTest, InvalidUtf8IsReplacedNotFatal) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  const std::string invalid = "ab\xFF\xC3(\xE6\x97";  // stray byte, bad continuation, truncated
  const std::string replaced = "ab\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD";
  EXPECT_EQ(tokenizer->Encode(invalid), tokenizer->Encode(replaced));
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode(invalid)), replaced);
}

TEST(TokenizerTest, ByteLevelRoundTripsArbitraryText) {
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({{"h", "e"}, {"he", "l"}}).dump(), "", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  for (const std::string text : {"hello world", "  spaces\t\n", "日本語 🤖 👍🏽", "I'M don't"}) {
    EXPECT_EQ((*tokenizer)->Decode((*tokenizer)->Encode(text)), text);
  }
  EXPECT_EQ((*tokenizer)->Encode("hel"), std::vector<int32_t>({257}));
  EXPECT_EQ((*tokenizer)->bos_token_id(), -1);
  EXPECT_TRUE((*tokenizer)->eos_token_ids().empty());
}

TEST(TokenizerTest, ConfigSuppliesSpecialsAndChatTemplate) {
  Json added = Json::array({testing::AddedTokenJson(300, "<|bos|>", true), testing::AddedTokenJson(301, "<|eos|>", true)});
  Json config = {{"bos_token", {{"content", "<|bos|>"}}}, {"eos_token", "<|eos|>"}, {"chat_template", "{{ x }}"},
                 {"add_bos_token", true}};
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({}, added).dump(), config.dump(), "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  EXPECT_EQ((*tokenizer)->bos_token_id(), 300);
  EXPECT_EQ((*tokenizer)->eos_token_ids(), std::vector<int32_t>({301}));
  EXPECT_EQ((*tokenizer)->chat_template(), "{{ x }}");
  EXPECT_EQ((*tokenizer)->vocab_size(), 302);
  EXPECT_TRUE((*tokenizer)->IsSpecial(301));
}

TEST(TokenizerTest, ConcurrentEncodeMatchesSerial) {
  auto tokenizer = LoadStories();
  ASSERT_NE(tokenizer, nullptr);
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back("word" + std::to_string(i * 7919) + " and 日本 " + std::to_string(i));
  std::vector<std::vector<int32_t>> serial;
  for (const std::string& text : texts) serial.push_back(tokenizer->Encode(text));
  std::vector<std::thread> threads;
  std::vector<int> num_mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) num_mismatches[t] += tokenizer->Encode(texts[i]) != serial[i];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(num_mismatches, std::vector<int>(4, 0));
}

// Errors name the source and the problem, and never crash.
void ExpectLoadError(const Json& tokenizer_json, StatusCode code, const std::string& needle) {
  auto tokenizer = Tokenizer::FromJson(tokenizer_json.dump(), "", "my/tokenizer.json");
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_EQ(tokenizer.status().code(), code) << tokenizer.status().ToString();
  EXPECT_NE(tokenizer.status().message().find("my/tokenizer.json"), std::string::npos) << tokenizer.status().ToString();
  EXPECT_NE(tokenizer.status().message().find(needle), std::string::npos) << tokenizer.status().ToString();
}

TEST(TokenizerErrorTest, UnsupportedComponents) {
  Json base = testing::ByteLevelTokenizerJson({});
  Json unigram = base;
  unigram["model"]["type"] = "Unigram";
  ExpectLoadError(unigram, StatusCode::kUnimplemented, "model type 'Unigram'");
  Json pre = base;
  pre["pre_tokenizer"] = {{"type", "Whitespace"}};
  ExpectLoadError(pre, StatusCode::kUnimplemented, "pre_tokenizer type 'Whitespace'");
  Json normalizer = base;
  normalizer["normalizer"] = {{"type", "Precompiled"}};
  ExpectLoadError(normalizer, StatusCode::kUnimplemented, "normalizer type 'Precompiled'");
  Json decoder = base;
  decoder["decoder"] = {{"type", "CTC"}};
  ExpectLoadError(decoder, StatusCode::kUnimplemented, "decoder type 'CTC'");
}

TEST(TokenizerErrorTest, MalformedInput) {
  auto bad_json = Tokenizer::FromJson("{\"model\": [1, 2", "", "my/tokenizer.json");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_NE(bad_json.status().message().find("my/tokenizer.json: malformed JSON"), std::string::npos);
  ExpectLoadError(Json{{"version", "1.0"}}, StatusCode::kInvalidArgument, "no \"model\"");
  Json bad_vocab = testing::ByteLevelTokenizerJson({});
  bad_vocab["model"]["vocab"]["x"] = "not an id";
  ExpectLoadError(bad_vocab, StatusCode::kInvalidArgument, "malformed tokenizer");
  Json bad_regex = testing::ByteLevelTokenizerJson({});
  bad_regex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
  ExpectLoadError(bad_regex, StatusCode::kInvalidArgument, "does not compile");
  auto bad_config = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({}).dump(), "[", "my/tokenizer.json");
  ASSERT_FALSE(bad_config.ok());
  EXPECT_NE(bad_config.status().message().find("tokenizer_config.json"), std::string::npos);
}

TEST(TokenizerErrorTest, MissingFiles) {
  auto missing = Tokenizer::FromDirectory("no/such/dir");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no/such/dir/tokenizer.json"), std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() / "surge_tokenizer_test_malformed";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << "{ not json";
  auto malformed = Tokenizer::FromDirectory(dir.string());
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.status().message().find("tokenizer.json: malformed JSON"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace surge
