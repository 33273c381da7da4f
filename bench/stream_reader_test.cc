// StreamReader on canned bytes: timings from arrival times, usage, and how failures are told apart.
#include "bench/stream_reader.h"

#include <gtest/gtest.h>

namespace surge::bench {
namespace {

using std::chrono::milliseconds;

net::HttpResponse Head(int status, std::string content_type = "text/event-stream") {
  net::HttpResponse head;
  head.status = status;
  head.headers.Set("Content-Type", std::move(content_type));
  return head;
}

std::string TextChunk(const std::string& text) {
  return "data: {\"choices\":[{\"index\":0,\"text\":\"" + text + "\"}]}\n\n";
}

net::ClientResult Done(net::SteadyTime at, Status status = OkStatus(), int http_status = 200) {
  net::ClientResult result;
  result.status = std::move(status);
  result.response.status = http_status;
  result.timings.done = at;
  return result;
}

TEST(StreamReaderTest, TimingsAndUsage) {
  const net::SteadyTime t0 = net::SteadyTime::clock::now();
  StreamReader reader(t0, /*keep_text=*/true);
  reader.OnHead(Head(200));
  EXPECT_TRUE(reader.OnData(TextChunk("Hel"), t0 + milliseconds(50)));
  // One read carrying two events, split across two reads mid-event.
  std::string two = TextChunk("lo") + TextChunk(" world");
  EXPECT_TRUE(reader.OnData(two.substr(0, 10), t0 + milliseconds(70)));
  EXPECT_TRUE(reader.OnData(two.substr(10), t0 + milliseconds(90)));
  EXPECT_TRUE(reader.OnData("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n"
                            "data: [DONE]\n\n",
                            t0 + milliseconds(95)));
  RequestRecord record = reader.Finish(Done(t0 + milliseconds(100)), t0 - milliseconds(10), 99);
  ASSERT_TRUE(record.ok()) << record.error_kind << ": " << record.error_message;
  EXPECT_NEAR(record.send_s, 0.010, 1e-9);
  EXPECT_NEAR(*record.ttft_s, 0.050, 1e-9);
  EXPECT_NEAR(record.latency_s, 0.100, 1e-9);
  ASSERT_EQ(record.itl_s.size(), 2u);
  EXPECT_NEAR(record.itl_s[0], 0.040, 1e-9);
  EXPECT_NEAR(record.itl_s[1], 0.0, 1e-9);  // arrived in the same read
  EXPECT_EQ(record.prompt_tokens, 7);
  EXPECT_EQ(record.output_tokens, 3);
  EXPECT_TRUE(record.usage_reported);
  EXPECT_EQ(record.output_text, "Hello world");
  EXPECT_NEAR(*record.tpot_s(), 0.025, 1e-9);  // (100 - 50) / (3 - 1)
}

TEST(StreamReaderTest, ChatDeltasWithoutUsageAreCounted) {
  const net::SteadyTime t0 = net::SteadyTime::clock::now();
  StreamReader reader(t0, false);
  reader.OnHead(Head(200, "text/event-stream; charset=utf-8"));
  std::string bytes = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
                      "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                      "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"b\"}}]}\n\n"
                      ": keep-alive comment\n\ndata: [DONE]\n\n";
  EXPECT_TRUE(reader.OnData(bytes, t0 + milliseconds(5)));
  RequestRecord record = reader.Finish(Done(t0 + milliseconds(6)), t0, 42);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record.output_tokens, 2);
  EXPECT_EQ(record.prompt_tokens, 42);  // the estimate: no usage
  EXPECT_FALSE(record.usage_reported);
}

TEST(StreamReaderTest, HttpErrorKeepsTheServersMessage) {
  const net::SteadyTime t0 = net::SteadyTime::clock::now();
  StreamReader reader(t0, false);
  reader.OnHead(Head(429, "application/json"));
  EXPECT_TRUE(reader.OnData(R"({"error":{"message":"queue full","type":"x"}})", t0));
  RequestRecord record = reader.Finish(Done(t0, OkStatus(), 429), t0, 1);
  EXPECT_EQ(record.error_kind, "http_429");
  EXPECT_EQ(record.error_message, "queue full");
}

TEST(StreamReaderTest, MalformedEventStopsTheStream) {
  const net::SteadyTime t0 = net::SteadyTime::clock::now();
  StreamReader reader(t0, false);
  reader.OnHead(Head(200));
  EXPECT_TRUE(reader.OnData(TextChunk("x"), t0));
  EXPECT_FALSE(reader.OnData("data: {oops\n\n", t0));
  // The client then reports CANCELLED (our abort); the first cause stands.
  RequestRecord record = reader.Finish(Done(t0, Status(StatusCode::kCancelled, "aborted")), t0, 1);
  EXPECT_EQ(record.error_kind, "malformed_sse");
}

TEST(StreamReaderTest, TransportFailuresAndMissingDone) {
  const net::SteadyTime t0 = net::SteadyTime::clock::now();
  auto finish = [&](Status status, bool with_done) {
    StreamReader reader(t0, false);
    reader.OnHead(Head(200));
    EXPECT_TRUE(reader.OnData(TextChunk("x") + (with_done ? "data: [DONE]\n\n" : ""), t0));
    return reader.Finish(Done(t0, std::move(status)), t0, 1).error_kind;
  };
  EXPECT_EQ(finish(Status(StatusCode::kDataLoss, "cut"), false), "truncated");
  EXPECT_EQ(finish(Status(StatusCode::kDeadlineExceeded, "slow"), false), "timeout");
  EXPECT_EQ(finish(OkStatus(), false), "truncated");
  EXPECT_EQ(finish(OkStatus(), true), "");
  StreamReader never(t0, false);
  EXPECT_EQ(never.Finish(Done(t0, UnavailableError("refused"), 0), t0, 1).error_kind, "connect");
}

TEST(StreamReaderTest, ErrorEventAndNonStreamAnswer) {
  const net::SteadyTime t0 = net::SteadyTime::clock::now();
  StreamReader in_stream(t0, false);
  in_stream.OnHead(Head(200));
  EXPECT_FALSE(in_stream.OnData("data: {\"error\":{\"message\":\"engine died\"}}\n\n", t0));
  RequestRecord a = in_stream.Finish(Done(t0, Status(StatusCode::kCancelled, "aborted")), t0, 1);
  EXPECT_EQ(a.error_kind, "stream_error");
  EXPECT_EQ(a.error_message, "engine died");
  StreamReader whole(t0, false);
  whole.OnHead(Head(200, "application/json"));
  EXPECT_TRUE(whole.OnData("{\"choices\":[]}", t0));
  EXPECT_EQ(whole.Finish(Done(t0), t0, 1).error_kind, "malformed_sse");
}

}  // namespace
}  // namespace surge::bench
