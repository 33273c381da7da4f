// What the router does with engine answers it cannot use (issue 31): /metrics with NaN, +Inf
// or 1e999, a /v1/models answer nested 100k deep or not UTF-8 -- refused, counted in
// surge_router_backend_bad_answers_total and ignored, while the router keeps serving.
#include <chrono>
#include <string>
#include <thread>

#include "router/fake_engine.h"

namespace surge::router {
namespace {

using namespace testing_util;  // NOLINT: the shared fake engine and helpers

// An engine whose /metrics and /v1/models answers are unusable (NaN, 1e999, invalid UTF-8,
// nesting 100k deep) is counted and ignored: the router keeps serving, from it too.
TEST(ProxyTest, BadEngineAnswersAreCountedAndIgnored) {
  FakeEngine good("good"), bad("bad");
  bad.SetAnswers("surge_num_requests_running NaN\nsurge_kv_cache_usage_ratio 1e999\n",
                 R"({"object":"list","data":[{"id":"deep"}],"x":)" + std::string(100'000, '[') +
                     std::string(100'000, ']') + "}");
  auto gateway = StartGateway(FastConfig({good.url(), bad.url()}));
  net::HttpClient client;
  auto models = client.Fetch({.url = gateway->url() + "/v1/models"});
  ASSERT_TRUE(models.ok());
  EXPECT_EQ(models->status, 200);
  EXPECT_EQ(Json::parse(models->body)["data"].size(), 1u) << models->body;
  bad.SetAnswers("surge_num_requests_running 0\n", "{\"object\":\"list\",\"data\":[{\"id\":\"\xff\xfe\"}]}");
  EXPECT_EQ(client.Fetch({.url = gateway->url() + "/v1/models"})->status, 200);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Post(client, *gateway, "{}")->status, 200);
  EXPECT_GT(bad.num_requests(), 0);  // still routable: its answers were bad, not its health
  bad.SetAnswers("surge_num_requests_running +Inf\n", "");
  // The monitor scrapes every 50 ms: wait (no deadline asserted) until it counted one.
  const std::string metrics_line =
      "surge_router_backend_bad_answers_total{backend=\"" + bad.url() + "\",answer=\"metrics\"}";
  std::string text;
  for (int i = 0; i < 600; ++i) {
    text = client.Fetch({.url = gateway->url() + "/metrics"})->body;
    if (text.find(metrics_line) != std::string::npos && text.find(metrics_line + " 0\n") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(text.find(metrics_line), std::string::npos) << text;
  EXPECT_EQ(text.find(metrics_line + " 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("surge_router_backend_bad_answers_total{backend=\"" + bad.url() + "\",answer=\"models\"} 2\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("surge_router_backend_bad_answers_total{backend=\"" + good.url() + "\",answer=\"models\"} 0\n"),
            std::string::npos) << text;
}

}  // namespace
}  // namespace surge::router
