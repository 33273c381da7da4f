// ParseChatCompletionRequest: message shapes as templates need them, the chat-only
// parameters, and an error naming the parameter for each malformed one.
#include "api/chat_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge::api {
namespace {

using ::testing::HasSubstr;

ChatCompletionRequest Parse(std::string_view body) {
  ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(body);
  EXPECT_TRUE(request.ok()) << body << ": " << request.error().status.message();
  return request.ok() ? std::move(request).value() : ChatCompletionRequest{};
}

TEST(ChatRequestTest, StringContentAndDefaults) {
  ChatCompletionRequest request = Parse(R"({"model": "m", "messages": [
      {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})");
  ASSERT_EQ(request.input.messages.size(), 2u);
  EXPECT_EQ(request.input.messages[1]["content"], "Hi");
  EXPECT_TRUE(request.input.add_generation_prompt);
  EXPECT_FALSE(request.input.continue_final_message);
  EXPECT_TRUE(request.input.tools.is_null());
  EXPECT_TRUE(request.input.chat_template_kwargs.empty());
  EXPECT_FALSE(request.add_special_tokens);
  EXPECT_EQ(request.params.top_logprobs, -1);
  EXPECT_FALSE(request.params.max_tokens.has_value());
}

TEST(ChatRequestTest, ContentPartsJoinWithNewlines) {
  ChatCompletionRequest request = Parse(R"({"messages": [{"role": "user", "content": [
      {"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}]})");
  EXPECT_EQ(request.input.messages[0]["content"], "one\ntwo");
}

TEST(ChatRequestTest, ToolsToolCallsAndToolMessages) {
  ChatCompletionRequest request = Parse(R"({"messages": [
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})");
  const Json& call = request.input.messages[1]["tool_calls"][0];
  EXPECT_EQ(call["function"]["arguments"]["city"], "Paris");  // parsed for the template
  EXPECT_TRUE(request.input.messages[1]["content"].is_null());
  EXPECT_EQ(request.input.messages[2]["tool_call_id"], "c1");
  ASSERT_TRUE(request.input.tools.is_array());
  EXPECT_EQ(request.input.tools[0]["function"]["name"], "get_weather");
}

TEST(ChatRequestTest, TemplateSwitchesAndChatParameters) {
  ChatCompletionRequest request = Parse(R"({"messages": [{"role": "assistant", "content": "Once"}],
      "add_generation_prompt": false, "continue_final_message": true,
      "chat_template_kwargs": {"enable_thinking": false}, "max_tokens": 5,
      "max_completion_tokens": 9, "logprobs": true, "top_logprobs": 4, "add_special_tokens": true,
      "timeout": 0.25})");
  EXPECT_FALSE(request.input.add_generation_prompt);
  EXPECT_TRUE(request.input.continue_final_message);
  EXPECT_EQ(request.input.chat_template_kwargs["enable_thinking"], false);
  EXPECT_EQ(request.params.max_tokens, 9);  // max_completion_tokens wins
  EXPECT_EQ(request.params.top_logprobs, 4);
  EXPECT_EQ(request.params.timeout_s, 0.25);
  EXPECT_TRUE(request.add_special_tokens);
  EXPECT_EQ(Parse(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true})")
                .params.top_logprobs,
            0);
  EXPECT_EQ(Parse(R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 5})")
                .params.max_tokens,
            5);
}

struct BadCase {
  const char* body;
  const char* param;
  const char* message;
};

class ChatRequestErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ChatRequestErrorTest, NamesTheParameter) {
  const BadCase& c = GetParam();
  ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(c.body);
  ASSERT_FALSE(request.ok()) << c.body;
  EXPECT_EQ(request.error().param, c.param) << c.body;
  EXPECT_THAT(request.error().status.message(), HasSubstr(c.message)) << c.body;
}

#define MSGS R"("messages": [{"role": "user", "content": "x"}])"
#define TOOLS R"("tools": [{"type": "function", "function": {"name": "f"}}])"
INSTANTIATE_TEST_SUITE_P(
    Cases, ChatRequestErrorTest,
    ::testing::Values(
        BadCase{R"({"model": "m"})", "messages", "messages is required"},
        BadCase{R"({"messages": []})", "messages", "must not be empty"},
        BadCase{R"({"messages": "hi"})", "messages", "must be a list"},
        BadCase{R"({"messages": ["hi"]})", "messages", "messages[0] must be an object"},
        BadCase{R"({"messages": [{"content": "hi"}]})", "messages", "messages[0].role"},
        BadCase{R"({"messages": [{"role": "user", "content": 5}]})", "messages", "messages[0].content"},
        BadCase{R"({"messages": [{"role": "user"}]})", "messages",
                "messages[0].content is required for role 'user'"},
        BadCase{R"({"messages": [{"role": "user", "content": null}]})", "messages",
                "messages[0].content is required"},
        BadCase{R"({"messages": [{"role": "assistant", "content": null}]})", "messages",
                "messages[0].content is required for role 'assistant'"},
        BadCase{R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})",
                "messages", "'image_url' is not supported"},
        BadCase{R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", "messages", ".text"},
        BadCase{R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": "{"}}]}]})",
                "messages", "function.arguments is not valid JSON"},
        BadCase{R"({"messages": [{"role": "assistant", "tool_calls": 3}]})", "messages", "tool_calls"},
        BadCase{"{" MSGS R"(, "tools": {}})", "tools", "must be a list"},
        BadCase{"{" MSGS R"(, "tools": [{"type": "function"}]})", "tools", "function"},
        BadCase{"{" MSGS R"(, "continue_final_message": true})", "continue_final_message", "cannot both"},
        BadCase{"{" MSGS R"(, "add_generation_prompt": "yes"})", "add_generation_prompt", "boolean"},
        BadCase{"{" MSGS R"(, "chat_template_kwargs": []})", "chat_template_kwargs", "must be an object"},
        BadCase{"{" MSGS R"(, "max_completion_tokens": 0})", "max_completion_tokens", "must be >= 1, got 0"},
        BadCase{"{" MSGS R"(, "max_tokens": -1})", "max_tokens", "must be >= 1, got -1"},
        BadCase{"{" MSGS R"(, "logprobs": 2})", "logprobs", "must be a boolean"},
        BadCase{"{" MSGS R"(, "top_logprobs": 2})", "top_logprobs", "requires logprobs"},
        BadCase{"{" MSGS R"(, "logprobs": true, "top_logprobs": 21})", "top_logprobs", "[0, 20]"},
        BadCase{"{" MSGS R"(, "temperature": -1})", "temperature", ">= 0"},
        BadCase{"{" MSGS R"(, "n": "2"})", "n", "must be an integer"},
        // Fields this server does not act on are refused, not silently ignored.
        BadCase{"{" MSGS R"(, "response_format": {"type": "xml"}})", "response_format",
                "response_format.type must be one of text, json_object, json_schema"},
        BadCase{"{" MSGS R"(, "tool_choice": "required"})", "tool_choice", "needs tools"},
        BadCase{"{" MSGS ", " TOOLS R"(, "tool_choice": "any"})", "tool_choice", "tool_choice must be"},
        BadCase{"{" MSGS ", " TOOLS R"(, "tool_choice": {"type": "function", "function": {"name": "g"}}})",
                "tool_choice", "'g', which is not in tools"},
        BadCase{"{" MSGS ", " TOOLS R"(, "parallel_tool_calls": 1})", "parallel_tool_calls", "boolean"},
        BadCase{"{" MSGS R"(, "tools": [{"type": "retrieval", "function": {"name": "f"}}]})", "tools",
                "tools[0].type must be \"function\""},
        BadCase{"{" MSGS R"(, "tools": [{"function": {"name": ""}}]})", "tools", "name must be a non-empty string"},
        BadCase{"{" MSGS R"(, "tools": [{"function": {"name": "f", "parameters": []}}]})", "tools",
                "parameters must be an object"},
        BadCase{"{" MSGS R"(, "tools": [{"function": {"name": "f", "strict": "yes"}}]})", "tools",
                "strict must be a boolean"},
        BadCase{R"({"messages": [{"role": "robot", "content": "x"}]})", "messages",
                "messages[0].role 'robot' is not one of"},
        BadCase{"{" MSGS R"(, "stream": true, "stream_options": {"include_usage": true, "x": 1}})",
                "stream_options.x", "x is not a supported field"},
        // SGLang's extensions, away from the defaults this server serves.
        BadCase{"{" MSGS R"(, "no_stop_trim": true})", "no_stop_trim", "must be false here"},
        BadCase{"{" MSGS R"(, "return_hidden_states": true})", "return_hidden_states", "must be false here"},
        BadCase{"{" MSGS R"(, "separate_reasoning": false})", "separate_reasoning", "must be true here"},
        BadCase{"{" MSGS R"(, "stream_reasoning": false})", "stream_reasoning", "must be true here"},
        BadCase{"{" MSGS R"(, "stream_reasoning": 1})", "stream_reasoning", "must be a boolean"},
        BadCase{"{" MSGS R"(, "include_reasoning": false})", "include_reasoning", "always returned"}));
#undef MSGS
#undef TOOLS

TEST(ChatRequestTest, ToolChoiceAndParallelToolCalls) {
  const std::string messages = R"("messages": [{"role": "user", "content": "x"}])";
  const std::string tools = R"("tools": [{"type": "function", "function": {"name": "f", "description": "d",
      "parameters": {"type": "object"}, "strict": false}}])";
  EXPECT_EQ(Parse("{" + messages + "}").tool_choice.mode, ToolChoiceMode::kNone);
  ChatCompletionRequest with_tools = Parse("{" + messages + ", " + tools + "}");
  EXPECT_EQ(with_tools.tool_choice.mode, ToolChoiceMode::kAuto);
  EXPECT_TRUE(with_tools.parallel_tool_calls);
  EXPECT_EQ(Parse("{" + messages + ", " + tools + R"(, "tool_choice": "none"})").tool_choice.mode,
            ToolChoiceMode::kNone);
  EXPECT_EQ(Parse("{" + messages + ", " + tools + R"(, "tool_choice": "required"})").tool_choice.mode,
            ToolChoiceMode::kRequired);
  ChatCompletionRequest named = Parse("{" + messages + ", " + tools +
                                      R"(, "tool_choice": {"type": "function", "function": {"name": "f"}},
                                      "parallel_tool_calls": false})");
  EXPECT_EQ(named.tool_choice.mode, ToolChoiceMode::kFunction);
  EXPECT_EQ(named.tool_choice.function_name, "f");
  EXPECT_FALSE(named.parallel_tool_calls);
  EXPECT_EQ(Parse("{" + messages + R"(, "tool_choice": "auto"})").tool_choice.mode, ToolChoiceMode::kAuto);
}

TEST(ChatRequestTest, ForcedToolChoiceConstrainsTheOutputToItsSchema) {
  const std::string head = R"({"messages": [{"role": "user", "content": "x"}], "tools": [
      {"function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}},
      {"function": {"name": "g"}}])";
  ChatCompletionRequest named = Parse(head + R"(, "tool_choice": {"type": "function", "function": {"name": "f"}}})");
  EXPECT_EQ(named.params.constraint.kind, OutputConstraintKind::kJsonSchema);
  EXPECT_EQ(named.params.constraint.param, "tool_choice");
  EXPECT_EQ(Json::parse(named.params.constraint.text), Json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"}}})"));
  EXPECT_EQ(Parse(head + R"(, "tool_choice": {"type": "function", "function": {"name": "g"}}})").params.constraint.text,
            R"({"type":"object"})");
  const Json required = Json::parse(Parse(head + R"(, "tool_choice": "required", "parallel_tool_calls": false})").params.constraint.text);
  EXPECT_EQ(required["type"], "array");
  EXPECT_EQ(required["minItems"], 1);
  EXPECT_EQ(required["maxItems"], 1);
  ASSERT_EQ(required["items"]["anyOf"].size(), 2u);
  EXPECT_EQ(required["items"]["anyOf"][1]["properties"]["name"]["const"], "g");
  EXPECT_EQ(required["items"]["anyOf"][1]["required"], Json::parse(R"(["name", "parameters"])"));
  EXPECT_FALSE(Json::parse(Parse(head + R"(, "tool_choice": "required"})").params.constraint.text).contains("maxItems"));
  EXPECT_EQ(Parse(head + R"(, "tool_choice": "auto"})").params.constraint.kind, OutputConstraintKind::kNone);
}

TEST(ChatRequestTest, ForcedToolChoiceRefusesAnotherConstraintAndStrictUnderAuto) {
  const std::string head = R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"function": {"name": "f"}}])";
  ApiResult<ChatCompletionRequest> both =
      ParseChatCompletionRequest(head + R"(, "tool_choice": "required", "response_format": {"type": "json_object"}})");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().param, "response_format");
  EXPECT_NE(both.error().status.message().find("cannot be combined with tool_choice"), std::string::npos);
  const std::string strict = R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"function": {"name": "f"}}, {"function": {"name": "g", "strict": true}}])";
  ApiResult<ChatCompletionRequest> under_auto = ParseChatCompletionRequest(strict + "}");
  ASSERT_FALSE(under_auto.ok());
  EXPECT_EQ(under_auto.error().param, "tools");
  EXPECT_NE(under_auto.error().status.message().find("tools[1].function.strict"), std::string::npos);
  EXPECT_TRUE(ParseChatCompletionRequest(strict + R"(, "tool_choice": "required"})").ok());
  EXPECT_TRUE(ParseChatCompletionRequest(strict + R"(, "tool_choice": "none"})").ok());
}

TEST(ChatRequestTest, EveryRoleAndStringArgumentsForTemplates) {
  ChatCompletionRequest request = Parse(R"({"messages": [{"role": "system", "content": "s"},
      {"role": "developer", "content": "d"}, {"role": "user", "content": "u"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
      {"role": "tool", "content": "r"}, {"role": "function", "name": "f", "content": "r"}]})");
  EXPECT_EQ(request.input.messages[3]["tool_calls"][0]["function"]["arguments"]["a"], 1);
  ASSERT_TRUE(request.input.string_argument_messages.is_array());
  EXPECT_EQ(request.input.string_argument_messages[3]["tool_calls"][0]["function"]["arguments"], "{\"a\": 1}");
  EXPECT_EQ(request.input.string_argument_messages[4]["content"], "r");
  EXPECT_TRUE(Parse(R"({"messages": [{"role": "user", "content": "x"}]})").input.string_argument_messages.is_null());
}

// The bodies sgl-router 0.3.2 and vllm-router 0.1.17 forward for {"messages", "model",
// "max_tokens": 1} (captured from the real routers; docs/GATEWAYS.md).
TEST(ChatRequestTest, TheBodiesTheRoutersForwardAreAccepted) {
  const std::string sgl_router = R"({"messages":[{"role":"user","content":"hi"}],"model":"m","logprobs":false,
      "max_completion_tokens":1,"stream":false,"no_stop_trim":false,"ignore_eos":false,"continue_final_message":false,
      "skip_special_tokens":true,"separate_reasoning":true,"stream_reasoning":true,"return_hidden_states":false})";
  const std::string vllm_router = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1,
      "logprobs":false,"no_stop_trim":false,"ignore_eos":false,"continue_final_message":false,"skip_special_tokens":true,
      "separate_reasoning":true,"stream_reasoning":true,"return_hidden_states":false,"include_reasoning":true})";
  for (const std::string& body : {sgl_router, vllm_router}) {
    ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(body);
    ASSERT_TRUE(request.ok()) << request.error().status.ToString();
    EXPECT_EQ(request->params.max_tokens, 1);
  }
}

TEST(ChatRequestTest, MetadataAndNullFieldsAreAccepted) {
  const std::string body = R"({"messages": [{"role": "user", "content": "x"}], "user": "u", "store": false,
                               "metadata": {"k": "v"}, "response_format": null, "logit_bias": null})";
  ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest(body);
  ASSERT_TRUE(request.ok()) << request.error().status.ToString();
  EXPECT_EQ(request->params.user, "u");
}

}  // namespace
}  // namespace surge::api
