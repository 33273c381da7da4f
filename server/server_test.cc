// OpenAiServer against a scripted engine: admission (429 + Retry-After), engine failures
// before and during a stream, readiness, cancellation when the client leaves, and
// graceful shutdown (drain, then cancel).
#include "server/openai_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "server/fake_engine.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::Delta;
using testing_util::FakeEngine;

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto tokenizer = Tokenizer::FromDirectory("models/stories260K");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    tokenizer_ = tokenizer->release();
  }
  static void TearDownTestSuite() { delete tokenizer_; }

  void SetUp() override {
    ServerOptions options;
    options.port = 0;
    options.served_model_name = "fake";
    options.max_model_len = 512;
    auto server = OpenAiServer::Create(engine_, *tokenizer_, options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->Start().ok());
  }

  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(server_->port()) + path; }
  net::HttpResponse Post(const std::string& path, const std::string& body) {
    auto response = net::Fetch("POST", Url(path), body);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::HttpResponse{};
  }
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

  static Tokenizer* tokenizer_;
  FakeEngine engine_;
  std::unique_ptr<OpenAiServer> server_;
};

Tokenizer* ServerTest::tokenizer_ = nullptr;

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

}  // namespace
}  // namespace surge
