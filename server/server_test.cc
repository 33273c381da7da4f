// OpenAiServer against a scripted engine: admission (429 + Retry-After), engine failures
// before and during a stream, readiness, cancellation when the client leaves, and
// graceful shutdown (drain, then cancel).
#include "server/openai_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::Delta;
using testing_util::FakeEngine;

class ServerTest : public testing_util::FakeServerTest {
 protected:
  void SetUp() override { StartServer(testing_util::StoriesTokenizer(), testing_util::FakeServerOptions()); }

  // Starts a request on `client` whose whole body lands in the returned future.
  std::future<std::string> Start(net::HttpClient& client, const std::string& body,
                                 std::function<bool(std::string_view)> on_data = nullptr) {
    auto done = std::make_shared<std::promise<std::string>>();
    auto received = std::make_shared<std::string>();
    net::ClientCallbacks callbacks;
    callbacks.on_data = [received, on_data](std::string_view data, net::SteadyTime) {
      received->append(data);
      return on_data ? on_data(data) : true;
    };
    callbacks.on_done = [done, received](net::ClientResult) { done->set_value(*received); };
    client.Send({"POST", Url("/v1/completions"), {}, body}, std::move(callbacks));
    return done->get_future();
  }
};

TEST_F(ServerTest, RequestsReachTheEngineAsAsked) {
  engine_.Refuse(OkStatus());
  net::HttpClient client;
  auto body = Start(client, R"({"prompt": "Once upon a time", "max_tokens": 5, "temperature": 0.5, "top_k": 3,
      "stop": ["x"], "seed": 9, "n": 2, "logprobs": 1, "priority": 4, "ignore_eos": true})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  const EngineRequest request = engine_.submitted(0).request;
  EXPECT_EQ(request.prompt_ids, (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(request.stop.max_tokens, 5);
  EXPECT_EQ(request.sampling.temperature, 0.5);
  EXPECT_EQ(request.sampling.top_k, 3);
  EXPECT_EQ(request.sampling.seed, 9u);
  EXPECT_EQ(request.stop.stop, std::vector<std::string>{"x"});
  EXPECT_TRUE(request.stop.ignore_eos);
  EXPECT_EQ(request.n, 2);
  EXPECT_EQ(request.top_logprobs, 1);
  EXPECT_EQ(request.priority, 4);
  engine_.Emit(0, Delta(1, "b", {5}, FinishReason::kLength));
  engine_.Emit(0, Delta(0, "a", {4}, FinishReason::kStop, /*finished=*/true));
  json response = json::parse(body.get());
  EXPECT_EQ(response["choices"][0]["text"], "a");
  EXPECT_EQ(response["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(response["choices"][1]["finish_reason"], "length");
}

TEST_F(ServerTest, DefaultMaxTokensIsTheRestOfTheContext) {
  net::HttpClient client;
  auto body = Start(client, R"({"prompt": [1, 2, 3]})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_EQ(engine_.submitted(0).request.stop.max_tokens, 512 - 3);
  engine_.Emit(0, Delta(0, "", {}, FinishReason::kStop, true));
  body.get();
}

TEST_F(ServerTest, FullQueueIs429WithRetryAfter) {
  engine_.Refuse(ResourceExhaustedError("the waiting queue is full (max_waiting 8 requests)"));
  engine_.SetStats({.num_running = 2, .num_waiting = 9, .ready = true});
  net::HttpResponse response = Post("/v1/completions", R"({"prompt": "x"})");
  EXPECT_EQ(response.status, 429);
  EXPECT_EQ(response.headers.Get("Retry-After"), "5");  // ceil(9 waiting / 2 running)
  json error = json::parse(response.body)["error"];
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("queue is full"));
  EXPECT_EQ(error["type"], "rate_limit_exceeded");
}

TEST_F(ServerTest, EngineUnavailableIs503) {
  engine_.Refuse(UnavailableError("the engine is shutting down"));
  EXPECT_EQ(Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}]})").status, 400)
      << "no chat template: refused before the engine";
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": "x"})").status, 503);
}

TEST_F(ServerTest, EngineFailureMidStreamIsAnErrorEventThenDone) {
  net::HttpClient client;
  auto body = Start(client, R"({"prompt": "x", "stream": true})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "Hi", {7}));
  RequestOutput failure;
  failure.finished = true;
  failure.error = UnavailableError("the engine stopped");
  engine_.Emit(0, failure);
  const std::string text = body.get();
  EXPECT_THAT(text, HasSubstr(R"("text":"Hi")"));
  EXPECT_THAT(text, HasSubstr(R"(data: {"error":{"message":"the engine stopped")"));
  EXPECT_TRUE(text.ends_with("data: [DONE]\n\n")) << text;
}

TEST_F(ServerTest, HealthFollowsEngineReadiness) {
  engine_.SetStats({.ready = false});
  EXPECT_EQ(net::Fetch("GET", Url("/health"))->status, 503);
  engine_.SetStats({.ready = true});
  EXPECT_EQ(net::Fetch("GET", Url("/health"))->status, 200);
}

TEST_F(ServerTest, ClientLeavingCancelsTheRequest) {
  net::HttpClient client;
  auto body = Start(client, R"({"prompt": "x", "stream": true})", [](std::string_view) { return false; });
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "Hi", {7}));
  body.get();
  ASSERT_TRUE(engine_.WaitForCancelled(1));
  EXPECT_EQ(engine_.cancelled()[0], engine_.submitted(0).stream->id());
  for (int i = 0; i < 500 && server_->num_generations_in_flight() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(server_->num_generations_in_flight(), 0);
}

TEST_F(ServerTest, ShutdownLetsStreamsFinishThenStops) {
  net::HttpClient client;
  auto body = Start(client, R"({"prompt": "x", "stream": true})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  std::thread shutdown([&] { server_->Shutdown(std::chrono::seconds(10)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  engine_.Emit(0, Delta(0, "late", {7}, FinishReason::kLength, true));
  EXPECT_THAT(body.get(), HasSubstr(R"("text":"late")"));
  shutdown.join();
  EXPECT_TRUE(engine_.cancelled().empty());
}

TEST_F(ServerTest, ShutdownCancelsWhatOutlivesTheDrainTimeout) {
  net::HttpClient client;
  auto body = Start(client, R"({"prompt": "x", "stream": true})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  server_->Shutdown(std::chrono::milliseconds(20));
  EXPECT_EQ(engine_.cancelled().size(), 1u);
  const std::string text = body.get();
  EXPECT_THAT(text, HasSubstr(R"("finish_reason":"abort")"));
  EXPECT_TRUE(text.ends_with("data: [DONE]\n\n")) << text;
}

// Priority: an integer or a tier name in the body, or the X-Priority header (which wins).
TEST_F(ServerTest, PriorityComesFromTheBodyOrTheXPriorityHeader) {
  struct Case {
    std::string body_priority;  // JSON value, "" for none
    std::string header;         // "" for none
    int32_t expected;
  };
  const std::vector<Case> cases = {{"", "", 0},           {"-3", "", -3},          {R"("batch")", "", 10},
                                   {"", "realtime", -10}, {"5", " normal ", 0},    {R"("realtime")", "batch", 10},
                                   {"", "7", 7}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("body " + c.body_priority + ", header " + c.header);
    std::string body = R"({"prompt": [1, 2], "max_tokens": 1)";
    if (!c.body_priority.empty()) body += R"(, "priority": )" + c.body_priority;
    body += "}";
    net::HttpHeaders headers;
    if (!c.header.empty()) headers.Add("X-Priority", c.header);
    auto response = std::async(std::launch::async, [&] {
      return net::Fetch("POST", Url("/v1/completions"), body, headers);
    });
    ASSERT_TRUE(engine_.WaitForSubmitted(i + 1));
    EXPECT_EQ(engine_.submitted(i).request.priority, c.expected);
    engine_.Emit(i, Delta(0, "a", {4}, FinishReason::kLength, true));
    EXPECT_EQ(response.get()->status, 200);
  }
}

TEST_F(ServerTest, InvalidPrioritiesAre400NamingTheField) {
  net::HttpResponse body_error = Post("/v1/completions", R"({"prompt": "x", "priority": "urgent"})");
  EXPECT_EQ(body_error.status, 400);
  EXPECT_EQ(json::parse(body_error.body)["error"]["param"], "priority");
  auto header_error = net::Fetch("POST", Url("/v1/chat/completions"),
                                 R"({"messages": [{"role": "user", "content": "x"}]})", {{"X-Priority", "asap"}});
  ASSERT_TRUE(header_error.ok());
  EXPECT_EQ(header_error->status, 400);
  json error = json::parse(header_error->body)["error"];
  EXPECT_EQ(error["param"], "X-Priority");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("realtime"));
}

// The engine's count of prompt tokens served from the prefix cache reaches
// usage.prompt_tokens_details.cached_tokens, whole and streamed (chat shares the code;
// the bundled model has no chat template); queue time, per-tier TTFT
// and the prefix-cache counters reach /metrics.
TEST_F(ServerTest, CachedTokensAndPrefixCacheMetrics) {
  RequestOutput output = Delta(0, "a", {4}, FinishReason::kLength, true);
  output.num_prompt_tokens = 40;
  output.num_cached_prompt_tokens = 32;
  output.num_completion_tokens = 1;
  output.queue_time_s = 0.02;
  auto whole = std::async(std::launch::async, [&] {
    return net::Fetch("POST", Url("/v1/completions"), R"({"prompt": [1, 2], "max_tokens": 1})",
                      {{"X-Priority", "realtime"}});
  });
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, output);
  json usage = json::parse(whole.get()->body)["usage"];
  EXPECT_EQ(usage["prompt_tokens_details"]["cached_tokens"], 32);
  EXPECT_EQ(usage["prompt_tokens"], 40);

  auto streamed = std::async(std::launch::async, [&] {
    return net::Fetch("POST", Url("/v1/completions"),
                      R"({"prompt": [1, 2], "max_tokens": 1, "stream": true, "stream_options": {"include_usage": true}})");
  });
  ASSERT_TRUE(engine_.WaitForSubmitted(2));
  engine_.Emit(1, output);
  const std::string events = streamed.get()->body;
  const size_t usage_at = events.rfind("data: {");
  ASSERT_NE(usage_at, std::string::npos);
  json last = json::parse(events.substr(usage_at + 6, events.find('\n', usage_at) - usage_at - 6));
  EXPECT_EQ(last["usage"]["prompt_tokens_details"]["cached_tokens"], 32);

  engine_.SetStats({.num_total_blocks = 100, .prefix_caching = true, .num_cached_blocks = 12,
                    .prefix_cache_queried_tokens = 400, .prefix_cache_hit_tokens = 100,
                    .prefix_cache_evicted_blocks = 3, .ready = true});
  auto metrics = net::Fetch("GET", Url("/metrics"));
  ASSERT_TRUE(metrics.ok());
  const std::string& text = metrics->body;
  EXPECT_THAT(text, HasSubstr("surge_prefix_cache_queries_total 400"));
  EXPECT_THAT(text, HasSubstr("surge_prefix_cache_hits_total 100"));
  EXPECT_THAT(text, HasSubstr("surge_prefix_cache_hit_rate 0.25"));
  EXPECT_THAT(text, HasSubstr("surge_prefix_cache_evictions_total 3"));
  EXPECT_THAT(text, HasSubstr("surge_prefix_cache_cached_blocks 12"));
  EXPECT_THAT(text, HasSubstr(R"(surge_request_queue_time_seconds_count{tier="realtime"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(surge_request_queue_time_seconds_count{tier="normal"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(surge_time_to_first_token_by_tier_seconds_count{tier="realtime"} 1)"));
}

}  // namespace
}  // namespace surge
