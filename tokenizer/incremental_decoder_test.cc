// IncrementalDecoder: complete UTF-8 only, and the stream adds up to Decode exactly.
#include <random>

#include <gtest/gtest.h>

#include "tokenizer/test_tokenizers.h"
#include "tokenizer/tokenizer.h"
#include "base/utf8.h"

namespace surge {
namespace {

// Streams `ids` and returns the pieces Add returned (Flush's output appended last).
std::vector<std::string> Stream(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, bool skip = true) {
  IncrementalDecoder decoder(tokenizer, skip);
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(decoder.Add(id));
  pieces.push_back(decoder.Flush());
  return pieces;
}

std::string Join(const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& piece : pieces) out += piece;
  return out;
}

void ExpectStreamsLikeDecode(const Tokenizer& tokenizer, const std::string& text) {
  for (bool skip : {true, false}) {
    std::vector<int32_t> ids = tokenizer.Encode(text);
    std::vector<std::string> pieces = Stream(tokenizer, ids, skip);
    for (const std::string& piece : pieces) EXPECT_TRUE(IsValidUtf8(piece)) << text;
    EXPECT_EQ(Join(pieces), tokenizer.Decode(ids, skip)) << text;
  }
}

TEST(IncrementalDecoderTest, ByteFallbackCharactersSplitAcrossTokens) {
  auto tokenizer = Tokenizer::FromDirectory("models/stories260K");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  // "日本" is six byte tokens after BOS and "▁": nothing until each character is whole.
  std::vector<int32_t> ids = (*tokenizer)->Encode("日本");
  ASSERT_EQ(ids, std::vector<int32_t>({1, 410, 233, 154, 168, 233, 159, 175}));
  std::vector<std::string> pieces = Stream(**tokenizer, ids);
  EXPECT_EQ(pieces, std::vector<std::string>({"", "", "", "", "日", "", "", "本", ""}));
  for (const std::string text : {"Hello 日本 world", " 😀👍🏽 x", "  two leading", "a\n\nb ", "<s> end </s>"}) {
    ExpectStreamsLikeDecode(**tokenizer, text);
  }
}

TEST(IncrementalDecoderTest, FirstTokenLeadingSpaceRule) {
  auto tokenizer = Tokenizer::FromDirectory("models/stories260K");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::vector<int32_t> ids = (*tokenizer)->Encode("Once upon a time", false);  // "▁Once" ... no BOS
  std::vector<std::string> pieces = Stream(**tokenizer, ids);
  EXPECT_EQ(pieces.front(), "Once");
  EXPECT_EQ(Join(pieces), "Once upon a time");
}

TEST(IncrementalDecoderTest, ByteLevelCharactersSplitAcrossTokens) {
  // No merges: every byte is its own token, so 中 (3 bytes) and 👍🏽 (8 bytes) span tokens.
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({}).dump(), "", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::vector<int32_t> ids = (*tokenizer)->Encode("a中👍🏽");
  ASSERT_EQ(ids.size(), 1u + 3u + 8u);
  std::vector<std::string> pieces = Stream(**tokenizer, ids);
  EXPECT_EQ(pieces[0], "a");
  EXPECT_EQ(pieces[1], "");
  EXPECT_EQ(pieces[2], "");
  EXPECT_EQ(pieces[3], "中");
  EXPECT_EQ(pieces[7], "👍");
  EXPECT_EQ(pieces[11], "🏽");
  EXPECT_EQ(Join(pieces), "a中👍🏽");
  for (const std::string text : {"汉字和emoji🎉混合", "👨‍👩‍👧‍👦 family", "  spaces  ", "tab\tnew\nline"}) {
    ExpectStreamsLikeDecode(**tokenizer, text);
  }
}

TEST(IncrementalDecoderTest, IncompleteTailComesOutOnFlush) {
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({}).dump(), "", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::vector<int32_t> ids = (*tokenizer)->Encode("x中");
  ids.pop_back();  // the last byte of 中 never arrives
  std::vector<std::string> pieces = Stream(**tokenizer, ids);
  EXPECT_EQ(pieces, std::vector<std::string>({"x", "", "", "\xEF\xBF\xBD"}));
  EXPECT_EQ(Join(pieces), (*tokenizer)->Decode(ids));
  // A byte that can never start a character is not held back.
  EXPECT_EQ(Stream(**tokenizer, {0x80, 'a'}), std::vector<std::string>({"\xEF\xBF\xBD", "a", ""}));
}

TEST(IncrementalDecoderTest, CleanUpSpacesStreamsLikeDecode) {
  // clean_up_tokenization_spaces (the tokenizers.js default) rewrites " ." to "." etc.
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({}).dump(),
                                       "{\"clean_up_tokenization_spaces\": true}", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  for (const std::string text : {"Hello . world , yes !", "it ' s fine", "do n't", "I 'm here , you 're there ."}) {
    ExpectStreamsLikeDecode(**tokenizer, text);
  }
  EXPECT_EQ((*tokenizer)->Decode((*tokenizer)->Encode("a . b")), "a. b");
}

TEST(IncrementalDecoderTest, DecodersThatRewriteTheEndFallBackToFullDecodes) {
  // Strip with stop=1 removes the text's last space: not prefix-stable.
  nlohmann::json json = testing::ByteLevelTokenizerJson({});
  json["decoder"] = {{"type", "Sequence"},
                     {"decoders", {{{"type", "ByteLevel"}}, {{"type", "Strip"}, {"content", " "}, {"start", 0}, {"stop", 1}}}}};
  auto tokenizer = Tokenizer::FromJson(json.dump(), "", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  EXPECT_EQ((*tokenizer)->Decode((*tokenizer)->Encode("a b ")), "a b");
  for (const std::string text : {"a b ", "hello world", "日本 ", " x  y  "}) ExpectStreamsLikeDecode(**tokenizer, text);
}

TEST(IncrementalDecoderTest, RandomBytesAndIdsNeverBreakTheInvariants) {
  auto byte_level = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({{"a", "b"}}).dump(), "", "test");
  auto stories = Tokenizer::FromDirectory("models/stories260K");
  ASSERT_TRUE(byte_level.ok() && stories.ok());
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes(rng() % 40, '\0');
    for (char& byte : bytes) byte = static_cast<char>(rng() % 256);
    // Byte-level BPE round-trips any text; invalid UTF-8 comes back as U+FFFD.
    EXPECT_EQ((*byte_level)->Decode((*byte_level)->Encode(bytes)), Utf8Lossy(bytes));
    ExpectStreamsLikeDecode(**stories, bytes);
    std::vector<int32_t> ids(rng() % 20);
    for (int32_t& id : ids) id = static_cast<int32_t>(rng() % 600) - 20;  // some out of range
    for (const Tokenizer* tokenizer : {byte_level->get(), stories->get()}) {
      for (bool skip : {true, false}) {
        std::vector<std::string> pieces = Stream(*tokenizer, ids, skip);
        for (const std::string& piece : pieces) EXPECT_TRUE(IsValidUtf8(piece));
        EXPECT_EQ(Join(pieces), tokenizer->Decode(ids, skip));
      }
    }
  }
}

}  // namespace
}  // namespace surge
