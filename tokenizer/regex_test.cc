// Oniguruma -> PCRE2 translation: the character semantics tokenizer.json patterns rely on.
#include "tokenizer/regex.h"

#include <gtest/gtest.h>

namespace surge {
namespace {

std::vector<std::string> Matches(const std::string& pattern, std::string_view text) {
  auto regex = Regex::FromOniguruma(pattern);
  EXPECT_TRUE(regex.ok()) << pattern << ": " << regex.status().ToString();
  if (!regex.ok()) return {};
  std::vector<MatchSpan> spans;
  (*regex)->FindAll(text, &spans);
  std::vector<std::string> out;
  for (auto [begin, end] : spans) out.emplace_back(text.substr(begin, end - begin));
  return out;
}

bool Full(const std::string& pattern, std::string_view text) {
  auto regex = Regex::FromOniguruma(pattern);
  return regex.ok() && (*regex)->FullMatch(text);
}

TEST(RegexTest, WhitespaceIsUnicodeWhiteSpace) {
  for (std::string_view space : {" ", "\t", "\n", "\x0B", "\r", "\xC2\x85", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\xA8"}) {
    EXPECT_TRUE(Full("\\s", space)) << space;
  }
  for (std::string_view other : {"\xE1\xA0\x8E" /* U+180E */, "\xEF\xBB\xBF" /* U+FEFF */, "\xE2\x80\x8B", "a"}) {
    EXPECT_FALSE(Full("\\s", other)) << other;
    EXPECT_TRUE(Full("\\S", other)) << other;
  }
  EXPECT_TRUE(Full("[^\\S\\n]", "\t"));
  EXPECT_FALSE(Full("[^\\S\\n]", "\n"));
}

TEST(RegexTest, CaseInsensitiveGroupsFoldAsciiOnly) {
  EXPECT_EQ(Matches("(?i:'s|'t|'re)", "'S 'T 'Re 's"), std::vector<std::string>({"'S", "'T", "'Re", "'s"}));
  EXPECT_FALSE(Full("(?i:'s)", "'\xC5\xBF"));  // U+017F LATIN SMALL LETTER LONG S
  EXPECT_FALSE(Full("(?i:k)", "\xE2\x84\xAA"));  // U+212A KELVIN SIGN
  EXPECT_TRUE(Full("(?i:[a-c])", "B"));
  EXPECT_FALSE(Full("a", "A"));  // outside the group nothing folds
}

TEST(RegexTest, Llama3PatternPieces) {
  const std::string pattern =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
      "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  EXPECT_EQ(Matches(pattern, "Hello world's 1234567 !!\n\n  x  "),
            std::vector<std::string>({"Hello", " world", "'s", " ", "123", "456", "7", " !!\n\n", " ", " x", "  "}));
  EXPECT_EQ(Matches(pattern, "日本語abc"), std::vector<std::string>({"日本語abc"}));
}

TEST(RegexTest, QuantifiersAnchorsAndEscapes) {
  EXPECT_EQ(Matches("a{,2}", "aaa"), std::vector<std::string>({"aa", "a", ""}));
  EXPECT_EQ(Matches("(?:ab){1}+", "ababx"), std::vector<std::string>({"abab"}));  // stacked, not possessive
  EXPECT_FALSE(Full("a++a", "aaa"));  // possessive keeps Oniguruma's meaning
  EXPECT_EQ(Matches("^a|b$", "a\nab\nb"), std::vector<std::string>({"a", "a", "b", "b"}));
  EXPECT_EQ(Matches("\\h+", "xyz 0fA9 g"), std::vector<std::string>({"0fA9"}));
  EXPECT_EQ(Matches("\\x{4E2D}|\\u6587", "中文"), std::vector<std::string>({"中", "文"}));
  EXPECT_EQ(Matches(".", "a\nb"), std::vector<std::string>({"a", "b"}));
  EXPECT_EQ(Matches("\\d+", "12 ٣٤ ①"), std::vector<std::string>({"12", "٣٤"}));
  EXPECT_EQ(Matches("\\w+", "a_b1 ²x é-"), std::vector<std::string>({"a_b1", "²x", "é"}));
}

TEST(RegexTest, NestedClassesIntersectionsAndPosix) {
  EXPECT_EQ(Matches("[a-z&&[^aeiou]]+", "hello"), std::vector<std::string>({"h", "ll"}));
  EXPECT_EQ(Matches("[[:digit:]x]+", "a1x2b"), std::vector<std::string>({"1x2"}));
  EXPECT_EQ(Matches("[^(\\s|[a-z])]+", "ab (C|D) e"), std::vector<std::string>({"C", "D"}));
  EXPECT_EQ(Matches("[\\p{L}&&[^\\p{Han}]]+", "ab中cd"), std::vector<std::string>({"ab", "cd"}));
  EXPECT_EQ(Matches("[]a]+", "a]b"), std::vector<std::string>({"a]"}));
  EXPECT_EQ(Matches("[a-c-]+", "b-d"), std::vector<std::string>({"b-"}));
}

TEST(RegexTest, EmptyMatchesAdvanceOneCodePoint) {
  EXPECT_EQ(Matches("x*", "中x"), std::vector<std::string>({"", "x", ""}));
}

TEST(RegexTest, BadPatternsAreErrors) {
  EXPECT_FALSE(Regex::FromOniguruma("(abc").ok());
  EXPECT_FALSE(Regex::FromOniguruma("[abc").ok());
  EXPECT_FALSE(Regex::FromOniguruma("[[:nope:]]").ok());
}

TEST(PatternTest, LiteralFindAndReplace) {
  Pattern space = Pattern::Literal(" ");
  EXPECT_EQ(space.ReplaceAll(" a b ", "\xE2\x96\x81"), "\xE2\x96\x81" "a\xE2\x96\x81" "b\xE2\x96\x81");
  std::vector<MatchSpan> spans;
  Pattern::Literal("aa").FindAll("aaaaa", &spans);
  EXPECT_EQ(spans, std::vector<MatchSpan>({{0, 2}, {2, 4}}));
}

}  // namespace
}  // namespace surge
