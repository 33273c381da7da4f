#include "net/sse.h"

#include <gtest/gtest.h>

namespace surge::net {
namespace {

std::vector<SseEvent> ParseAll(std::string_view bytes) {
  SseParser parser;
  std::vector<SseEvent> events;
  EXPECT_TRUE(parser.Feed(bytes, &events).ok());
  return events;
}

TEST(SseTest, EncodesDataEvents) {
  EXPECT_EQ(EncodeSseData("{\"x\":1}"), "data: {\"x\":1}\n\n");
  EXPECT_EQ(EncodeSseData("a\nb\r\nc"), "data: a\ndata: b\ndata: c\n\n");
  EXPECT_EQ(EncodeSseData(""), "data: \n\n");
  EXPECT_EQ(EncodeSseEvent({"done", "[DONE]", "7", 1500}),
            "event: done\nid: 7\nretry: 1500\ndata: [DONE]\n\n");
  EXPECT_EQ(EncodeSseComment("keep-alive"), ": keep-alive\n\n");
}

TEST(SseTest, RoundTripsEvents) {
  std::vector<SseEvent> sent = {
      {"", "hello", "", std::nullopt},
      {"", "two\nlines", "", std::nullopt},
      {"update", "", "", std::nullopt},
      {"", "  leading spaces kept after the first", "", std::nullopt},
      {"", "after id", "42", std::nullopt},
      {"", "id persists", "42", std::nullopt},  // per spec the last id stays in effect
  };
  std::string stream;
  for (const SseEvent& event : sent) stream += EncodeSseEvent(event);
  stream += EncodeSseComment("ignored");
  EXPECT_EQ(ParseAll(stream), sent);
}

TEST(SseTest, HandlesEveryLineEnding) {
  std::vector<SseEvent> expected = {{"", "a\nb", "", std::nullopt}, {"e", "c", "", std::nullopt}};
  EXPECT_EQ(ParseAll("data: a\ndata: b\n\nevent: e\ndata: c\n\n"), expected);
  EXPECT_EQ(ParseAll("data: a\r\ndata: b\r\n\r\nevent: e\r\ndata: c\r\n\r\n"), expected);
  EXPECT_EQ(ParseAll("data: a\rdata: b\r\revent: e\rdata: c\r\r"), expected);
}

TEST(SseTest, SplitAnywhereGivesTheSameEvents) {
  std::string stream = "\xEF\xBB\xBF: comment\r\ndata: first\r\ndata: line\r\n\r\nid: 9\r\n"
                       "event: x\rdata:no-space\r\rdata: last\n\n";
  std::vector<SseEvent> whole = ParseAll(stream);
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole[0].data, "first\nline");
  EXPECT_EQ(whole[1], (SseEvent{"x", "no-space", "9", std::nullopt}));
  EXPECT_EQ(whole[2].data, "last");
  for (size_t split = 0; split <= stream.size(); ++split) {
    SseParser parser;
    std::vector<SseEvent> events;
    ASSERT_TRUE(parser.Feed(stream.substr(0, split), &events).ok());
    ASSERT_TRUE(parser.Feed(stream.substr(split), &events).ok());
    EXPECT_EQ(events, whole) << "split at " << split;
  }
  // One byte at a time.
  SseParser parser;
  std::vector<SseEvent> events;
  for (char c : stream) ASSERT_TRUE(parser.Feed(std::string_view(&c, 1), &events).ok());
  EXPECT_EQ(events, whole);
}

TEST(SseTest, IgnoresWhatTheSpecIgnores) {
  // No data: not dispatched. Unknown fields, bad retry, comments: ignored.
  std::vector<SseEvent> events = ParseAll("event: lonely\n\nfoo: bar\nretry: 12x\ndata\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], (SseEvent{"", "", "", std::nullopt}));
  // An unterminated event is not delivered.
  EXPECT_TRUE(ParseAll("data: partial\n").empty());
  EXPECT_EQ(ParseAll("retry: 250\ndata: x\n\n")[0].retry_ms, 250);
  // A BOM-like prefix that is not a BOM is data.
  EXPECT_EQ(ParseAll("\xEF" "data: y\n\n").size(), 0u);
}

TEST(SseTest, RefusesEndlessLines) {
  SseParser parser(/*max_event_bytes=*/64);
  std::vector<SseEvent> events;
  Status status = parser.Feed("data: " + std::string(100, 'x'), &events);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace surge::net
