// Response and chunk builders: byte-exact OpenAI shapes for both endpoints.
#include <gtest/gtest.h>

#include <set>

#include "api/chat_response.h"
#include "api/completion_response.h"

namespace surge::api {
namespace {

const ResponseMeta kMeta{"cmpl-abc", 1700000000, "stories"};

TEST(ResponseTest, NewResponseIdHasPrefixAndRandomHex) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(NewResponseId("chatcmpl-"));
  EXPECT_EQ(ids.size(), 100u);
  const std::string id = *ids.begin();
  EXPECT_EQ(id.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(id.size(), 9u + 32u);
}

TEST(ResponseTest, CompletionResponse) {
  ChoiceOutput choice{0, "Hi", std::nullopt, 0, "length", std::nullopt, {}};
  EXPECT_EQ(CompletionResponseJson(kMeta, {choice}, Usage{5, 2, 1, std::nullopt}),
            R"({"id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"stories",)"
            R"("choices":[{"index":0,"text":"Hi","logprobs":null,"finish_reason":"length"}],)"
            R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,)"
            R"("prompt_tokens_details":{"cached_tokens":1}}})");
}

TEST(ResponseTest, CompletionChunks) {
  ChoiceOutput delta{1, " there", std::nullopt, 0, std::nullopt, std::nullopt, {}};
  EXPECT_EQ(CompletionChunkJson(kMeta, delta, false),
            R"({"id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"stories",)"
            R"("choices":[{"index":1,"text":" there","logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(CompletionChunkJson(kMeta, delta, true).find(R"(,"usage":null})") != std::string::npos, true);
  EXPECT_EQ(CompletionUsageChunkJson(kMeta, Usage{3, 4, 0, std::nullopt}),
            R"({"id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"stories",)"
            R"("choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,)"
            R"("prompt_tokens_details":{"cached_tokens":0}}})");
}

TEST(ResponseTest, CompletionLogprobsWithOffsetsAndClampedInfinity) {
  std::vector<TokenLogprobInfo> logprobs = {
      {" a", -0.5, " a", {{" a", -0.5, " a"}, {" b", -1.5, " b"}}},
      {"é", -std::numeric_limits<double>::infinity(), "é", {}},
  };
  EXPECT_EQ(CompletionLogprobsJson(logprobs, 10).dump(),
            R"({"tokens":[" a","é"],"token_logprobs":[-0.5,-9999.0],)"
            R"("top_logprobs":[{" a":-0.5," b":-1.5},{"é":-9999.0}],"text_offset":[10,12]})");
}

// echo: the prompt's first token has nothing to score it.
TEST(ResponseTest, CompletionLogprobsOfAnUnscoredFirstToken) {
  std::vector<TokenLogprobInfo> logprobs = {{"Once", 0, "Once", {}, /*scored=*/false}, {" upon", -1, " upon", {}}};
  EXPECT_EQ(CompletionLogprobsJson(logprobs, 0).dump(),
            R"({"tokens":["Once"," upon"],"token_logprobs":[null,-1.0],)"
            R"("top_logprobs":[null,{" upon":-1.0}],"text_offset":[0,4]})");
}

TEST(ResponseTest, ChatResponse) {
  ChoiceOutput choice{0, "Hello", std::nullopt, 0, "stop", std::nullopt, {}};
  EXPECT_EQ(ChatResponseJson({"chatcmpl-x", 1, "m"}, {choice}, Usage{2, 1, 0, std::nullopt}),
            R"({"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"m",)"
            R"("choices":[{"index":0,"message":{"role":"assistant","content":"Hello","refusal":null},)"
            R"("logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":2,)"
            R"("completion_tokens":1,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}})");
}

TEST(ResponseTest, ChatChunks) {
  const ResponseMeta meta{"chatcmpl-x", 1, "m"};
  EXPECT_EQ(ChatRoleChunkJson(meta, 0, false),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,)"
            R"("finish_reason":null}]})");
  EXPECT_EQ(ChatChunkJson(meta, ChoiceOutput{0, "Hi", std::nullopt, 0, std::nullopt, std::nullopt, {}}, true),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],)"
            R"("usage":null})");
  EXPECT_EQ(ChatChunkJson(meta, ChoiceOutput{0, "", std::nullopt, 0, "length", std::nullopt, {}}, false),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]})");
  EXPECT_EQ(ChatUsageChunkJson(meta, Usage{1, 2, 0, std::nullopt}),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,)"
            R"("prompt_tokens_details":{"cached_tokens":0}}})");
}

TEST(ResponseTest, ChatResponseWithReasoningAndReasoningTokens) {
  ChoiceOutput thought{0, "42", std::nullopt, 0, "stop", "Six times seven.", {}};
  ChoiceOutput unfinished{1, "", std::nullopt, 0, "length", "Let me", {}};
  Usage usage{2, 9, 0, 5};
  EXPECT_EQ(ChatResponseJson({"chatcmpl-x", 1, "m"}, {thought, unfinished}, usage),
            R"({"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"m","choices":[)"
            R"({"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"Six times seven.",)"
            R"("refusal":null},"logprobs":null,"finish_reason":"stop"},)"
            R"({"index":1,"message":{"role":"assistant","content":null,"reasoning_content":"Let me",)"
            R"("refusal":null},"logprobs":null,"finish_reason":"length"}],)"
            R"("usage":{"prompt_tokens":2,"completion_tokens":9,"total_tokens":11,)"
            R"("prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":5}}})");
  ChoiceOutput no_thinking{0, "Hi", std::nullopt, 0, "stop", "", {}};
  EXPECT_NE(ChatResponseJson({"chatcmpl-x", 1, "m"}, {no_thinking}, Usage{}).find(R"("reasoning_content":null)"),
            std::string::npos);
}

TEST(ResponseTest, ChatChunksWithReasoning) {
  const ResponseMeta meta{"chatcmpl-x", 1, "m"};
  EXPECT_EQ(ChatChunkJson(meta, ChoiceOutput{0, "", std::nullopt, 0, std::nullopt, "Hmm", {}}, false),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"reasoning_content":"Hmm"},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(ChatChunkJson(meta, ChoiceOutput{0, "\n\nYes", std::nullopt, 0, std::nullopt, ".", {}}, false),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"reasoning_content":".","content":"\n\nYes"},"logprobs":null,)"
            R"("finish_reason":null}]})");
  EXPECT_EQ(ChatChunkJson(meta, ChoiceOutput{0, "", std::nullopt, 0, "stop", "", {}}, false),
            R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m",)"
            R"("choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]})");
}

TEST(ResponseTest, ChatToolCallsWholeAndStreamed) {
  const ResponseMeta meta{"chatcmpl-x", 1, "m"};
  ChoiceOutput choice;
  choice.finish_reason = "tool_calls";
  choice.tool_calls = {{0, "call_a", "f", R"({"x":1})"}};
  const std::string whole = ChatResponseJson(meta, {choice}, Usage{});
  EXPECT_EQ(whole.substr(0, whole.find(R"(,"usage")") + 8),
            std::string(R"({"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,)")
                + R"("message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function",)"
                + R"("function":{"name":"f","arguments":"{\"x\":1}"}}],"refusal":null},"logprobs":null,)"
                + R"("finish_reason":"tool_calls"}],"usage")");
  choice.text = "Sure.";
  const std::vector<std::string> chunks = ChatChunksJson(meta, choice, false);
  const std::string head = R"({"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[)";
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], head + R"({"index":0,"delta":{"content":"Sure."},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(chunks[1], head + R"({"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function",)"
                              R"("function":{"name":"f","arguments":""}}]},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(chunks[2], head + R"({"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":)"
                              R"("{\"x\":1}"}}]},"logprobs":null,"finish_reason":"tool_calls"}]})");
}

TEST(ResponseTest, ChatLogprobs) {
  std::vector<TokenLogprobInfo> logprobs = {{"Hi", -0.25, "Hi", {{"Hi", -0.25, "Hi"}, {"Yo", -2, "Yo"}}}};
  EXPECT_EQ(ChatLogprobsJson(logprobs).dump(),
            R"({"content":[{"token":"Hi","logprob":-0.25,"bytes":[72,105],"top_logprobs":[)"
            R"({"token":"Hi","logprob":-0.25,"bytes":[72,105]},{"token":"Yo","logprob":-2.0,"bytes":[89,111]}]}],)"
            R"("refusal":null})");
}

// "é" (C3 A9) split over two tokens: the first adds no text but carries its byte.
TEST(ResponseTest, ChatLogprobsOfASplitCharacter) {
  std::vector<TokenLogprobInfo> logprobs = {{"", -1, "\xC3", {{"\xEF\xBF\xBD", -1, "\xC3"}}}, {"é", -2, "\xA9", {}}};
  EXPECT_EQ(ChatLogprobsJson(logprobs).dump(),
            R"({"content":[{"token":"","logprob":-1.0,"bytes":[195],"top_logprobs":[)"
            R"({"token":"�","logprob":-1.0,"bytes":[195]}]},)"
            R"({"token":"é","logprob":-2.0,"bytes":[169],"top_logprobs":[]}],"refusal":null})");
}

}  // namespace
}  // namespace surge::api
