// ServerMetrics after known sequences (engine step sizes mirrored bucket by bucket, KV
// bytes, errors by kind), and request deadlines through the HTTP server in front of a
// scripted engine: `timeout` and --request-timeout reach the engine, a DeadlineExceeded
// ends the request with 504 (or a stream's error event) and is counted.
#include "server/server_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using testing_util::Delta;

TEST(ServerMetricsTest, StepSizesAreMirroredOnceEach) {
  ServerMetrics metrics;
  EngineStats stats;
  for (int64_t tokens : {1, 2, 2, 11}) stats.step_tokens.Observe(tokens);
  stats.step_sequences.Observe(2);
  std::string text = metrics.Expose(stats);
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"2\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"8\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"16\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_sum 16\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_sequences_count 1\n"));
  // A second scrape adds only what the engine counted since.
  stats.step_tokens.Observe(40000);
  text = metrics.Expose(stats);
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"16384\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_bucket{le=\"+Inf\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_tokens_sum 40016\n"));
  EXPECT_THAT(text, HasSubstr("surge_engine_step_sequences_count 1\n"));
}

TEST(ServerMetricsTest, KvBytesAreBlocksTimesBytesPerBlock) {
  ServerMetrics metrics;
  const std::string text =
      metrics.Expose({.num_free_blocks = 30, .num_total_blocks = 100, .kv_bytes_per_block = 4096});
  EXPECT_THAT(text, HasSubstr("surge_kv_cache_used_bytes 286720\n"));
  EXPECT_THAT(text, HasSubstr("surge_kv_cache_total_bytes 409600\n"));
  EXPECT_THAT(text, HasSubstr("surge_kv_cache_usage_ratio 0.7\n"));
}

TEST(ServerMetricsTest, ErrorsAreCountedByKind) {
  EXPECT_STREQ(ErrorKindForStatus(200), "");
  EXPECT_STREQ(ErrorKindForStatus(400), "invalid_request");
  EXPECT_STREQ(ErrorKindForStatus(413), "invalid_request");
  EXPECT_STREQ(ErrorKindForStatus(404), "not_found");
  EXPECT_STREQ(ErrorKindForStatus(429), "overloaded");
  EXPECT_STREQ(ErrorKindForStatus(499), "disconnected");
  EXPECT_STREQ(ErrorKindForStatus(503), "unavailable");
  EXPECT_STREQ(ErrorKindForStatus(504), "timeout");
  EXPECT_STREQ(ErrorKindForStatus(500), "internal");
  ServerMetrics metrics;
  for (int status : {200, 400, 400, 429, 504}) metrics.CountRequest("/v1/completions", status);
  metrics.CountError("timeout");
  metrics.CountTimeout();
  metrics.ObserveInterTokenLatency(0.002);
  metrics.SetActiveConnections(3);
  const std::string text = metrics.Expose({});
  EXPECT_THAT(text, HasSubstr("surge_request_errors_total{kind=\"invalid_request\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("surge_request_errors_total{kind=\"overloaded\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("surge_request_errors_total{kind=\"timeout\"} 2\n"));
  EXPECT_THAT(text, Not(HasSubstr("kind=\"\"")));
  EXPECT_THAT(text, HasSubstr("surge_request_timeouts_total 1\n"));
  EXPECT_THAT(text, HasSubstr("surge_inter_token_latency_seconds_bucket{le=\"0.0025\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("surge_http_active_connections 3\n"));
  EXPECT_THAT(text, HasSubstr("surge_time_to_first_token_seconds_bucket{le=\"0.075\"} 0\n"));  // the agreed buckets
}

class ServerTimeoutTest : public testing_util::FakeServerTest {
 protected:
  void Start(double request_timeout_s = 0) {
    ServerOptions options = testing_util::FakeServerOptions();
    options.request_timeout_s = request_timeout_s;
    StartServer(testing_util::StoriesTokenizer(), options);
  }
  std::future<StatusOr<net::HttpResponse>> PostAsync(const std::string& path, const std::string& body) {
    return std::async(std::launch::async, [this, path, body] { return net::Fetch("POST", Url(path), body); });
  }
  // The timeout_s the engine got for a request with `body`, which is then finished.
  double SubmittedTimeout(const std::string& body) {
    auto response = PostAsync("/v1/completions", body);
    const size_t index = engine_.num_submitted();
    EXPECT_TRUE(engine_.WaitForSubmitted(index + 1));
    const double timeout_s = engine_.submitted(index).request.timeout_s;
    engine_.Emit(index, Delta(0, "a", {4}, FinishReason::kLength, true));
    EXPECT_EQ(response.get()->status, 200);
    return timeout_s;
  }
  static RequestOutput Expired() {
    RequestOutput output;
    output.finished = true;
    output.error = Status(StatusCode::kDeadlineExceeded, "the request's timeout of 0.5 s passed");
    return output;
  }
  std::string Metrics() { return net::Fetch("GET", Url("/metrics"))->body; }
};

// What is left of the deadline at submission: a little under what was asked.
TEST_F(ServerTimeoutTest, BodyTimeoutReachesTheEngine) {
  Start();
  const double timeout_s = SubmittedTimeout(R"({"prompt": "x", "timeout": 2})");
  EXPECT_GT(timeout_s, 1.5);
  EXPECT_LE(timeout_s, 2);
  EXPECT_EQ(SubmittedTimeout(R"({"prompt": "x"})"), 0);  // none by default
}

TEST_F(ServerTimeoutTest, ServerTimeoutIsTheDefaultAndTheMost) {
  Start(/*request_timeout_s=*/3);
  EXPECT_GT(SubmittedTimeout(R"({"prompt": "x"})"), 2.5);
  EXPECT_LE(SubmittedTimeout(R"({"prompt": "x", "timeout": 1})"), 1);
  net::HttpResponse refused = Post("/v1/completions", R"({"prompt": "x", "timeout": 5})");
  EXPECT_EQ(refused.status, 400);
  json error = json::parse(refused.body)["error"];
  EXPECT_EQ(error["param"], "timeout");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("--request-timeout of 3 s"));
  net::HttpResponse chat =
      Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "timeout": "soon"})");
  EXPECT_EQ(chat.status, 400);
  EXPECT_EQ(json::parse(chat.body)["error"]["param"], "timeout");
}

TEST_F(ServerTimeoutTest, DeadlineIs504WithATimeoutError) {
  Start();
  auto response = PostAsync("/v1/completions", R"({"prompt": "x", "timeout": 0.5})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "partial", {4}));
  engine_.Emit(0, Expired());
  net::HttpResponse reply = *response.get();
  EXPECT_EQ(reply.status, 504);
  json error = json::parse(reply.body)["error"];
  EXPECT_EQ(error["type"], "timeout_error");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("timeout of 0.5 s"));
  const std::string text = Metrics();
  EXPECT_THAT(text, HasSubstr("surge_request_timeouts_total 1\n"));
  EXPECT_THAT(text, HasSubstr("surge_request_errors_total{kind=\"timeout\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(R"(surge_http_requests_total{endpoint="/v1/completions",code="504"} 1)"));
}

TEST_F(ServerTimeoutTest, StreamedDeadlineIsAnErrorEventThenDone) {
  Start();
  auto response = PostAsync("/v1/completions", R"({"prompt": "x", "stream": true, "timeout": 0.5})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "Hi", {7}));
  engine_.Emit(0, Expired());
  net::HttpResponse reply = *response.get();
  EXPECT_EQ(reply.status, 200);  // the headers went out before the deadline
  EXPECT_THAT(reply.body, HasSubstr(R"("type":"timeout_error")"));
  EXPECT_TRUE(reply.body.ends_with("data: [DONE]\n\n")) << reply.body;
  const std::string text = Metrics();
  EXPECT_THAT(text, HasSubstr("surge_request_timeouts_total 1\n"));
  EXPECT_THAT(text, HasSubstr("surge_request_errors_total{kind=\"timeout\"} 1\n"));
}

// One inter-token observation per drained output with tokens after a choice's first, and
// the connection count at the scrape.
TEST_F(ServerTimeoutTest, InterTokenLatencyAndConnections) {
  Start();
  std::mutex mu;
  std::string received;  // guarded by mu
  auto has = [&](const std::string& text) {
    std::lock_guard<std::mutex> lock(mu);
    return received.find(text) != std::string::npos;
  };
  net::HttpClient client;
  std::promise<void> done;
  net::ClientCallbacks callbacks;
  callbacks.on_data = [&](std::string_view data, net::SteadyTime) {
    std::lock_guard<std::mutex> lock(mu);
    received.append(data);
    return true;
  };
  callbacks.on_done = [&](net::ClientResult) { done.set_value(); };
  client.Send({"POST", Url("/v1/completions"), {}, R"({"prompt": "x", "stream": true})"}, std::move(callbacks));
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  for (int i = 0; i < 3; ++i) {  // each output drained on its own before the next
    const std::string text = "tok" + std::to_string(i);
    engine_.Emit(0, Delta(0, text, {4 + i}));
    for (int wait = 0; wait < 2000 && !has(text); ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(has(text)) << text;
  }
  const std::string during = Metrics();
  EXPECT_THAT(during, HasSubstr("surge_inter_token_latency_seconds_count 2\n"));
  EXPECT_THAT(during, HasSubstr("surge_http_active_connections 2\n"));  // the stream and the scrape
  engine_.Emit(0, Delta(0, "", {}, FinishReason::kLength, true));
  done.get_future().get();
}

}  // namespace
}  // namespace surge
