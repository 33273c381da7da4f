// The stored form and its replays, checked byte for byte against api/'s own builders (the
// shapes `surge serve` sends), and the stream assembler rebuilding an answer from its chunks.
#include "router/cache/cached_response.h"

#include <gtest/gtest.h>

#include "api/chat_response.h"
#include "api/completion_response.h"
#include "net/sse.h"
#include "router/cache/stream_assembler.h"

namespace surge::router {
namespace {

const api::ResponseMeta kChatMeta{"chatcmpl-1", 1700000000, "stories"};
const api::ResponseMeta kCompletionMeta{"cmpl-1", 1700000000, "stories"};
const ReplayMeta kReplay{"chatcmpl-1", 1700000000};
const api::Usage kUsage{5, 2, 0, std::nullopt};
const api::Usage kCachedUsage{5, 2, 5, std::nullopt};  // a hit: the whole prompt is cached

api::ChoiceOutput Choice(int32_t index, std::string text, std::optional<std::string> finish) {
  api::ChoiceOutput choice;
  choice.index = index;
  choice.text = std::move(text);
  choice.finish_reason = std::move(finish);
  return choice;
}

CachedResponse Parse(const std::optional<std::string>& entry) {
  EXPECT_TRUE(entry.has_value());
  std::optional<CachedResponse> cached = ParseCachedResponse(entry.value_or(""));
  EXPECT_TRUE(cached.has_value());
  return cached.value_or(CachedResponse{});
}

// Feeds `events` as SSE in awkward pieces (7 bytes at a time).
std::optional<std::string> Assemble(const std::vector<std::string>& events) {
  std::string bytes;
  for (const std::string& event : events) bytes += net::EncodeSseData(event);
  StreamAssembler assembler(1 << 20);
  for (size_t i = 0; i < bytes.size(); i += 7) assembler.Feed(std::string_view(bytes).substr(i, 7));
  return assembler.Finish();
}

TEST(CachedResponseTest, ChatWholeReplayIsTheAnswerWithCachedUsage) {
  const std::string live = api::ChatResponseJson(kChatMeta, {Choice(0, "Hello", "stop")}, kUsage);
  const CachedResponse cached = Parse(EntryFromWholeResponse(live));
  EXPECT_EQ(ReplayWhole(cached, kReplay), api::ChatResponseJson(kChatMeta, {Choice(0, "Hello", "stop")}, kCachedUsage));
}

TEST(CachedResponseTest, ChatStreamReplayHasTheLiveChunkShapes) {
  const CachedResponse cached =
      Parse(EntryFromWholeResponse(api::ChatResponseJson(kChatMeta, {Choice(0, "Hello", "stop")}, kUsage)));
  for (bool include_usage : {false, true}) {
    std::vector<std::string> expected = {api::ChatRoleChunkJson(kChatMeta, 0, include_usage),
                                         api::ChatChunkJson(kChatMeta, Choice(0, "Hello", std::nullopt), include_usage),
                                         api::ChatChunkJson(kChatMeta, Choice(0, "", "stop"), include_usage)};
    if (include_usage) expected.push_back(api::ChatUsageChunkJson(kChatMeta, kCachedUsage));
    expected.emplace_back("[DONE]");
    EXPECT_EQ(ReplayStream(cached, kReplay, include_usage), expected);
  }
}

TEST(CachedResponseTest, CompletionWholeAndStreamReplays) {
  const ReplayMeta replay{"cmpl-1", 1700000000};
  const std::string live = api::CompletionResponseJson(kCompletionMeta, {Choice(0, " upon a", "length")}, kUsage);
  const CachedResponse cached = Parse(EntryFromWholeResponse(live));
  EXPECT_EQ(ReplayWhole(cached, replay),
            api::CompletionResponseJson(kCompletionMeta, {Choice(0, " upon a", "length")}, kCachedUsage));
  const std::vector<std::string> expected = {
      api::CompletionChunkJson(kCompletionMeta, Choice(0, " upon a", std::nullopt), true),
      api::CompletionChunkJson(kCompletionMeta, Choice(0, "", "length"), true),
      api::CompletionUsageChunkJson(kCompletionMeta, kCachedUsage), "[DONE]"};
  EXPECT_EQ(ReplayStream(cached, replay, true), expected);
}

TEST(CachedResponseTest, AssembledLiveStreamEqualsTheWholeAnswer) {
  const std::vector<std::string> live = {
      api::ChatRoleChunkJson(kChatMeta, 0, true), api::ChatRoleChunkJson(kChatMeta, 1, true),
      api::ChatChunkJson(kChatMeta, Choice(0, "Hel", std::nullopt), true),
      api::ChatChunkJson(kChatMeta, Choice(1, "Bye", "stop"), true),
      api::ChatChunkJson(kChatMeta, Choice(0, "lo", "length"), true), api::ChatUsageChunkJson(kChatMeta, kUsage),
      "[DONE]"};
  const std::string whole =
      api::ChatResponseJson(kChatMeta, {Choice(0, "Hello", "length"), Choice(1, "Bye", "stop")}, kUsage);
  EXPECT_EQ(Assemble(live), EntryFromWholeResponse(whole));
}

TEST(CachedResponseTest, StreamWithoutUsageStoresNullUsage) {
  const std::optional<std::string> entry = Assemble(
      {api::ChatRoleChunkJson(kChatMeta, 0, false), api::ChatChunkJson(kChatMeta, Choice(0, "Hi", "stop"), false),
       "[DONE]"});
  EXPECT_FALSE(Parse(entry).has_usage());
}

TEST(CachedResponseTest, ToolCallsRoundTripThroughTheStreamReplay) {
  api::ChoiceOutput choice = Choice(0, "", "tool_calls");
  choice.tool_calls = {{0, "call_a", "get_weather", R"({"city":"Paris"})"}};
  const std::string whole = api::ChatResponseJson(kChatMeta, {choice}, kUsage);
  const std::optional<std::string> entry = EntryFromWholeResponse(whole);
  const std::vector<std::string> replayed = ReplayStream(Parse(entry), kReplay, true);
  // The usage chunk carries cached_tokens; otherwise the stream rebuilds the same entry.
  const std::optional<std::string> again = Assemble(replayed);
  OrderedJson a = OrderedJson::parse(*entry), b = OrderedJson::parse(again.value_or("null"));
  b["usage"]["prompt_tokens_details"]["cached_tokens"] = 0;
  EXPECT_EQ(a, b);
}

TEST(CachedResponseTest, UnfinishedOrFailedAnswersAreNotStored) {
  EXPECT_FALSE(EntryFromWholeResponse(api::ChatResponseJson(kChatMeta, {Choice(0, "x", "abort")}, kUsage)));
  EXPECT_FALSE(EntryFromWholeResponse(api::ChatResponseJson(kChatMeta, {Choice(0, "x", std::nullopt)}, kUsage)));
  EXPECT_FALSE(EntryFromWholeResponse("not json"));
  const std::string role = api::ChatRoleChunkJson(kChatMeta, 0, false);
  const std::string done = api::ChatChunkJson(kChatMeta, Choice(0, "Hi", "stop"), false);
  EXPECT_FALSE(Assemble({role, done}));  // no [DONE]: cut off
  EXPECT_FALSE(Assemble({role, R"({"error": {"message": "backend failed mid-stream"}})", "[DONE]"}));
  EXPECT_FALSE(Assemble({role, api::ChatChunkJson(kChatMeta, Choice(0, "Hi", "timeout"), false), "[DONE]"}));
  StreamAssembler small(16);
  small.Feed(net::EncodeSseData(done));
  small.Feed(net::EncodeSseData("[DONE]"));
  EXPECT_FALSE(small.Finish());  // past its byte bound
  // An engine's hostile chunks (issue 31): nesting 100k deep (a recursive copy would run out
  // of stack), an index of 1e300 (a float-to-int cast) or of a string: never stored, never a crash.
  const std::string deep = R"({"object":"chat.completion.chunk","x":)" + std::string(100'000, '[') +
                           std::string(100'000, ']') + "}";
  EXPECT_FALSE(Assemble({deep, done, "[DONE]"}));
  EXPECT_FALSE(Assemble({role, R"({"object":"chat.completion.chunk","choices":[{"index":1e300,"delta":{}}]})", "[DONE]"}));
  EXPECT_FALSE(Assemble({role, R"({"object":"chat.completion.chunk","choices":[{"index":"0","delta":{}}]})", "[DONE]"}));
  EXPECT_FALSE(Assemble({role, R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":)"
                               R"({"tool_calls":[{"index":-1}]}}]})", "[DONE]"}));
}

}  // namespace
}  // namespace surge::router
