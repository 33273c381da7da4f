// Token estimates at admission and the usage read back at the end.
#include "router/auth/token_estimate.h"

#include <gtest/gtest.h>

namespace surge::router {
namespace {

using nlohmann::json;

TEST(TokenEstimateTest, CompletionsPromptPlusMaxTokensTimesN) {
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", "12345678"}, {"max_tokens", 10}}, true), 2 + 10);
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", "123456789"}, {"max_tokens", 10}, {"n", 3}}, true), 3 + 30);
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", {1, 2, 3, 4, 5}}, {"max_tokens", 1}}, true), 6);  // ids count exactly
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", {"abcd", "abcd"}}, {"max_tokens", 1}}, true), 3);
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", "abcd"}}, true), 1 + 256);  // no max_tokens
  TokenEstimateOptions options;
  options.default_max_tokens = 16;
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", "abcd"}}, true, std::nullopt, options), 17);
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", "ignored"}, {"max_tokens", 4}}, true, 100), 104);
}

TEST(TokenEstimateTest, ChatMessagesAndOtherShapes) {
  const json chat = {{"messages",
                      {{{"role", "system"}, {"content", "12345678"}},
                       {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "1234"}}}}}}},
                     {"max_completion_tokens", 7}};
  EXPECT_EQ(EstimateRequestTokens(chat, true), (4 + 2) + (4 + 1) + 7);
  EXPECT_EQ(EstimateRequestTokens(json{{"input", {"abcd", "abcdefgh"}}, {"max_tokens", 9}}, false), 3);  // embeddings
  EXPECT_EQ(EstimateRequestTokens(json{{"input", "abcd"}, {"max_output_tokens", 9}}, true), 10);  // responses
  EXPECT_EQ(EstimateRequestTokens(json::array(), true), 0);
  EXPECT_EQ(EstimateRequestTokens(json{{"prompt", 7.5}, {"max_tokens", -3}}, true), 1 + 256);
}

TEST(TokenEstimateTest, UsageOfAResponse) {
  using ordered = nlohmann::ordered_json;
  EXPECT_EQ(UsageTotalTokens(ordered{{"usage", {{"prompt_tokens", 3}, {"completion_tokens", 4}, {"total_tokens", 7}}}}), 7);
  EXPECT_EQ(UsageTotalTokens(ordered{{"usage", {{"input_tokens", 3}, {"output_tokens", 5}}}}), 8);
  EXPECT_EQ(UsageTotalTokens(ordered{{"usage", nullptr}}), std::nullopt);
  EXPECT_EQ(UsageTotalTokens(ordered{{"choices", ordered::array()}}), std::nullopt);
  // An engine's answer: counts that would overflow the sum, or are negative, are not believed.
  EXPECT_EQ(UsageTotalTokens(ordered::parse(R"({"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":1}})")),
            1);
  EXPECT_EQ(UsageTotalTokens(ordered{{"usage", {{"total_tokens", -5}, {"prompt_tokens", 2}, {"completion_tokens", 3}}}}), 5);
  EXPECT_EQ(UsageTotalTokens(ordered::parse(R"({"usage":{"total_tokens":18446744073709551615}})")), std::nullopt);
}

}  // namespace
}  // namespace surge::router
