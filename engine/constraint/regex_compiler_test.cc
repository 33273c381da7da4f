#include <regex>

#include <gtest/gtest.h>

#include "engine/constraint/constraint_test_util.h"

namespace surge::testing {
namespace {

std::shared_ptr<const CompiledGrammar> Regex(const std::string& pattern) {
  return MustCompile({ConstraintKind::kRegex, pattern, {}});
}

// Every ASCII string over `alphabet` up to `max_length` long: the grammar agrees with
// std::regex (ECMAScript, whole match).
void CheckAgainstStdRegex(const std::string& pattern, const std::string& alphabet, int max_length) {
  auto g = Regex(pattern);
  ASSERT_NE(g, nullptr);
  std::regex re(pattern);
  std::vector<std::string> frontier = {""};
  for (int length = 0; length <= max_length; ++length) {
    std::vector<std::string> next;
    for (const std::string& s : frontier) {
      ASSERT_EQ(Matches(g, s), std::regex_match(s, re)) << pattern << " on '" << s << "'";
      if (length < max_length) for (char c : alphabet) next.push_back(s + c);
    }
    frontier = std::move(next);
  }
}

TEST(RegexTest, AgreesWithStdRegexOnAllShortStrings) {
  CheckAgainstStdRegex("a(b|c)*d", "abcd", 6);
  CheckAgainstStdRegex("[a-c]{2,3}x?", "abcx", 5);
  CheckAgainstStdRegex("(ab)+|c*", "abc", 6);
  CheckAgainstStdRegex("[^a]b{1,}", "ab.", 5);
  CheckAgainstStdRegex("\\d+\\.\\d{2}", "1.a", 6);
  CheckAgainstStdRegex("(?:x|y)\\w\\s?", "xy_ #", 4);
  CheckAgainstStdRegex("a{0}b{2}c{1,}", "abc", 6);
  CheckAgainstStdRegex("\\[\\]\\(\\)\\.\\*", "[]().*", 6);
  CheckAgainstStdRegex("a.c", "ab\nc", 4);
  CheckAgainstStdRegex("((a|b)c?)*?d", "abcd", 5);
}

TEST(RegexTest, Utf8DotAndNegatedClassesMatchWholeCharacters) {
  auto dot = Regex("a.b");
  EXPECT_TRUE(Matches(dot, "aéb"));
  EXPECT_TRUE(Matches(dot, "a😀b"));
  EXPECT_TRUE(Matches(dot, "a\xE4\xB8\xAD" "b"));
  EXPECT_FALSE(Matches(dot, "a\xC3" "b"));
  EXPECT_FALSE(Matches(dot, "a\xC3\xA9\xA9" "b"));
  EXPECT_FALSE(Matches(dot, "a\nb"));
  auto neg = Regex("[^x]+");
  EXPECT_TRUE(Matches(neg, "é😀"));
  EXPECT_FALSE(Matches(neg, "\xF0\x9F\x98"));
  EXPECT_FALSE(Matches(neg, "\xED\xA0\x80"));  // a surrogate is not a character
  auto range = Regex("[α-γ]\\u00e9\\x41\\u{1F600}");
  EXPECT_TRUE(Matches(range, "βéA😀"));
  EXPECT_FALSE(Matches(range, "δéA😀"));
  EXPECT_TRUE(Matches(Regex("^ab$"), "ab"));
}

TEST(RegexTest, UnsupportedSyntaxIsAnErrorNamingIt) {
  auto error = [](const std::string& p) { return CompileError({ConstraintKind::kRegex, p, {}}); };
  EXPECT_EQ(error("(a)\\1"), "regex: backreference '\\1' is not supported at position 4");
  EXPECT_NE(error("a(?=b)").find("lookaround"), std::string::npos);
  EXPECT_NE(error("a(?<!b)").find("lookaround"), std::string::npos);
  EXPECT_NE(error("\\bword").find("word boundary"), std::string::npos);
  EXPECT_NE(error("(?i)a").find("group syntax"), std::string::npos);
  EXPECT_NE(error("a*+").find("possessive"), std::string::npos);
  EXPECT_NE(error("\\p{L}").find("unicode property"), std::string::npos);
  EXPECT_NE(error("[[:alpha:]]").find("POSIX"), std::string::npos);
  EXPECT_NE(error("a^b").find("anchor"), std::string::npos);
  EXPECT_NE(error("(ab").find("missing ')'"), std::string::npos);
  EXPECT_NE(error("ab)").find("unmatched ')'"), std::string::npos);
  EXPECT_NE(error("*a").find("nothing to repeat at position 0"), std::string::npos);
  EXPECT_NE(error("[z-a]").find("bad class range"), std::string::npos);
  EXPECT_NE(error("a{5,2}").find("n < m"), std::string::npos);
  EXPECT_NE(error("a{99999}").find("repeat count"), std::string::npos);
  EXPECT_NE(error(std::string(5000, 'a')).find("longer than"), std::string::npos);
}

TEST(ChoiceTest, ExactlyOneOfTheChoices) {
  auto g = MustCompile({ConstraintKind::kChoice, "", {"yes", "no", "yes please", "é"}});
  EXPECT_TRUE(g->pure_dfa());
  for (const char* ok : {"yes", "no", "yes please", "é"}) EXPECT_TRUE(Matches(g, ok)) << ok;
  for (const char* bad : {"", "ye", "yes ", "nope", "yesno"}) EXPECT_FALSE(Matches(g, bad)) << bad;
  Matcher m(g);
  ASSERT_TRUE(m.AcceptBytes("no"));
  EXPECT_TRUE(m.IsComplete());
  EXPECT_EQ(CompileError({ConstraintKind::kChoice, "", {}}), "choice: the list of choices is empty");
}

}  // namespace
}  // namespace surge::testing
