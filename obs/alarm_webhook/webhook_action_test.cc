// The webhook action against a real HTTP server: payload, retries after a 500, give-up.
#include "obs/alarm_webhook/webhook_action.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "net/http_server.h"

namespace surge::obs {
namespace {

AlarmRule WebhookRule(const std::string& url, int retries) {
  AlarmRule rule;
  rule.name = "TtftHigh";
  rule.expr.kind = ExprKind::kQuantile;
  rule.expr.selector = *ParseSelector("ttft_seconds");
  rule.expr.quantile = 0.95;
  rule.expr.window = std::chrono::minutes(5);
  rule.threshold = 2;
  rule.severity = "page";
  rule.summary = "P95 TTFT above 2 s";
  rule.action.type = AlarmAction::Type::kWebhook;
  rule.action.url = url;
  rule.action.num_retries = retries;
  rule.action.backoff = std::chrono::milliseconds(20);
  rule.action.timeout = std::chrono::milliseconds(2000);
  return rule;
}

AlertEvent Firing() {
  return {.rule_index = 0, .group = {{"pool", "a"}}, .to = AlertState::kFiring, .value = 2.5,
          .firing_since_ms = 1'700'000'000'000};
}

TEST(WebhookActionTest, PayloadIsAlertmanagerLike) {
  const nlohmann::json body = WebhookPayload(WebhookRule("http://x/", 0), Firing(), "surge");
  EXPECT_EQ(body["status"], "firing");
  const nlohmann::json& alert = body["alerts"][0];
  EXPECT_EQ(alert["labels"]["alertname"], "TtftHigh");
  EXPECT_EQ(alert["labels"]["severity"], "page");
  EXPECT_EQ(alert["labels"]["pool"], "a");
  EXPECT_EQ(alert["annotations"]["summary"], "P95 TTFT above 2 s");
  EXPECT_EQ(alert["startsAt"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(alert["endsAt"], "0001-01-01T00:00:00Z");
  EXPECT_EQ(alert["value"], 2.5);
}

TEST(WebhookActionTest, RetriesAFailedPostAndGivesUpAfterItsRetries) {
  std::atomic<int> num_posts{0};
  net::HttpServer server(net::HttpServerOptions{.host = "127.0.0.1", .port = 0});
  server.Route("POST", "/hook", [&](net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
    const int n = ++num_posts;
    EXPECT_EQ(nlohmann::json::parse(request.body)["alerts"][0]["status"], "firing");
    writer->SendJson(n == 1 ? 500 : 200, "{}");
  });
  server.Route("POST", "/down", [&](net::HttpRequest, std::shared_ptr<net::ResponseWriter> writer) {
    writer->SendJson(503, "{}");
  });
  ASSERT_TRUE(server.Start().ok());
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  for (auto [path, retries, want_ok] : {std::tuple{"/hook", 2, true}, std::tuple{"/down", 1, false}}) {
    AlarmRule rule = WebhookRule(base + path, retries);
    StatusOr<AlarmActionFunction> action = MakeWebhookAction(rule);
    ASSERT_TRUE(action.ok());
    std::promise<std::pair<bool, std::string>> result;
    (*action)(rule, Firing(), [&](const Status& status, const std::string& detail) {
      result.set_value({status.ok(), status.ok() ? detail : status.message()});
    });
    auto [ok, text] = result.get_future().get();
    EXPECT_EQ(ok, want_ok) << text;
    if (want_ok) EXPECT_EQ(text, "HTTP 200 after 2 attempt(s)");
    else EXPECT_NE(text.find("HTTP 503"), std::string::npos) << text;
  }
  EXPECT_EQ(num_posts.load(), 2);
}

}  // namespace
}  // namespace surge::obs
