// --reasoning-parser deepseek-r1 through the server against a scripted engine: chat
// choices split into reasoning_content and content, streamed and whole, each choice with
// its own parser; reasoning tokens counted; think tags that the tokenizer marks special
// still reach the parser; /v1/completions and servers without the flag unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using testing_util::Delta;
using testing_util::FakeEngine;

constexpr int32_t kOpenId = 512, kCloseId = 513;  // past stories260K's 512 tokens

class ReasoningServerTest : public testing_util::FakeServerTest {
 protected:
  void StartServer(ReasoningParserKind parser, bool special_tags) {
    tokenizer_ = testing_util::TokenizerWithTags({"<think>", "</think>"}, special_tags);
    ASSERT_NE(tokenizer_, nullptr);
    ServerOptions options = testing_util::FakeServerOptions();
    options.chat_template = testing_util::ReadFile("tests/data/chat_template_simple.jinja");
    options.reasoning_parser = parser;
    FakeServerTest::StartServer(*tokenizer_, options);
  }
  std::future<std::string> PostAsync(const std::string& path, std::string body) {
    const std::string url = Url(path);
    return std::async(std::launch::async, [url, body] {
      auto response = net::Fetch("POST", url, body);
      return response.ok() ? response->body : response.status().ToString();
    });
  }
  std::future<std::string> Chat(const std::string& extra) {
    return PostAsync("/v1/chat/completions",
                     R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 50)" + extra + "}");
  }
};

TEST_F(ReasoningServerTest, StreamSendsReasoningThenContentPerChoice) {
  StartServer(ReasoningParserKind::kDeepSeekR1, /*special_tags=*/false);
  auto body = Chat(R"(, "n": 2, "stream": true, "stream_options": {"include_usage": true})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_TRUE(engine_.submitted(0).request.skip_special_tokens);
  // Choice 0 closes its thinking with the tag split across deltas; choice 1 never does
  // and ends on what looks like the start of a tag.
  engine_.Emit(0, Delta(0, "Let me see</th", {4, 5}));
  engine_.Emit(0, Delta(1, "Hmm", {6}));
  engine_.Emit(0, Delta(0, "ink>", {kCloseId}));
  engine_.Emit(0, Delta(0, "\n\nHello", {7, 8}));
  engine_.Emit(0, Delta(1, " </thi", {9}, FinishReason::kLength));
  RequestOutput last = Delta(0, "!", {10}, FinishReason::kStop, /*finished=*/true);
  last.num_completion_tokens = 8;
  engine_.Emit(0, last);
  const std::string text = body.get();
  std::string reasoning[2], content[2];
  bool content_started[2] = {false, false};
  json usage;
  for (const json& event : testing_util::SseEvents(text)) {
    if (event["choices"].empty()) {
      usage = event["usage"];
      continue;
    }
    const json& choice = event["choices"][0];
    const int index = choice["index"];
    const json& delta = choice["delta"];
    if (delta.contains("reasoning_content")) {
      EXPECT_FALSE(content_started[index]) << "reasoning after content: " << event;
      reasoning[index] += delta["reasoning_content"].get<std::string>();
    }
    if (delta.contains("content")) {
      content[index] += delta["content"].get<std::string>();
      content_started[index] |= !delta["content"].get<std::string>().empty();
    }
  }
  EXPECT_EQ(reasoning[0], "Let me see");
  EXPECT_EQ(content[0], "\n\nHello!");
  EXPECT_EQ(reasoning[1], "Hmm </thi");  // released when the choice ended
  EXPECT_EQ(content[1], "");
  EXPECT_THAT(text, Not(HasSubstr("think>")));
  // Choice 0: two tokens before </think>; choice 1: both of its tokens.
  EXPECT_EQ(usage["completion_tokens_details"]["reasoning_tokens"], 2 + 2) << usage;
}

TEST_F(ReasoningServerTest, WholeResponseHasReasoningContentAndNullForAMissingPart) {
  StartServer(ReasoningParserKind::kDeepSeekR1, /*special_tags=*/false);
  auto body = Chat(R"(, "n": 2)");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "<think>\nWhy?</think>", {kOpenId, 4, kCloseId}));
  engine_.Emit(0, Delta(0, "\n\nBecause.", {5}, FinishReason::kStop));
  engine_.Emit(0, Delta(1, "Thinking on", {6, 7}, FinishReason::kLength, /*finished=*/true));
  const json response = json::parse(body.get());
  const json& first = response["choices"][0]["message"];
  EXPECT_EQ(first["reasoning_content"], "\nWhy?");
  EXPECT_EQ(first["content"], "\n\nBecause.");
  const json& second = response["choices"][1]["message"];
  EXPECT_EQ(second["reasoning_content"], "Thinking on");
  EXPECT_TRUE(second["content"].is_null()) << second;
  EXPECT_EQ(response["usage"]["completion_tokens_details"]["reasoning_tokens"], 2 + 2);
}

TEST_F(ReasoningServerTest, SpecialThinkTagsAreDecodedForTheParser) {
  StartServer(ReasoningParserKind::kDeepSeekR1, /*special_tags=*/true);
  auto body = Chat("");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_FALSE(engine_.submitted(0).request.skip_special_tokens)
      << "the tokenizer marks </think> special: skipping specials would hide it";
  engine_.Emit(0, Delta(0, "a</think>b", {4, kCloseId, 5}, FinishReason::kStop, true));
  const json message = json::parse(body.get())["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "a");
  EXPECT_EQ(message["content"], "b");
}

TEST_F(ReasoningServerTest, CompletionsAreNotParsed) {
  StartServer(ReasoningParserKind::kDeepSeekR1, /*special_tags=*/true);
  auto body = PostAsync("/v1/completions", R"({"prompt": "x", "max_tokens": 5})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_TRUE(engine_.submitted(0).request.skip_special_tokens);
  engine_.Emit(0, Delta(0, "a</think>b", {4, kCloseId, 5}, FinishReason::kStop, true));
  const json response = json::parse(body.get());
  EXPECT_EQ(response["choices"][0]["text"], "a</think>b");
  EXPECT_FALSE(response["usage"].contains("completion_tokens_details"));
}

TEST_F(ReasoningServerTest, WithoutTheFlagChatIsUnchanged) {
  StartServer(ReasoningParserKind::kNone, /*special_tags=*/true);
  auto body = Chat("");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_TRUE(engine_.submitted(0).request.skip_special_tokens);
  engine_.Emit(0, Delta(0, "a</think>b", {4, kCloseId, 5}, FinishReason::kStop, true));
  const json response = json::parse(body.get());
  EXPECT_EQ(response["choices"][0]["message"]["content"], "a</think>b");
  EXPECT_FALSE(response["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_FALSE(response["usage"].contains("completion_tokens_details"));
}

}  // namespace
}  // namespace surge
