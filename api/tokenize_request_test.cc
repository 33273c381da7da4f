// /tokenize and /detokenize bodies, and the /tokenize answer.
#include "api/tokenize_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge::api {
namespace {

TEST(TokenizeRequestTest, PromptDefaultsToSpecialTokens) {
  ApiResult<TokenizeRequest> request = ParseTokenizeRequest(R"({"model": "m", "prompt": "Hi"})");
  ASSERT_TRUE(request.ok());
  EXPECT_FALSE(request->has_messages);
  EXPECT_EQ(request->prompt, "Hi");
  EXPECT_TRUE(request->add_special_tokens);
  EXPECT_EQ(request->model, "m");
}

TEST(TokenizeRequestTest, MessagesDefaultToNoSpecialTokens) {
  ApiResult<TokenizeRequest> request = ParseTokenizeRequest(
      R"({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": false})");
  ASSERT_TRUE(request.ok());
  EXPECT_TRUE(request->has_messages);
  EXPECT_FALSE(request->add_special_tokens);
  EXPECT_FALSE(request->chat.add_generation_prompt);
  EXPECT_EQ(request->chat.messages[0]["content"], "Hi");
}

TEST(TokenizeRequestTest, Errors) {
  EXPECT_EQ(ParseTokenizeRequest(R"({"model": "m"})").error().param, "prompt");
  EXPECT_EQ(ParseTokenizeRequest(R"({"prompt": 3})").error().param, "prompt");
  EXPECT_EQ(ParseTokenizeRequest(R"({"prompt": "a", "messages": []})").error().param, "prompt");
  EXPECT_EQ(ParseTokenizeRequest(R"({"messages": []})").error().param, "messages");
  EXPECT_EQ(ParseTokenizeRequest(R"({"prompt": "a", "add_special_tokens": 1})").error().param,
            "add_special_tokens");
  EXPECT_EQ(ParseDetokenizeRequest(R"({"tokens": "1 2"})").error().param, "tokens");
  EXPECT_EQ(ParseDetokenizeRequest(R"({"tokens": [1, -2]})").error().param, "tokens");
  EXPECT_EQ(ParseDetokenizeRequest(R"({})").error().param, "tokens");
}

TEST(TokenizeRequestTest, Detokenize) {
  ApiResult<DetokenizeRequest> request = ParseDetokenizeRequest(R"({"model": "m", "tokens": [1, 2, 3]})");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(DetokenizeResponseJson("a\"b"), R"({"prompt":"a\"b"})");
}

TEST(TokenizeRequestTest, ResponseShape) {
  EXPECT_EQ(TokenizeResponseJson({1, 5}, 512, ""), R"({"count":2,"max_model_len":512,"tokens":[1,5]})");
  EXPECT_EQ(TokenizeResponseJson({1}, 512, "<s>hi"),
            R"({"count":1,"max_model_len":512,"tokens":[1],"prompt":"<s>hi"})");
}

}  // namespace
}  // namespace surge::api
