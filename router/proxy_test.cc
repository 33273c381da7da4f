// The Gateway's proxy path against in-process fake engines (real sockets on 127.0.0.1):
// forwarding and headers, retries, streaming pass-through, mid-stream failure, client
// disconnect, a hung backend, draining, the body limit, /v1/models, /health and /metrics.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <future>
#include <thread>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/sse.h"
#include "net/test_util.h"
#include "router/fake_engine.h"
#include "router/gateway.h"
#include "router/router_metrics.h"

namespace surge::router {
namespace {

using namespace testing_util;  // NOLINT: the shared fake engine and helpers

TEST(ProxyTest, ForwardsTheRequestAndNamesTheBackend) {
  FakeEngine engine;
  auto gateway = StartGateway(FastConfig({engine.url()}));
  net::HttpClient client;
  auto response = Post(client, *gateway, R"({"prompt":"hi"})",
                       {{"content-type", "application/json"}, {"authorization", "Bearer secret"},
                        {"traceparent", "00-abc-def-01"}, {"cookie", "x=1"}});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(Json::parse(response->body)["echo"], R"({"prompt":"hi"})");
  EXPECT_EQ(response->headers.Get("x-surge-backend"), engine.url());
  const std::string request_id = response->headers.Get("x-request-id");
  EXPECT_EQ(request_id.size(), 32u);
  net::HttpRequest seen = engine.last_request();
  EXPECT_EQ(seen.headers.Get("x-request-id"), request_id);
  EXPECT_EQ(seen.headers.Get("traceparent"), "00-abc-def-01");
  EXPECT_FALSE(seen.headers.Has("authorization"));  // not configured to forward it
  EXPECT_FALSE(seen.headers.Has("cookie"));
  // A client's own request id is kept; keep-alive to the backend is reused.
  response = Post(client, *gateway, "{}", {{"x-request-id", "mine"}});
  EXPECT_EQ(response->headers.Get("x-request-id"), "mine");
  EXPECT_EQ(engine.last_request().headers.Get("x-request-id"), "mine");
  // Keep-alive to the backend: twenty more requests open no new connection per request
  // (the monitor's checks share the pool too).
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Post(client, *gateway, "{}")->status, 200);
  EXPECT_LE(engine.num_connections(), 3);
}

TEST(ProxyTest, ForwardsAuthorizationWhenConfiguredAndRefusesLargeBodies) {
  FakeEngine engine;
  RouteConfig config = FastConfig({engine.url()});
  config.forward_authorization = true;
  config.max_body_bytes = 100;
  auto gateway = StartGateway(config);
  net::HttpClient client;
  ASSERT_TRUE(Post(client, *gateway, "{}", {{"authorization", "Bearer k"}}).ok());
  EXPECT_EQ(engine.last_request().headers.Get("authorization"), "Bearer k");
  auto response = Post(client, *gateway, std::string(200, 'x'));
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(engine.num_requests(), 1);
}

TEST(ProxyTest, RetriesAnotherBackendOn5xx429AndConnectFailure) {
  FakeEngine bad, busy, good;
  bad.SetHandler([](const net::HttpRequest&, Writer w) { w->SendError(500, "boom"); });
  busy.SetHandler([](const net::HttpRequest&, Writer w) { w->SendError(429, "busy"); });
  const std::string refused = "http://127.0.0.1:" + std::to_string(net::testing::UnusedPort());
  RouteConfig config = FastConfig({bad.url(), busy.url(), refused, good.url()});
  config.retry.max_retries = 3;
  config.breaker.failure_threshold = 1000;
  config.ejection.min_requests = 1000;
  auto gateway = StartGateway(config);
  // The monitor's first check marks the refused one unhealthy after two checks: before
  // that it is a connect failure that is retried.
  net::HttpClient client;
  for (int i = 0; i < 8; ++i) {
    auto response = Post(client, *gateway, "{}");
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, 200) << response->body;
    EXPECT_EQ(response->headers.Get("x-surge-backend"), good.url());
  }
  EXPECT_EQ(good.num_requests(), 8);
  auto metrics = client.Fetch({.url = gateway->url() + "/metrics"});
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("surge_router_retries_total{pool=\"default\"}"), std::string::npos);
}

TEST(ProxyTest, ExhaustedRetriesPassTheLastErrorOn) {
  FakeEngine bad1, bad2;
  for (FakeEngine* engine : {&bad1, &bad2}) {
    engine->SetHandler([](const net::HttpRequest&, Writer w) { w->SendError(503, "overloaded"); });
  }
  auto gateway = StartGateway(FastConfig({bad1.url(), bad2.url()}));
  net::HttpClient client;
  auto response = Post(client, *gateway, "{}");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 503);
  EXPECT_NE(response->body.find("overloaded"), std::string::npos);
  EXPECT_EQ(bad1.num_requests() + bad2.num_requests(), 2);  // each once: retries go elsewhere

  // Nothing listening at all: a 502 with an OpenAI-shaped error body.
  RouteConfig config = FastConfig({"http://127.0.0.1:" + std::to_string(net::testing::UnusedPort())});
  config.health.interval_ms = 60'000;
  config.health.unhealthy_threshold = 100;
  auto dead = StartGateway(config);
  response = Post(client, *dead, "{}");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 502);
  Json error = Json::parse(response->body);
  EXPECT_TRUE(error["error"]["message"].is_string()) << response->body;
}

TEST(ProxyTest, StreamsChunksAsTheyArriveAndEndsABrokenStreamCleanly) {
  FakeEngine engine;
  std::promise<void> first_seen;
  std::shared_future<void> first_seen_future = first_seen.get_future().share();
  engine.SetHandler([first_seen_future](const net::HttpRequest&, Writer w) {
    w->StartStream(200, net::SseHeaders());
    w->Write(net::EncodeSseData(R"({"n":1})"));
    std::thread([w, first_seen_future] {
      // The second chunk only goes once the client has seen the first: no buffering.
      if (first_seen_future.wait_for(std::chrono::seconds(3)) != std::future_status::ready) return;
      w->Write(net::EncodeSseData(R"({"n":2})"));
      // Then the engine dies mid-stream: dropping the writer cuts the connection.
    }).detach();
  });
  auto gateway = StartGateway(FastConfig({engine.url()}));
  net::HttpClient client;
  std::string received;
  std::promise<net::ClientResult> done;
  bool signalled = false;
  net::ClientCallbacks callbacks{
      .on_data = [&](std::string_view data, net::SteadyTime) {
        received.append(data);
        if (!signalled && received.find(R"({"n":1})") != std::string::npos) {
          signalled = true;
          first_seen.set_value();
        }
        return true;
      },
      .on_done = [&](net::ClientResult result) { done.set_value(std::move(result)); }};
  client.Send({.method = "POST", .url = gateway->url() + "/v1/completions", .body = R"({"stream":true})"}, callbacks);
  net::ClientResult result = done.get_future().get();
  ASSERT_TRUE(result.status.ok()) << result.status.ToString();  // a clean end, not a cut
  EXPECT_EQ(result.response.headers.Get("x-surge-backend"), engine.url());
  std::vector<net::SseEvent> events;
  ASSERT_TRUE(net::SseParser().Feed(received, &events).ok());
  ASSERT_EQ(events.size(), 4u) << received;
  EXPECT_EQ(events[1].data, R"({"n":2})");
  EXPECT_TRUE(Json::parse(events[2].data)["error"]["message"].is_string()) << events[2].data;
  EXPECT_EQ(events[3].data, "[DONE]");
}

TEST(ProxyTest, ClientDisconnectCancelsTheBackendRequest) {
  FakeEngine engine;
  std::promise<void> backend_saw_close;
  engine.SetHandler([&](const net::HttpRequest&, Writer w) {
    w->StartStream(200, net::SseHeaders());
    w->Write(net::EncodeSseData("{}"));
    w->OnClose([&backend_saw_close, w] {
      if (w->disconnected()) backend_saw_close.set_value();
    });
    // Never ends on its own: only a cancel from the router ends it.
  });
  auto gateway = StartGateway(FastConfig({engine.url()}));
  {
    net::testing::RawConnection connection(static_cast<uint16_t>(gateway->port()));
    connection.Send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    EXPECT_NE(connection.ReadUntil("data: {}").find("data: {}"), std::string::npos);
  }  // closed here
  EXPECT_EQ(backend_saw_close.get_future().wait_for(std::chrono::seconds(2)), std::future_status::ready);
}

TEST(ProxyTest, AHungBackendDoesNotStallTheOthers) {
  FakeEngine good;
  // Accepts, reads the request, never answers (each connection held 3 s).
  net::testing::FakeServer hung([](int fd) {
    net::testing::ReadRequestHead(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  });
  RouteConfig config = FastConfig({"http://127.0.0.1:" + std::to_string(hung.port()), good.url()});
  config.timeouts.first_byte_ms = 300;
  config.health.interval_ms = 60'000;  // passive only: the first-byte timeout does it
  auto gateway = StartGateway(config);
  net::HttpClient client;
  for (int i = 0; i < 4; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto response = Post(client, *gateway, "{}");
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->headers.Get("x-surge-backend"), good.url());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  }
}

TEST(ProxyTest, ADrainingBackendGetsNoNewRequests) {
  FakeEngine draining, serving;
  draining.health_status_ = 503;
  auto gateway = StartGateway(FastConfig({draining.url(), serving.url()}));
  net::HttpClient client;
  for (int i = 0; i < 6; ++i) ASSERT_EQ(Post(client, *gateway, "{}")->status, 200);
  EXPECT_EQ(draining.num_requests(), 0);
  EXPECT_EQ(serving.num_requests(), 6);
  // Drained by hand too (the autoscaler's way), and back.
  ASSERT_TRUE(gateway->SetDraining(serving.url(), true).ok());
  EXPECT_EQ(Post(client, *gateway, "{}")->status, 503);
  ASSERT_TRUE(gateway->SetDraining(serving.url(), false).ok());
  EXPECT_EQ(Post(client, *gateway, "{}")->status, 200);
  auto health = client.Fetch({.url = gateway->url() + "/health"});
  EXPECT_EQ(health->status, 200);
  ASSERT_TRUE(gateway->RemoveBackend(serving.url()).ok());
  health = client.Fetch({.url = gateway->url() + "/health"});
  EXPECT_EQ(health->status, 503);
  ASSERT_TRUE(gateway->AddBackend("default", serving.url()).ok());
  EXPECT_EQ(Post(client, *gateway, "{}")->status, 200);
}

// /metrics: time to first byte and duration per pool, errors by kind, open connections;
// an engine's 504 (its request's own deadline) is passed on, never retried elsewhere.
TEST(ProxyTest, MetricsTimeRequestsAndCountErrorsByKind) {
  FakeEngine first, second;
  for (FakeEngine* engine : {&first, &second}) {
    engine->SetHandler([](const net::HttpRequest& r, Writer w) {
      if (r.body == "bad") return w->SendError(400, "bad");
      if (r.body == "late") return w->SendError(504, "the request's timeout of 1 s passed");
      w->SendJson(200, "{}");
    });
  }
  auto gateway = StartGateway(FastConfig({first.url(), second.url()}));
  net::HttpClient client;
  EXPECT_EQ(Post(client, *gateway, "{}")->status, 200);
  EXPECT_EQ(Post(client, *gateway, "bad")->status, 400);
  EXPECT_EQ(Post(client, *gateway, "late")->status, 504);
  EXPECT_EQ(first.num_requests() + second.num_requests(), 3);
  ASSERT_TRUE(gateway->SetDraining(first.url(), true).ok());
  ASSERT_TRUE(gateway->SetDraining(second.url(), true).ok());
  EXPECT_EQ(Post(client, *gateway, "{}")->status, 503);
  const std::string text = client.Fetch({.url = gateway->url() + "/metrics"})->body;
  for (const char* line : {"surge_router_time_to_first_byte_seconds_count{pool=\"default\"} 4\n",
                           "surge_router_request_duration_seconds_count{pool=\"default\"} 4\n",
                           "surge_router_request_duration_seconds_bucket{pool=\"default\",le=\"120\"} 4\n",
                           "surge_router_errors_total{kind=\"bad_request\"} 1\n",
                           "surge_router_errors_total{kind=\"timeout\"} 1\n",
                           "surge_router_errors_total{kind=\"no_backend\"} 1\n",
                           "surge_http_active_connections 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_STREQ(RouterErrorKind(401), "unauthorized");
  EXPECT_STREQ(RouterErrorKind(429), "rate_limited");
  EXPECT_STREQ(RouterErrorKind(499), "client_disconnected");
  EXPECT_STREQ(RouterErrorKind(502), "backend_error");
  EXPECT_STREQ(RouterErrorKind(200), "");
}

TEST(ProxyTest, ModelsAreTheUnionAndModelSelectsThePool) {
  FakeEngine small("small"), other_small("small"), big("big");
  RouteConfig config = FastConfig({small.url(), other_small.url()});
  config.pools["big"].policy = "least-load";
  config.backends.push_back({.url = big.url(), .pool = "big"});
  auto gateway = StartGateway(config);
  net::HttpClient client;
  auto models = client.Fetch({.url = gateway->url() + "/v1/models"});
  ASSERT_TRUE(models.ok());
  Json body = Json::parse(models->body);
  ASSERT_EQ(body["data"].size(), 2u) << models->body;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Post(client, *gateway, R"({"model":"big"})")->headers.Get("x-surge-backend"), big.url());
    EXPECT_NE(Post(client, *gateway, R"({"model":"small"})")->headers.Get("x-surge-backend"), big.url());
  }
  auto metrics = client.Fetch({.url = gateway->url() + "/metrics"});
  ASSERT_TRUE(metrics.ok());
  for (const char* name : {"surge_router_requests_total{backend=\"" , "surge_router_decision_seconds_bucket",
                           "surge_router_backend_breaker_state{", "surge_router_backend_healthy{",
                           "surge_router_backend_in_flight{"}) {
    EXPECT_NE(metrics->body.find(name), std::string::npos) << name;
  }
  EXPECT_NE(metrics->body.find("pool=\"big\",policy=\"least-load\",code=\"200\""), std::string::npos);
}

// The worker supervisor's and autoscaler's calls, under traffic: backends come and go from
// another thread while requests flow; none fails, and a removed backend's request in
// flight still finishes.
TEST(ProxyTest, BackendsComeAndGoUnderTraffic) {
  FakeEngine stable, flapping;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  flapping.SetHandler([released](const net::HttpRequest&, Writer w) {
    std::thread([w, released] {
      released.wait_for(std::chrono::seconds(3));
      w->SendJson(200, R"({"slow":true})");
    }).detach();
  });
  RouteConfig config = FastConfig({stable.url()});
  auto gateway = StartGateway(config);
  ASSERT_TRUE(gateway->AddBackend("default", flapping.url()).ok());
  // A request lands on the flapping backend (round-robin: the second one) and is held there.
  net::HttpClient client;
  ASSERT_EQ(Post(client, *gateway, "{}")->headers.Get("x-surge-backend"), stable.url());
  std::promise<net::ClientResult> held_done;
  client.Send({.method = "POST", .url = gateway->url() + "/v1/completions", .body = "{}"},
              {.on_done = [&](net::ClientResult r) { held_done.set_value(std::move(r)); }});
  for (int i = 0; i < 200 && flapping.num_requests() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(flapping.num_requests(), 1);
  ASSERT_TRUE(gateway->RemoveBackend(flapping.url()).ok());

  std::atomic<bool> stop{false};
  std::thread churn([&] {
    FakeEngine extra;
    while (!stop.load()) {
      EXPECT_TRUE(gateway->AddBackend("default", extra.url(), 2).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      EXPECT_TRUE(gateway->SetDraining(extra.url(), true).ok());
      EXPECT_TRUE(gateway->RemoveBackend(extra.url()).ok());
    }
  });
  std::vector<std::thread> senders;
  std::atomic<int> num_ok{0};
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&] {
      net::HttpClient own;
      for (int i = 0; i < 50; ++i) num_ok += Post(own, *gateway, "{}")->status == 200 ? 1 : 0;
    });
  }
  for (std::thread& sender : senders) sender.join();
  stop = true;
  churn.join();
  EXPECT_EQ(num_ok.load(), 200);
  EXPECT_EQ(flapping.num_requests(), 1);  // removed: nothing new went there
  release.set_value();
  net::ClientResult held = held_done.get_future().get();
  ASSERT_TRUE(held.status.ok()) << held.status.ToString();
  EXPECT_EQ(held.response.status, 200);
  EXPECT_EQ(held.response.body, R"({"slow":true})");
}

// A sanity check, not a benchmark: sequential requests to an instant backend, directly and
// through the router, on one keep-alive connection each. Prints the added latency.
TEST(ProxyTest, AddedLatencySanity) {
  FakeEngine engine;
  engine.SetHandler([](const net::HttpRequest&, Writer w) { w->SendJson(200, R"({"ok":true})"); });
  auto gateway = StartGateway(FastConfig({engine.url()}));
  net::HttpClient client;
  auto time_requests = [&](const std::string& url, int num) {
    std::vector<double> us;
    for (int i = 0; i < num; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto response = client.Fetch({.method = "POST", .url = url, .body = R"({"prompt":"x"})"});
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      EXPECT_TRUE(response.ok() && response->status == 200);
    }
    std::sort(us.begin(), us.end());
    return std::pair{us[us.size() / 2], us[us.size() * 99 / 100]};
  };
  time_requests(gateway->url() + "/v1/completions", 50);  // warm up both paths
  auto [direct_p50, direct_p99] = time_requests(engine.url() + "/v1/completions", 1000);
  auto [routed_p50, routed_p99] = time_requests(gateway->url() + "/v1/completions", 1000);
  std::printf("direct p50 %.0f us p99 %.0f us; routed p50 %.0f us p99 %.0f us; added p50 %.0f us\n", direct_p50,
              direct_p99, routed_p50, routed_p99, routed_p50 - direct_p50);
  EXPECT_LT(routed_p50 - direct_p50, 5000);  // loose: a shared, busy test machine
}

// A body that is not a JSON object names no model: with no pool for model "" that is the
// client's 400, naming the problem (it was a 503 "no routable backend in pool 'default'").
TEST(ProxyTest, UnparsableBodyWithNoPoolForItIsA400) {
  FakeEngine engine;
  RouteConfig config = FastConfig({engine.url()});
  config.backends[0].pool = "big";
  config.pools["big"] = {.policy = "round-robin", .models = {"llama"}};
  auto gateway = StartGateway(config);
  net::HttpClient client;
  for (const auto& [body, problem] : std::vector<std::pair<std::string, std::string>>{
           {"{not json", "is not valid JSON"}, {"[1, 2]", "is not a JSON object"}, {"", "is not a JSON object"}}) {
    auto response = Post(client, *gateway, body);
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, 400) << body;
    EXPECT_NE(response->body.find("the request body " + problem), std::string::npos) << response->body;
  }
  auto routed = Post(client, *gateway, R"({"model": "llama", "prompt": "hi"})");
  ASSERT_TRUE(routed.ok());
  EXPECT_EQ(routed->status, 200);
  auto unknown = Post(client, *gateway, R"({"prompt": "hi"})");  // valid, but no pool for ""
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 503);
  EXPECT_EQ(engine.num_requests(), 1);
}

}  // namespace
}  // namespace surge::router
