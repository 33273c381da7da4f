#include <gtest/gtest.h>

#include "engine/constraint/constraint_test_util.h"

namespace surge::testing {
namespace {

TEST(GrammarTest, SeparatedRepeatBounds) {
  Grammar g;
  RuleId root = g.AddRule("root");
  g.SetBody(root, g.SepRepeat(g.Byte('a'), g.Byte(','), 2, 4));
  g.set_root(root);
  auto compiled = CompileGrammar(g, ConstraintLimits());
  ASSERT_TRUE(compiled.ok());
  for (const char* ok : {"a,a", "a,a,a", "a,a,a,a"}) EXPECT_TRUE(Matches(*compiled, ok)) << ok;
  for (const char* bad : {"", "a", "a,", "aa", "a,a,a,a,a", ",a,a"}) EXPECT_FALSE(Matches(*compiled, bad)) << bad;
}

TEST(GrammarTest, UnproductiveBranchesArePruned) {
  Grammar g;
  RuleId root = g.AddRule("root");
  RuleId never = g.AddRule("never", /*call=*/true);
  g.SetBody(never, g.Seq({g.Byte('x'), g.Ref(never)}));  // no finite string
  g.SetBody(root, g.Alt({g.Literal("ab"), g.Seq({g.Byte('a'), g.Ref(never)})}));
  g.set_root(root);
  auto compiled = CompileGrammar(g, ConstraintLimits());
  ASSERT_TRUE(compiled.ok());
  Matcher m(*compiled);
  ASSERT_TRUE(m.Accept('a'));
  EXPECT_FALSE(m.Accept('x'));  // would be a dead end
  EXPECT_TRUE(m.Accept('b'));
  EXPECT_TRUE(m.IsComplete());
}

TEST(GrammarTest, EmptyLanguageIsAnError) {
  Grammar g;
  RuleId root = g.AddRule("root");
  g.SetBody(root, g.Alt({}));
  g.set_root(root);
  auto compiled = CompileGrammar(g, ConstraintLimits());
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("matches no string"), std::string::npos);
}

}  // namespace
}  // namespace surge::testing
