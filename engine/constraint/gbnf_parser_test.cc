#include <gtest/gtest.h>

#include "engine/constraint/constraint_test_util.h"

namespace surge::testing {
namespace {

std::shared_ptr<const CompiledGrammar> Gbnf(const std::string& text) {
  return MustCompile({ConstraintKind::kGrammar, text, {}});
}
std::string GbnfError(const std::string& text) {
  return CompileError({ConstraintKind::kGrammar, text, {}});
}

// llama.cpp's grammars/json.gbnf (recursive), abridged only in its number rule.
constexpr char kJsonGbnf[] = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)";

TEST(GbnfTest, RecursiveJsonGrammar) {
  auto g = Gbnf(kJsonGbnf);
  EXPECT_FALSE(g->pure_dfa());
  EXPECT_TRUE(Matches(g, R"({"a": [1, 2.5, {"b": null}], "c": "x\ny"})"));
  EXPECT_TRUE(Matches(g, "{\n  \"deep\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}"));
  EXPECT_FALSE(Matches(g, R"({"a": [1, 2,]})"));
  EXPECT_FALSE(Matches(g, R"({"a" 1})"));
  EXPECT_FALSE(Matches(g, "{\"a\":[[[1]]}"));
}

TEST(GbnfTest, ClassesLiteralsRepetitionAndDot) {
  auto g = Gbnf("root ::= greeting \" \" name{1,2} \"!\"? tail\n"
                "greeting ::= \"hi\" | \"hello\"  # a comment\n"
                "name ::= [A-Z] [a-z\\-]*\n"
                "tail ::= (. | \"\\u00e9\")*\n");
  EXPECT_TRUE(Matches(g, "hi Bob"));
  EXPECT_TRUE(Matches(g, "hello AnnBo-b!😀é"));
  EXPECT_FALSE(Matches(g, "hey Bob"));
  EXPECT_FALSE(Matches(g, "hi bob"));
}

TEST(GbnfTest, RightRecursionStaysShallow) {
  auto g = Gbnf("root ::= \"a\" root | \"b\"\n");
  std::string text(5000, 'a');
  EXPECT_TRUE(Matches(g, text + "b"));  // tail calls: the stack does not grow
  auto balanced = Gbnf("root ::= \"(\" root \")\" root | \"\"\n");
  EXPECT_TRUE(Matches(balanced, "(()(()))()"));
  EXPECT_FALSE(Matches(balanced, "(()"));
  EXPECT_FALSE(Matches(balanced, "())"));
}

TEST(GbnfTest, ErrorsGiveLineAndColumn) {
  EXPECT_EQ(GbnfError("root ::= foo\n"), "gbnf: line 1, column 10: undefined rule 'foo'");
  EXPECT_EQ(GbnfError("root ::= \"a\"\nx = \"b\"\n"), "gbnf: line 2, column 3: expected '::=' after the rule name");
  EXPECT_EQ(GbnfError("root ::= \"abc\n"), "gbnf: line 1, column 14: unterminated string literal");
  EXPECT_EQ(GbnfError("root ::= [a-\n"), "gbnf: line 1, column 13: unterminated character class");
  EXPECT_EQ(GbnfError("root ::= (\"a\"\n"), "gbnf: line 2, column 1: expected ')'");
  EXPECT_EQ(GbnfError("a ::= \"x\"\n"), "gbnf: missing rule 'root'");
  EXPECT_EQ(GbnfError("root ::= \"a\"\nroot ::= \"b\"\n"), "gbnf: line 2, column 1: rule 'root' is defined twice");
  EXPECT_EQ(GbnfError("root ::= \"\\q\"\n"), "gbnf: line 1, column 12: unknown escape '\\q'");
  EXPECT_NE(GbnfError("root ::= root \"a\" | \"b\"\n").find("left-recursive"), std::string::npos);
  EXPECT_NE(GbnfError("root ::= [b-a]\n").find("bad character range"), std::string::npos);
}

TEST(MatcherTest, CopyIsRollback) {
  auto g = Gbnf(kJsonGbnf);
  Matcher m(g);
  ASSERT_TRUE(m.AcceptBytes(R"({"a": [1, )"));
  Matcher saved = m;
  ASSERT_TRUE(m.AcceptBytes(R"(2]})"));
  EXPECT_TRUE(m.CanEnd());
  m = saved;
  EXPECT_FALSE(m.CanEnd());
  EXPECT_FALSE(m.Accept(']'));
  EXPECT_EQ(m.state(), saved.state());  // a rejected byte changes nothing
  EXPECT_FALSE(m.AcceptBytes("3x"));
  EXPECT_EQ(m.state(), saved.state());
  ASSERT_TRUE(m.AcceptBytes("3]}"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.IsComplete());  // ws may follow
}

TEST(MatcherTest, StateStaysSmall) {
  auto g = MustCompile({ConstraintKind::kJsonObject, "", {}});
  Matcher m(g);
  std::string text = "{\"a\":";
  for (int i = 0; i < 15; ++i) text += "[";
  ASSERT_TRUE(m.AcceptBytes(text));
  EXPECT_LE(m.state().num_words(), 64u);  // one head over 16 shared frames
}

}  // namespace
}  // namespace surge::testing
