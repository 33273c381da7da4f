// Request bodies are bounded before anything walks them: the depth limit on bodies and
// tool-call arguments, and the count limits, each a 400 naming its field.
#include "api/request_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/tokenize_request.h"

namespace surge::api {
namespace {

using ::testing::HasSubstr;

std::string Nested(int depth, const std::string& open = "[", const std::string& close = "]") {
  std::string text;
  for (int i = 0; i < depth; ++i) text += open;
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

void ExpectInvalid(const ApiError& error, const std::string& param, const std::string& message) {
  EXPECT_EQ(error.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error.param, param);
  EXPECT_THAT(error.status.message(), HasSubstr(message));
}

TEST(ParseRequestObjectTest, DepthUpToTheLimitParses) {
  const std::string body = R"({"x": )" + Nested(63) + "}";
  ApiResult<Json> object = ParseRequestObject(body);
  ASSERT_TRUE(object.ok()) << object.error().status.ToString();
  ApiResult<Json> tighter = ParseRequestObject(body, {.max_json_depth = 10});
  ASSERT_FALSE(tighter.ok());
  ExpectInvalid(tighter.error(), "", "deeper than the limit of 10 levels");
}

TEST(ParseRequestObjectTest, HostileNestingIsRefusedEverywhereItCanSit) {
  const std::string deep = Nested(100000);
  const std::string message = R"({"role": "user", "content": )";
  const std::vector<std::string> chat_bodies = {
      R"({"messages": [)" + message + deep + "}]}",
      R"({"messages": [{"role": "user", "content": "x", "extra": )" + deep + "}]}",
      R"({"messages": [{"role": "user", "content": "x"}], "tools": )" + deep + "}",
      R"({"messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": {"a": )" + Nested(50000, "{\"a\":", "}") + "}}",
  };
  for (const std::string& body : chat_bodies) {
    ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(body);
    ASSERT_FALSE(request.ok()) << body.substr(0, 60);
    ExpectInvalid(request.error(), "", "the request body nests arrays and objects deeper than the limit of 64");
  }
  ApiResult<TokenizeRequest> tokenize = ParseTokenizeRequest(chat_bodies[0]);
  ASSERT_FALSE(tokenize.ok());
  ExpectInvalid(tokenize.error(), "", "deeper than the limit of 64");
  ApiResult<CompletionRequest> completion = ParseCompletionRequest(R"({"prompt": )" + deep + "}");
  ASSERT_FALSE(completion.ok());
  ExpectInvalid(completion.error(), "", "deeper than the limit of 64");
}

TEST(ParseRequestObjectTest, ToolCallArgumentsAreBoundedToo) {
  const std::string deep_arguments = Nested(100000);
  Json body = {{"messages",
                {{{"role", "user"}, {"content", "hi"}},
                 {{"role", "assistant"},
                  {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                   {"function", {{"name", "f"}, {"arguments", deep_arguments}}}}}}}}}};
  ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(body.dump());
  ASSERT_FALSE(request.ok());
  ExpectInvalid(request.error(), "messages", "messages[1].tool_calls[0].function.arguments nests arrays");
  body["messages"][1]["tool_calls"][0]["function"]["arguments"] = R"({"city": "Paris", "days": [1, 2]})";
  ApiResult<ChatCompletionRequest> fine = ParseChatCompletionRequest(body.dump());
  ASSERT_TRUE(fine.ok()) << fine.error().status.ToString();
  EXPECT_EQ(fine->input.messages[1]["tool_calls"][0]["function"]["arguments"]["days"][1], 2);
}

TEST(RequestLimitsTest, CountsPastTheirLimitsNameTheField) {
  RequestLimits limits{.max_messages = 2, .max_content_parts = 2, .max_tools = 1, .max_stop = 2,
                       .max_stop_bytes = 4, .max_stop_token_ids = 2, .max_prompts = 2};
  const std::string user = R"({"role": "user", "content": "x"})";
  struct Case {
    std::string body;
    std::string param;
    std::string message;
  };
  const std::vector<Case> chat_cases = {
      {R"({"messages": [)" + user + "," + user + "," + user + "]}", "messages", "messages holds 3 items; the limit is 2"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"},
          {"type": "text", "text": "c"}]}]})", "messages", "messages[0].content holds 3 items; the limit is 2"},
      {R"({"messages": [)" + user + R"(], "tools": [{"type": "function", "function": {"name": "a"}},
          {"type": "function", "function": {"name": "b"}}]})", "tools", "tools holds 2 items; the limit is 1"},
      {R"({"messages": [)" + user + R"(], "stop": ["a", "b", "c"]})", "stop", "the limit is 2"},
      {R"({"messages": [)" + user + R"(], "stop": "abcde"})", "stop", "at most 4 bytes"},
      {R"({"messages": [)" + user + R"(], "stop_token_ids": [1, 2, 3]})", "stop_token_ids", "the limit is 2"},
  };
  for (const Case& c : chat_cases) {
    ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(c.body, limits);
    ASSERT_FALSE(request.ok()) << c.body;
    ExpectInvalid(request.error(), c.param, c.message);
  }
  ApiResult<CompletionRequest> prompts = ParseCompletionRequest(R"({"prompt": ["a", "b", "c"]})", limits);
  ASSERT_FALSE(prompts.ok());
  ExpectInvalid(prompts.error(), "prompt", "prompt holds 3 prompts; the limit is 2");
  EXPECT_TRUE(ParseCompletionRequest(R"({"prompt": ["a", "b"], "stop": ["ab", "cd"]})", limits).ok());
}

}  // namespace
}  // namespace surge::api
