// Test helpers shared by the router's tests against in-process fake engines (real sockets
// on 127.0.0.1): FakeEngine, a fast RouteConfig, a started Gateway, a POST through it.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "router/gateway.h"

namespace surge::router::testing_util {

using Json = nlohmann::json;
using Writer = std::shared_ptr<net::ResponseWriter>;
using Handler = std::function<void(const net::HttpRequest&, Writer)>;

// An engine stand-in: /health (status settable), /metrics, /v1/models and a completion
// route whose behaviour the test sets.
class FakeEngine {
 public:
  explicit FakeEngine(std::string model = "m") : model_(std::move(model)) {
    server_.Route("GET", "/health", [this](net::HttpRequest, Writer w) { w->Send(health_status_.load(), {}, "{}"); });
    server_.Route("GET", "/metrics", [this](net::HttpRequest, Writer w) {
      std::lock_guard<std::mutex> lock(mu_);
      w->Send(200, {}, metrics_body_);
    });
    server_.Route("GET", "/v1/models", [this](net::HttpRequest, Writer w) {
      std::lock_guard<std::mutex> lock(mu_);
      w->SendJson(200, models_body_.empty()
                           ? Json{{"object", "list"}, {"data", {{{"id", model_}, {"object", "model"}}}}}.dump()
                           : models_body_);
    });
    server_.Route("POST", "/v1/completions", [this](net::HttpRequest request, Writer w) {
      ++num_requests_;
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_request_ = request;
      }
      Handler handler;
      {
        std::lock_guard<std::mutex> lock(mu_);
        handler = handler_;
      }
      handler(request, std::move(w));
    });
    SetHandler([](const net::HttpRequest& r, Writer w) { w->SendJson(200, R"({"echo":)" + Json(r.body).dump() + "}"); });
    EXPECT_TRUE(server_.Start().ok());
  }
  // What GET /metrics and GET /v1/models answer (a broken or hostile engine's bytes).
  void SetAnswers(std::string metrics, std::string models) {
    std::lock_guard<std::mutex> lock(mu_);
    metrics_body_ = std::move(metrics);
    models_body_ = std::move(models);
  }
  void SetHandler(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(handler);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  int num_requests() const { return num_requests_.load(); }
  int64_t num_connections() const { return server_.num_accepted_connections(); }
  net::HttpRequest last_request() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_request_;
  }
  std::atomic<int> health_status_{200};

 private:
  std::string model_;
  net::HttpServer server_;
  std::mutex mu_;
  Handler handler_;
  std::string metrics_body_ = "surge_num_requests_running 0\n";
  std::string models_body_;  // "": the model list of `model_`
  net::HttpRequest last_request_;
  std::atomic<int> num_requests_{0};
};

inline RouteConfig FastConfig(const std::vector<std::string>& urls, const std::string& policy = "round-robin") {
  RouteConfig config;
  config.port = 0;
  config.pools["default"].policy = policy;
  for (const std::string& url : urls) config.backends.push_back({.url = url});
  config.health.interval_ms = 50;
  config.health.timeout_ms = 200;
  config.retry = {.max_retries = 2, .backoff_base_ms = 1, .backoff_max_ms = 5};
  config.timeouts.first_byte_ms = 2000;
  config.timeouts.idle_ms = 2000;
  return config;
}

inline std::unique_ptr<Gateway> StartGateway(RouteConfig config) {
  auto gateway = Gateway::Create(std::move(config));
  EXPECT_TRUE(gateway.ok()) << gateway.status().ToString();
  EXPECT_TRUE((*gateway)->Start().ok());
  return std::move(gateway).value();
}

inline StatusOr<net::HttpResponse> Post(net::HttpClient& client, const Gateway& gateway, std::string body,
                                 net::HttpHeaders headers = {{"content-type", "application/json"}}) {
  return client.Fetch({.method = "POST", .url = gateway.url() + "/v1/completions", .headers = std::move(headers),
                       .body = std::move(body)});
}

}  // namespace surge::router::testing_util
