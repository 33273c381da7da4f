// Streaming on a real engine: exact SSE framing with the usage chunk, 429 + Retry-After
// when the waiting queue is full, and clients that drop their connection mid-stream (499).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "apps/serve_test_util.h"
#include "net/http_client.h"

namespace surge {
namespace {

using nlohmann::json;
using testing_util::JsonBody;
using testing_util::MetricValue;
using testing_util::SseData;

class ServeStreamTest : public testing_util::StoriesServerTest {};

TEST_F(ServeStreamTest, CompletionStreamWithUsageChunk) {
  json request = {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}, {"stream", true},
                  {"stream_options", {{"include_usage", true}}}};
  net::HttpResponse response = Post("/v1/completions", request.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.Get("Cache-Control"), "no-cache");
  std::vector<std::string> events = SseData(response.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  json usage_chunk = json::parse(events[events.size() - 2]);
  EXPECT_EQ(usage_chunk["choices"], json::array());
  EXPECT_EQ(usage_chunk["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], 12);
  EXPECT_EQ(usage_chunk["usage"]["total_tokens"], 17);
  EXPECT_EQ(usage_chunk["usage"]["prompt_tokens_details"]["cached_tokens"].is_number(), true);
  const std::string id = usage_chunk["id"];
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["id"], id);
    EXPECT_TRUE(chunk.contains("usage") && chunk["usage"].is_null()) << events[i];
  }
}

TEST_F(ServeStreamTest, ChatStreamStartsWithTheRoleAndEndsWithFinishReason) {
  json request = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 10}, {"temperature", 0},
                  {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  net::HttpResponse response = Post("/v1/chat/completions", request.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  std::vector<std::string> events = SseData(response.body);
  ASSERT_GE(events.size(), 4u);
  json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  json last_choice = json::parse(events[events.size() - 3]);
  EXPECT_EQ(last_choice["choices"][0]["finish_reason"], "length");
  std::string content;
  for (size_t i = 1; i + 2 < events.size(); ++i) {
    json delta = json::parse(events[i])["choices"][0]["delta"];
    EXPECT_FALSE(delta.contains("role"));
    if (delta.contains("content")) content += delta["content"].get<std::string>();
  }
  json whole = JsonBody(Post("/v1/chat/completions",
                             json{{"messages", request["messages"]}, {"max_tokens", 10}, {"temperature", 0}}.dump()));
  EXPECT_EQ(content, whole["choices"][0]["message"]["content"]);
  EXPECT_EQ(json::parse(events[events.size() - 2])["usage"]["completion_tokens"], 10);
  EXPECT_EQ(events.back(), "[DONE]");
}

// One running sequence at a time and one waiting: a third request is refused at once.
TEST(ServeAdmissionTest, FullWaitingQueueIs429WithRetryAfter) {
  ServeConfig config = testing_util::StoriesConfig();
  config.engine.max_num_seqs = 1;
  config.engine.max_waiting = 1;
  auto runtime = testing_util::StartStories(config);
  ASSERT_NE(runtime, nullptr);
  net::HttpClient client;
  std::atomic<int> num_done{0};
  auto long_stream = [&] {
    net::ClientRequest request{"POST", testing_util::BaseUrl(*runtime) + "/v1/completions"};
    request.body = R"({"prompt": "Once", "max_tokens": 500, "ignore_eos": true, "stream": true})";
    net::ClientCallbacks callbacks;
    callbacks.on_data = [](std::string_view, net::SteadyTime) { return true; };
    callbacks.on_done = [&](net::ClientResult) { ++num_done; };
    client.Send(std::move(request), std::move(callbacks));
  };
  long_stream();
  // Wait until the first runs, then queue the second.
  for (int i = 0; i < 500 && MetricValue(testing_util::Get(*runtime, "/metrics").body, "surge_num_requests_running") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  long_stream();
  for (int i = 0; i < 500 && MetricValue(testing_util::Get(*runtime, "/metrics").body, "surge_num_requests_waiting") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  net::HttpResponse refused = testing_util::Post(*runtime, "/v1/completions", R"({"prompt": "x", "max_tokens": 2})");
  EXPECT_EQ(refused.status, 429) << refused.body;
  const std::string retry_after = refused.headers.Get("Retry-After");
  ASSERT_FALSE(retry_after.empty());
  EXPECT_GE(std::stoi(retry_after), 1);
  EXPECT_EQ(JsonBody(refused)["error"]["type"], "rate_limit_exceeded");
  runtime->Shutdown(std::chrono::milliseconds(0));  // cancels both streams; they still end
  EXPECT_EQ(num_done, 2);
}

// 100 streams; half of them hang up at a random point. The rest finish, and afterwards
// every KV block is free and nothing runs.
TEST_F(ServeStreamTest, DroppedStreamsAreCancelledAndFreeTheirBlocks) {
  net::HttpClient client;
  std::mt19937 rng(7);
  std::mutex mu;
  std::condition_variable cv;
  int num_done = 0, num_complete = 0, num_dropped = 0;
  constexpr int kNumStreams = 100;
  for (int i = 0; i < kNumStreams; ++i) {
    const bool drop = i % 2 == 1;
    const size_t drop_after_bytes = std::uniform_int_distribution<size_t>(1, 3000)(rng);
    net::ClientRequest request{"POST", testing_util::BaseUrl(*runtime_) + "/v1/completions"};
    request.body = json{{"prompt", "Story " + std::to_string(i)}, {"max_tokens", 200}, {"ignore_eos", true},
                        {"stream", true}, {"temperature", 0.8}, {"seed", i}}.dump();
    auto received = std::make_shared<std::string>();
    net::ClientCallbacks callbacks;
    callbacks.on_data = [=](std::string_view data, net::SteadyTime) {
      received->append(data);
      return !(drop && received->size() >= drop_after_bytes);
    };
    callbacks.on_done = [&, received](net::ClientResult result) {
      std::lock_guard<std::mutex> lock(mu);
      ++num_done;
      if (result.status.ok() && received->ends_with("data: [DONE]\n\n")) ++num_complete;
      if (result.status.code() == StatusCode::kCancelled) ++num_dropped;
      cv.notify_all();
    };
    client.Send(std::move(request), std::move(callbacks));
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(40), [&] { return num_done == kNumStreams; }));
  }
  EXPECT_EQ(num_complete, kNumStreams / 2);
  EXPECT_EQ(num_dropped, kNumStreams / 2);
  std::string metrics;
  for (int i = 0; i < 500; ++i) {  // cancellations land at the engine's next step
    metrics = Get("/metrics").body;
    if (MetricValue(metrics, "surge_kv_cache_usage_ratio") == 0 && MetricValue(metrics, "surge_num_requests_running") == 0 &&
        MetricValue(metrics, "surge_generations_in_flight") == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(MetricValue(metrics, "surge_kv_cache_usage_ratio"), 0);
  EXPECT_EQ(MetricValue(metrics, "surge_num_requests_running"), 0);
  EXPECT_EQ(MetricValue(metrics, "surge_generations_in_flight"), 0);
  EXPECT_EQ(Get("/health").status, 200);
}

// A client that hangs up before its answer is complete is counted as 499 (nginx's "client
// closed request"), streamed or not, never as a 200; its engine work stops at once.
TEST_F(ServeStreamTest, ClientsThatLeaveAreCounted499) {
  const std::string kCode200 = R"(surge_http_requests_total{endpoint="/v1/chat/completions",code="200"})";
  const std::string kCode499 = R"(surge_http_requests_total{endpoint="/v1/chat/completions",code="499"})";
  const std::string before = Get("/metrics").body;
  net::HttpClient client;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<StatusCode> codes;
  for (bool stream : {true, false}) {
    // Long enough (8 x 480 tokens, ~0.3 s without invariant checks) that the client is gone
    // well before the engine is done.
    net::ClientRequest request{"POST", testing_util::BaseUrl(*runtime_) + "/v1/chat/completions"};
    request.body = json{{"messages", {{{"role", "user"}, {"content", "Tell a story."}}}}, {"max_tokens", 480},
                        {"ignore_eos", true}, {"n", 8}, {"stream", stream}}.dump();
    request.timeout_ms = stream ? 30'000 : 100;  // the whole answer never arrives in 100 ms
    net::ClientCallbacks callbacks;
    if (stream) callbacks.on_data = [](std::string_view, net::SteadyTime) { return false; };  // the role chunk
    callbacks.on_done = [&](net::ClientResult result) {
      std::lock_guard<std::mutex> lock(mu);
      codes.push_back(result.status.code());
      cv.notify_all();
    };
    client.Send(std::move(request), std::move(callbacks));
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return codes.size() == 2; }));
  }
  EXPECT_THAT(codes, ::testing::UnorderedElementsAre(StatusCode::kCancelled, StatusCode::kDeadlineExceeded));
  std::string after;
  for (int i = 0; i < 500; ++i) {  // counted when the cancelled generation ends
    after = Get("/metrics").body;
    if (MetricValue(after, kCode499) - std::max(MetricValue(before, kCode499), 0.0) >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(MetricValue(after, kCode499) - std::max(MetricValue(before, kCode499), 0.0), 2);
  EXPECT_EQ(std::max(MetricValue(after, kCode200), 0.0), std::max(MetricValue(before, kCode200), 0.0));
  EXPECT_EQ(MetricValue(after, "surge_generations_in_flight"), 0);
  const double tokens_before = std::max(MetricValue(before, "surge_generation_tokens_total"), 0.0);
  EXPECT_LT(MetricValue(after, "surge_generation_tokens_total") - tokens_before, 2 * 8 * 480)
      << "cancelled before the end";
}

}  // namespace
}  // namespace surge
