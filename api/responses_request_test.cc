#include "api/responses_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge::api {
namespace {

using ::testing::HasSubstr;

ResponsesRequest Parse(std::string_view body) {
  ApiResult<ResponsesRequest> parsed = ParseResponsesRequest(body);
  EXPECT_TRUE(parsed.ok()) << parsed.error().status.ToString();
  return parsed.ok() ? std::move(parsed).value() : ResponsesRequest{};
}

ChatCompletionRequest Chat(std::string_view body, const Json& history = Json::array()) {
  ApiResult<ChatCompletionRequest> chat = ToChatRequest(Parse(body), history);
  EXPECT_TRUE(chat.ok()) << chat.error().status.ToString();
  return chat.ok() ? std::move(chat).value() : ChatCompletionRequest{};
}

TEST(ResponsesRequestTest, StringInputAndInstructionsBecomeMessages) {
  ChatCompletionRequest chat = Chat(R"({"model": "m", "input": "Hi", "instructions": "Be brief.",
      "max_output_tokens": 7, "temperature": 0.5, "top_p": 0.9, "stream": true, "seed": 3, "timeout": 4})");
  ASSERT_EQ(chat.input.messages.size(), 2u);
  EXPECT_EQ(chat.input.messages[0], Json::parse(R"({"role": "system", "content": "Be brief."})"));
  EXPECT_EQ(chat.input.messages[1], Json::parse(R"({"role": "user", "content": "Hi"})"));
  EXPECT_EQ(chat.params.model, "m");
  EXPECT_EQ(chat.params.max_tokens, 7);
  EXPECT_FLOAT_EQ(chat.params.temperature, 0.5f);
  EXPECT_FLOAT_EQ(chat.params.top_p, 0.9f);
  EXPECT_TRUE(chat.params.stream);
  EXPECT_EQ(chat.params.seed, 3);
  EXPECT_EQ(chat.params.timeout_s, 4);
}

TEST(ResponsesRequestTest, ItemsBecomeChatTurnsWithCallsMerged) {
  const Json history = Json::parse(R"([{"role": "user", "content": "Before"}])");
  ChatCompletionRequest chat = Chat(R"({"input": [
      {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
      {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"x\": 1}"},
      {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
      {"type": "reasoning", "id": "rs_1", "summary": []},
      {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
       "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]}]})",
                                    history);
  const Json& messages = chat.input.messages;
  ASSERT_EQ(messages.size(), 5u) << messages.dump();
  EXPECT_EQ(messages[0]["content"], "Before");
  EXPECT_EQ(messages[1]["content"], "Weather?");  // text parts joined, as chat does
  EXPECT_EQ(messages[2]["role"], "assistant");
  ASSERT_EQ(messages[2]["tool_calls"].size(), 2u);
  EXPECT_EQ(messages[2]["tool_calls"][1]["id"], "c2");
  EXPECT_EQ(messages[3], Json::parse(R"({"role": "tool", "tool_call_id": "c1", "content": "sunny"})"));
  EXPECT_EQ(messages[4]["content"], "It is sunny.");
}

TEST(ResponsesRequestTest, ToolsToolChoiceAndTextFormatMapToChat) {
  ChatCompletionRequest chat = Chat(R"({"input": "x", "tools": [{"type": "function", "name": "f",
      "description": "d", "parameters": {"type": "object"}}], "tool_choice": {"type": "function", "name": "f"},
      "parallel_tool_calls": false})");
  ASSERT_EQ(chat.input.tools.size(), 1u);
  EXPECT_EQ(chat.input.tools[0]["function"]["name"], "f");
  EXPECT_EQ(chat.tool_choice.mode, ToolChoiceMode::kFunction);
  EXPECT_FALSE(chat.parallel_tool_calls);
  ChatCompletionRequest formatted = Chat(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "s",
      "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}, "strict": true}}})");
  EXPECT_EQ(formatted.params.constraint.kind, OutputConstraintKind::kJsonSchema);
  EXPECT_EQ(Chat(R"({"input": "x", "text": {"format": {"type": "json_object"}}})").params.constraint.kind,
            OutputConstraintKind::kJsonObject);
  EXPECT_EQ(Chat(R"({"input": "x", "text": {"format": {"type": "text"}}})").params.constraint.kind,
            OutputConstraintKind::kNone);
}

TEST(ResponsesRequestTest, StoreAndPreviousResponseAndEcho) {
  ResponsesRequest request = Parse(R"({"input": "x", "store": false, "previous_response_id": "resp_1",
      "metadata": {"k": "v"}, "user": "u", "truncation": "disabled", "reasoning": {"effort": null}})");
  EXPECT_FALSE(request.store);
  EXPECT_EQ(request.previous_response_id, "resp_1");
  EXPECT_EQ(request.echo["metadata"]["k"], "v");
  EXPECT_EQ(request.echo["previous_response_id"], "resp_1");
  EXPECT_EQ(request.echo["tool_choice"], "auto");
  EXPECT_TRUE(Parse(R"({"input": "x"})").store);
}

struct BadCase {
  std::string body;
  std::string param;
  std::string message;
};

class ResponsesRequestErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ResponsesRequestErrorTest, NamesTheField) {
  const BadCase& c = GetParam();
  ApiResult<ResponsesRequest> parsed = ParseResponsesRequest(c.body);
  std::optional<ApiError> error;
  if (!parsed.ok()) {
    error = parsed.error();
  } else {
    ApiResult<ChatCompletionRequest> chat = ToChatRequest(*parsed, Json::array());
    ASSERT_FALSE(chat.ok()) << c.body;
    error = chat.error();
  }
  EXPECT_EQ(error->status.code(), StatusCode::kInvalidArgument) << c.body;
  EXPECT_EQ(error->param, c.param) << c.body;
  EXPECT_THAT(std::string(error->status.message()), HasSubstr(c.message)) << c.body;
}

INSTANTIATE_TEST_SUITE_P(
    All, ResponsesRequestErrorTest,
    ::testing::Values(
        BadCase{R"({})", "input", "input is required"},
        BadCase{R"({"input": []})", "input", "non-empty list"},
        BadCase{R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]})", "input",
                "'input_image' is not supported"},
        BadCase{R"({"input": [{"type": "file_search_call"}]})", "input", "'file_search_call' is not supported"},
        BadCase{R"({"input": [{"role": "user", "content": "x", "extra": 1}]})", "input", "input[0].extra is not a supported field"},
        BadCase{R"({"input": [{"role": "robot", "content": "x"}]})", "input", "robot"},
        BadCase{R"({"input": "x", "tools": [{"type": "web_search"}]})", "tools", "must be \"function\""},
        BadCase{R"({"input": "x", "tool_choice": {"type": "web_search"}})", "tool_choice", "tool_choice must be"},
        BadCase{R"({"input": "x", "truncation": "auto"})", "truncation", "must be \"disabled\""},
        BadCase{R"({"input": "x", "reasoning": {"effort": "high"}})", "reasoning", "not supported"},
        BadCase{R"({"input": "x", "background": true})", "background", "not supported"},
        BadCase{R"({"input": "x", "include": ["reasoning.encrypted_content"]})", "include", "not supported"},
        BadCase{R"({"input": "x", "max_output_tokens": 0})", "max_output_tokens", "must be in"},
        BadCase{R"({"input": "x", "temperature": -1})", "temperature", "temperature"},
        BadCase{R"({"input": "x", "text": {"format": {"type": "bogus"}}})", "text.format", "text.format.type must be one of"},
        BadCase{R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "s"}}})", "text.format.schema",
                "text.format.schema is required"},
        BadCase{R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "s", "schema": null}}})",
                "text.format.schema", "text.format.schema is required"},
        BadCase{R"({"input": "x", "top_logprobs": 2})", "top_logprobs", "not a supported field"},
        BadCase{R"({"input": "x", "stream": "yes"})", "stream", "must be a boolean"},
        BadCase{R"({"input": "x", "timeout": 0})", "timeout", "(0, 86400]"}));

TEST(ResponsesRequestTest, ConversationAfterAddsTheAnswer) {
  ResponsesRequest request = Parse(R"({"input": "Hi", "instructions": "not kept"})");
  const Json output = Json::parse(R"([{"type": "reasoning", "content": [{"type": "reasoning_text", "text": "hmm"}]},
      {"type": "message", "content": [{"type": "output_text", "text": "Hello"}]},
      {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}])");
  const Json conversation = ConversationAfter(Json::parse(R"([{"role": "user", "content": "0"}])"), request, output);
  EXPECT_EQ(conversation, Json::parse(R"([{"role": "user", "content": "0"}, {"role": "user", "content": "Hi"},
      {"role": "assistant", "content": "Hello", "tool_calls": [{"id": "c", "type": "function",
       "function": {"name": "f", "arguments": "{}"}}]}])"));
}

}  // namespace
}  // namespace surge::api
