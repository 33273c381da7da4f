// UTF-8 helpers, the byte-level map, normalizers, pre-tokenizers and decoders.
#include <gtest/gtest.h>

#include "tokenizer/byte_level.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "base/utf8.h"

namespace surge {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";
const std::string kMeta = "\xE2\x96\x81";

TEST(Utf8Test, LossyDecodingFollowsWhatwg) {
  EXPECT_EQ(Utf8Lossy("abc"), "abc");
  EXPECT_EQ(Utf8Lossy("\xE6\x97\xA5"), "日");
  EXPECT_EQ(Utf8Lossy("\xE6\x97"), kFffd);                  // truncated: one U+FFFD
  EXPECT_EQ(Utf8Lossy("\xE6\x97" "a"), kFffd + "a");        // maximal subpart, then 'a'
  EXPECT_EQ(Utf8Lossy("\x80\x80"), kFffd + kFffd);          // each stray continuation
  EXPECT_EQ(Utf8Lossy("\xC0\xAF"), kFffd + kFffd);          // overlong lead is invalid alone
  EXPECT_EQ(Utf8Lossy("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // surrogate
  EXPECT_EQ(Utf8Lossy("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(Utf8Lossy("\xF0\x9F\x98"), kFffd);
  EXPECT_TRUE(IsValidUtf8("日本😀"));
  EXPECT_FALSE(IsValidUtf8("\xE6\x97"));
}

TEST(Utf8Test, JsWhitespaceTrim) {
  EXPECT_EQ(TrimJsWhitespaceStart(" \t\xEF\xBB\xBF\xE3\x80\x80x "), "x ");
  EXPECT_EQ(TrimJsWhitespaceEnd(" x\n\xC2\xA0"), " x");
  EXPECT_EQ(TrimJsWhitespaceEnd("x\xC2\x85"), "x\xC2\x85");  // U+0085 is not JS whitespace
}

TEST(ByteLevelTest, MapIsGpt2s) {
  EXPECT_EQ(ByteToUnicode(' '), "\xC4\xA0");  // Ġ
  EXPECT_EQ(ByteToUnicode('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(ByteToUnicode('a'), "a");
  for (int byte = 0; byte < 256; ++byte) {
    size_t pos = 0;
    std::string_view mapped = ByteToUnicode(static_cast<uint8_t>(byte));
    EXPECT_EQ(UnicodeToByte(NextCodePoint(mapped, &pos)), byte);
  }
  EXPECT_EQ(UnicodeToByte(0x4E2D), -1);
}

TEST(NormalizerTest, SequencePrependReplace) {
  std::vector<std::unique_ptr<Normalizer>> steps;
  steps.push_back(MakePrependNormalizer(kMeta));
  steps.push_back(MakeReplaceNormalizer(Pattern::Literal(" "), kMeta));
  auto normalizer = MakeSequenceNormalizer(std::move(steps));
  EXPECT_EQ(normalizer->Normalize("a b"), kMeta + "a" + kMeta + "b");
  EXPECT_EQ(normalizer->Normalize(""), "");
}

TEST(NormalizerTest, UnicodeForms) {
  auto nfc = MakeUnicodeNormalizer(UnicodeForm::kNfc);
  auto nfkc = MakeUnicodeNormalizer(UnicodeForm::kNfkc);
  ASSERT_TRUE(nfc.ok() && nfkc.ok());
  EXPECT_EQ((*nfc)->Normalize("cafe\xCC\x81"), "caf\xC3\xA9");
  EXPECT_EQ((*nfc)->Normalize("\xE2\x84\xAA"), "K");  // Kelvin sign
  EXPECT_EQ((*nfc)->Normalize("\xEF\xAC\x81"), "\xEF\xAC\x81");  // ﬁ stays under NFC
  EXPECT_EQ((*nfkc)->Normalize("\xEF\xAC\x81"), "fi");
  EXPECT_EQ(MakeLowercaseNormalizer()->Normalize("ÀB ΣΑΣ"), "àb σας");
  EXPECT_EQ(MakeStripAccentsNormalizer()->Normalize("e\xCC\x81"), "e");
  EXPECT_EQ(MakeStripNormalizer(true, false)->Normalize("  x  "), "x  ");
}

TEST(PreTokenizerTest, SplitBehaviours) {
  // "a-b--c" split on "-" (delimiter segments flagged true).
  std::vector<std::pair<MatchSpan, bool>> segments = {
      {{0, 1}, false}, {{1, 2}, true}, {{2, 3}, false}, {{3, 4}, true}, {{4, 5}, true}, {{5, 6}, false}};
  auto pieces = [&](SplitBehavior behavior) {
    std::string text = "a-b--c";
    std::vector<std::string> out;
    for (auto [begin, end] : ApplySplitBehavior(segments, behavior)) out.push_back(text.substr(begin, end - begin));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces(SplitBehavior::kRemoved), V({"a", "b", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kIsolated), V({"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kMergedWithPrevious), V({"a-", "b-", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kMergedWithNext), V({"a", "-b", "-", "-c"}));
  EXPECT_EQ(pieces(SplitBehavior::kContiguous), V({"a", "-", "b", "--", "c"}));
}

TEST(PreTokenizerTest, SplitWithInvertAndLiteral) {
  auto split = MakeSplitPreTokenizer(Pattern::Literal(" "), SplitBehavior::kRemoved, false);
  EXPECT_EQ(PreTokenize(*split, "a b  c", 0), std::vector<std::string>({"a", "b", "c"}));
  auto regex = Regex::FromOniguruma("\\p{L}+");
  ASSERT_TRUE(regex.ok());
  auto inverted = MakeSplitPreTokenizer(Pattern::FromRegex(std::move(*regex)), SplitBehavior::kRemoved, true);
  EXPECT_EQ(PreTokenize(*inverted, "ab, cd!", 0), std::vector<std::string>({"ab", "cd"}));
}

TEST(PreTokenizerTest, ByteLevelWithAndWithoutRegex) {
  auto plain = MakeByteLevelPreTokenizer(false, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(PreTokenize(**plain, "a b\n", 0), std::vector<std::string>({"a\xC4\xA0" "b\xC4\x8A"}));
  auto gpt2 = MakeByteLevelPreTokenizer(true, true);
  ASSERT_TRUE(gpt2.ok());
  EXPECT_EQ(PreTokenize(**gpt2, "Hi there's 42", 0),
            std::vector<std::string>({"\xC4\xA0Hi", "\xC4\xA0there", "'s", "\xC4\xA0" "42"}));
}

TEST(PreTokenizerTest, MetaspaceSchemesAndSplit) {
  auto always = MakeMetaspacePreTokenizer(kMeta, PrependScheme::kAlways, false);
  EXPECT_EQ(PreTokenize(*always, "a b", 3), std::vector<std::string>({kMeta + "a" + kMeta + "b"}));
  auto first = MakeMetaspacePreTokenizer(kMeta, PrependScheme::kFirst, false);
  EXPECT_EQ(PreTokenize(*first, "a", 0), std::vector<std::string>({kMeta + "a"}));
  EXPECT_EQ(PreTokenize(*first, "a", 1), std::vector<std::string>({"a"}));
  auto never = MakeMetaspacePreTokenizer(kMeta, PrependScheme::kNever, true);
  EXPECT_EQ(PreTokenize(*never, "a b  c", 0), std::vector<std::string>({"a", kMeta + "b", kMeta, kMeta + "c"}));
}

TEST(PreTokenizerTest, Digits) {
  EXPECT_EQ(PreTokenize(*MakeDigitsPreTokenizer(true), "ab123c", 0), std::vector<std::string>({"ab", "1", "2", "3", "c"}));
  EXPECT_EQ(PreTokenize(*MakeDigitsPreTokenizer(false), "ab123c", 0), std::vector<std::string>({"ab", "123", "c"}));
}

std::string RunDecoder(const Decoder& decoder, std::vector<std::string> tokens, bool* incomplete = nullptr) {
  bool ignored = false;
  decoder.DecodeChain(&tokens, incomplete != nullptr ? incomplete : &ignored);
  std::string out;
  for (const std::string& token : tokens) out += token;
  return out;
}

TEST(DecoderTest, SentencePieceChain) {
  std::vector<std::unique_ptr<Decoder>> steps;
  steps.push_back(MakeReplaceDecoder(Pattern::Literal(kMeta), " "));
  steps.push_back(MakeByteFallbackDecoder());
  steps.push_back(MakeFuseDecoder());
  steps.push_back(MakeStripDecoder(" ", 1, 0));
  auto decoder = MakeSequenceDecoder(std::move(steps));
  EXPECT_EQ(RunDecoder(*decoder, {kMeta + "Hi", "<0xE6>", "<0x97>", "<0xA5>", kMeta + "x"}), "Hi日 x");
  bool incomplete = false;
  EXPECT_EQ(RunDecoder(*decoder, {"<0xE6>", "<0x97>"}, &incomplete), kFffd);
  EXPECT_TRUE(incomplete);
  EXPECT_EQ(RunDecoder(*decoder, {"<0x80>"}, &incomplete), kFffd);  // can never complete
  EXPECT_FALSE(incomplete);
  EXPECT_EQ(RunDecoder(*decoder, {"<0xE6>", kMeta}, &incomplete), kFffd + " ");
  EXPECT_FALSE(incomplete);
  EXPECT_TRUE(decoder->prefix_stable());
  EXPECT_FALSE(MakeStripDecoder(" ", 0, 1)->prefix_stable());
}

TEST(DecoderTest, MetaspaceAndByteLevel) {
  EXPECT_EQ(RunDecoder(*MakeMetaspaceDecoder(kMeta, true), {kMeta + "a", kMeta + "b"}), "a b");
  EXPECT_EQ(RunDecoder(*MakeMetaspaceDecoder(kMeta, false), {kMeta + "a"}), " a");
  TokenSet added = {"<|x|>"};
  auto byte_level = MakeByteLevelDecoder(&added);
  const std::string e6(ByteToUnicode(0xE6)), e97(ByteToUnicode(0x97)), ea5(ByteToUnicode(0xA5));
  EXPECT_EQ(RunDecoder(*byte_level, {"\xC4\xA0" "a", "<|x|>", e6, e97 + ea5}), " a<|x|>日");
  EXPECT_EQ(RunDecoder(*byte_level, {e6, "<|x|>"}), kFffd + "<|x|>");
}

}  // namespace
}  // namespace surge
