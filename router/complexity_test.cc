#include "router/complexity.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace surge::router {
namespace {

using Json = nlohmann::json;

ComplexityRule AllRules() {
  return {.small_pool = "small", .large_pool = "large", .prompt_tokens_over = 100, .max_tokens_over = 512,
          .reasoning = true, .code = true};
}

std::string Pool(const ComplexityRule& rule, const Json& body) { return *ChoosePoolByComplexity(rule, body).pool; }

TEST(ComplexityTest, SimpleChatStaysSmall) {
  const Json body = {{"messages", {{{"role", "user"}, {"content", "What is the capital of France?"}}}},
                     {"max_tokens", 64}};
  const ComplexityChoice choice = ChoosePoolByComplexity(AllRules(), body);
  EXPECT_EQ(*choice.pool, "small");
  EXPECT_EQ(choice.reason, "simple");
}

TEST(ComplexityTest, EachRuleSendsLarge) {
  const ComplexityRule rule = AllRules();
  EXPECT_EQ(ChoosePoolByComplexity(rule, {{"prompt", "hi"}, {"max_tokens", 1024}}).reason, "max_tokens");
  EXPECT_EQ(ChoosePoolByComplexity(rule, {{"messages", Json::array()}, {"reasoning_effort", "high"}}).reason,
            "reasoning");
  EXPECT_EQ(ChoosePoolByComplexity(rule, {{"input", "x"}, {"reasoning", {{"effort", "medium"}}}}).reason, "reasoning");
  EXPECT_EQ(ChoosePoolByComplexity(rule, {{"prompt", std::string(2000, 'a')}}).reason, "prompt_tokens");
  const Json code = {{"messages", {{{"role", "user"}, {"content", "Why does this fail?\n```\nint x = f();\n```"}}}}};
  EXPECT_EQ(ChoosePoolByComplexity(rule, code).reason, "code");
  EXPECT_EQ(Pool(rule, code), "large");
}

TEST(ComplexityTest, DisabledRulesDoNotFire) {
  ComplexityRule rule{.small_pool = "small", .large_pool = "large"};
  EXPECT_EQ(Pool(rule, {{"prompt", std::string(5000, 'a')}, {"max_tokens", 4096}, {"reasoning_effort", "high"}}),
            "small");
  rule.reasoning = true;
  EXPECT_EQ(Pool(rule, {{"reasoning_effort", "none"}}), "small");
  EXPECT_EQ(Pool(rule, {{"reasoning_effort", "minimal"}}), "small");
}

TEST(ComplexityTest, LooksLikeCode) {
  EXPECT_TRUE(LooksLikeCode("see ```py\nprint(1)\n```"));
  EXPECT_TRUE(LooksLikeCode("def f(x):\n    return x + 1\n"));
  EXPECT_TRUE(LooksLikeCode("#include <stdio.h>\nint main() {\n"));
  EXPECT_FALSE(LooksLikeCode("Tell me a story about a dragon; make it short."));
  EXPECT_FALSE(LooksLikeCode("One line ending in a semicolon;"));  // one line is not enough
}

}  // namespace
}  // namespace surge::router
