// POST /v1/embeddings against a scripted engine: inputs reach the engine as prefill-only
// requests under the server's pooling, the answer has OpenAI's shape (floats, base64,
// dimensions), errors name their field, and a client that leaves cancels the work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "server/fake_engine.h"
#include "server/openai_server.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::FakeEngine;

RequestOutput Vector(std::vector<float> embedding, int32_t num_prompt_tokens) {
  RequestOutput output;
  output.finished = true;
  output.num_prompt_tokens = num_prompt_tokens;
  output.embedding = std::move(embedding);
  ChoiceDelta delta;
  delta.finish_reason = FinishReason::kStop;
  output.choices.push_back(delta);
  return output;
}

std::vector<float> DecodeBase64Floats(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  uint32_t bits = 0;
  int num_bits = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = bits << 6 | static_cast<uint32_t>(kAlphabet.find(c));
    num_bits += 6;
    if (num_bits >= 8) bytes += static_cast<char>((bits >> (num_bits -= 8)) & 0xFF);
  }
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

class ServerEmbeddingsTest : public ::testing::Test {
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
    options.max_model_len = 16;
    options.pooling = PoolingKind::kMean;
    options.embedding_size = 4;
    auto server = OpenAiServer::Create(engine_, *tokenizer_, options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->Start().ok());
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/v1/embeddings"; }
  // Posts `body` from another thread; the engine answers through Emit meanwhile.
  std::future<net::HttpResponse> PostAsync(const std::string& body) {
    return std::async(std::launch::async, [this, body] {
      auto response = net::Fetch("POST", Url(), body);
      EXPECT_TRUE(response.ok()) << response.status().ToString();
      return response.ok() ? *response : net::HttpResponse{};
    });
  }
  net::HttpResponse Post(const std::string& body) { return PostAsync(body).get(); }
  void ExpectError(const std::string& body, int status, const std::string& param, const std::string& message,
                   const std::string& code = "") {
    net::HttpResponse response = Post(body);
    EXPECT_EQ(response.status, status) << body << ": " << response.body;
    json error = json::parse(response.body)["error"];
    EXPECT_EQ(error["param"], param.empty() ? json() : json(param)) << body;
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr(message)) << body;
    if (!code.empty()) EXPECT_EQ(error["code"], code) << body;
    EXPECT_EQ(engine_.num_submitted(), 0u) << "refused before the engine: " << body;
  }

  static Tokenizer* tokenizer_;
  FakeEngine engine_;
  std::unique_ptr<OpenAiServer> server_;
};

Tokenizer* ServerEmbeddingsTest::tokenizer_ = nullptr;

TEST_F(ServerEmbeddingsTest, InputsReachTheEngineAsPrefillOnlyRequests) {
  auto response = PostAsync(R"({"model": "fake", "input": ["Once upon a time", "x"], "user": "u"})");
  ASSERT_TRUE(engine_.WaitForSubmitted(2));
  const EngineRequest first = engine_.submitted(0).request;
  EXPECT_EQ(first.prompt_ids, (std::vector<int32_t>{1, 403, 407, 261, 378}));  // BOS + the text
  EXPECT_EQ(first.embed, PoolingKind::kMean);
  EXPECT_EQ(first.priority, 0);
  EXPECT_EQ(first.n, 1);
  const size_t num_second = engine_.submitted(1).request.prompt_ids.size();
  engine_.Emit(1, Vector({0, 1, 0, 0}, static_cast<int32_t>(num_second)));
  engine_.Emit(0, Vector({0.5f, 0.5f, 0.5f, 0.5f}, 5));
  net::HttpResponse http = response.get();
  ASSERT_EQ(http.status, 200) << http.body;
  json body = json::parse(http.body);
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "fake");
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][0]["object"], "embedding");
  EXPECT_EQ(body["data"][0]["index"], 0);
  EXPECT_EQ(body["data"][0]["embedding"], json::parse("[0.5, 0.5, 0.5, 0.5]"));
  EXPECT_EQ(body["data"][1]["index"], 1);
  EXPECT_EQ(body["data"][1]["embedding"], json::parse("[0.0, 1.0, 0.0, 0.0]"));
  EXPECT_EQ(body["usage"]["prompt_tokens"], 5 + num_second);
  EXPECT_EQ(body["usage"]["total_tokens"], 5 + num_second);
  const std::string metrics = net::Fetch("GET", "http://127.0.0.1:" + std::to_string(server_->port()) + "/metrics")->body;
  EXPECT_THAT(metrics, HasSubstr(R"(surge_http_requests_total{endpoint="/v1/embeddings",code="200"} 1)"));
}

TEST_F(ServerEmbeddingsTest, TokenIdsBase64AndDimensions) {
  auto response = PostAsync(R"({"input": [[5, 6], [7]], "encoding_format": "base64", "dimensions": 2})");
  ASSERT_TRUE(engine_.WaitForSubmitted(2));
  EXPECT_EQ(engine_.submitted(0).request.prompt_ids, (std::vector<int32_t>{5, 6}));  // ids as given
  EXPECT_EQ(engine_.submitted(1).request.prompt_ids, (std::vector<int32_t>{7}));
  engine_.Emit(0, Vector({0.3f, 0.4f, 0.5f, std::sqrt(0.5f)}, 2));
  engine_.Emit(1, Vector({-1, 0, 0, 0}, 1));
  net::HttpResponse http = response.get();
  ASSERT_EQ(http.status, 200) << http.body;
  json body = json::parse(http.body);
  const std::vector<float> first = DecodeBase64Floats(body["data"][0]["embedding"]);
  ASSERT_EQ(first.size(), 2u);  // the first 2, renormalized
  EXPECT_FLOAT_EQ(first[0], 0.6f);
  EXPECT_FLOAT_EQ(first[1], 0.8f);
  EXPECT_EQ(DecodeBase64Floats(body["data"][1]["embedding"]), (std::vector<float>{-1, 0}));
  EXPECT_EQ(body["usage"]["prompt_tokens"], 3);
}

TEST_F(ServerEmbeddingsTest, BadRequestsNameTheirField) {
  ExpectError(R"({"input": "x", "dimensions": 5})", 400, "dimensions", "[1, 4]");
  ExpectError(R"({"input": "x", "dimensions": 0})", 400, "dimensions", "dimensions must be in");
  ExpectError(R"({"input": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]})", 400, "input",
              "maximum context length is 16 tokens", "context_length_exceeded");
  ExpectError(R"({"input": ["a", [1]]})", 400, "input", "must not mix");
  ExpectError(R"({"input": ""})", 400, "input", "must not be empty");
  ExpectError(R"({"input": []})", 400, "input", "must not be empty");
  ExpectError(R"({"input": [600]})", 400, "input", "outside the vocabulary");
  ExpectError(R"({"input": "x", "encoding_format": "int8"})", 400, "encoding_format", "base64");
  ExpectError(R"({"input": "x", "pooling": "cls"})", 400, "pooling", "pooling");
  ExpectError(R"({"input": "x", "model": "other"})", 404, "model", "does not exist", "model_not_found");
}

TEST_F(ServerEmbeddingsTest, RefusalAndFailureFromTheEngine) {
  engine_.Refuse(ResourceExhaustedError("the waiting queue is full"));
  net::HttpResponse full = Post(R"({"input": "x"})");
  EXPECT_EQ(full.status, 429);
  EXPECT_FALSE(full.headers.Get("Retry-After").empty());
  engine_.Refuse(OkStatus());
  auto response = PostAsync(R"({"input": "x"})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  RequestOutput failure;
  failure.finished = true;
  failure.error = UnavailableError("the engine stopped");
  engine_.Emit(0, failure);
  net::HttpResponse failed = response.get();
  EXPECT_EQ(failed.status, 503);
  EXPECT_THAT(failed.body, HasSubstr("the engine stopped"));
}

TEST_F(ServerEmbeddingsTest, ClientLeavingCancelsEveryInput) {
  net::HttpClient client;
  std::promise<void> done;
  client.Send({"POST", Url(), {}, R"({"input": ["a", "b"]})", /*timeout_ms=*/100},
              {.on_done = [&](net::ClientResult) { done.set_value(); }});
  ASSERT_TRUE(engine_.WaitForSubmitted(2));
  done.get_future().wait();  // the client gave up and closed the connection
  ASSERT_TRUE(engine_.WaitForCancelled(2));
  EXPECT_THAT(engine_.cancelled(), ::testing::UnorderedElementsAre(engine_.submitted(0).stream->id(),
                                                                  engine_.submitted(1).stream->id()));
  for (int i = 0; i < 500 && server_->num_generations_in_flight() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(server_->num_generations_in_flight(), 0);
}

TEST_F(ServerEmbeddingsTest, ShutdownCancelsWhatOutlivesTheDrainTimeout) {
  auto response = PostAsync(R"({"input": "x"})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  server_->Shutdown(std::chrono::milliseconds(20));
  EXPECT_EQ(engine_.cancelled().size(), 1u);
  EXPECT_EQ(response.get().status, 503);
}

}  // namespace
}  // namespace surge
