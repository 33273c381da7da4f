// Breaker transitions, outlier ejection, health thresholds, /metrics parsing and the
// backend set's routing rules (routable filter, removal, draining, the last-backend guard).
#include <gtest/gtest.h>

#include <map>

#include "router/backend_set.h"
#include "router/circuit_breaker.h"
#include "router/engine_metrics.h"
#include "router/outlier_detector.h"

namespace surge::router {
namespace {

TEST(CircuitBreakerTest, OpensProbesAndCloses) {
  CircuitBreaker breaker({.failure_threshold = 3, .cooldown_ms = 100, .success_threshold = 2});
  breaker.OnFailure(0);
  breaker.OnFailure(1);
  breaker.OnSuccess(2);  // resets the run
  breaker.OnFailure(3);
  breaker.OnFailure(4);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
  breaker.OnFailure(5);
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  EXPECT_FALSE(breaker.CanRoute(50));
  EXPECT_TRUE(breaker.CanRoute(105));  // cool-down over: one probe may go
  breaker.OnSent(105);
  EXPECT_EQ(breaker.state(), BreakerState::kHalfOpen);
  EXPECT_FALSE(breaker.CanRoute(106));  // the probe is out
  breaker.OnSuccess(110);
  EXPECT_EQ(breaker.state(), BreakerState::kHalfOpen);  // 1 of 2 successes
  EXPECT_TRUE(breaker.CanRoute(111));
  breaker.OnSent(111);
  breaker.OnSuccess(112);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
}

TEST(CircuitBreakerTest, AFailedProbeReopensAndAnAbandonedOneFreesTheSlot) {
  CircuitBreaker breaker({.failure_threshold = 1, .cooldown_ms = 10, .success_threshold = 1});
  breaker.OnFailure(0);
  breaker.OnSent(20);
  breaker.OnAbandoned();
  EXPECT_TRUE(breaker.CanRoute(21));
  breaker.OnSent(21);
  breaker.OnFailure(22);
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  EXPECT_FALSE(breaker.CanRoute(25));
  EXPECT_TRUE(breaker.CanRoute(32));
}

TEST(OutlierDetectorTest, EjectsOnErrorRateInTheWindowOnly) {
  OutlierDetector detector({.window_ms = 1000, .min_requests = 4, .max_error_rate = 0.5, .duration_ms = 500});
  detector.Record(true, 0);
  detector.Record(true, 1);
  detector.Record(true, 2);
  EXPECT_FALSE(detector.ShouldEject(3));  // too few requests to judge
  detector.Record(false, 3);
  EXPECT_TRUE(detector.ShouldEject(4));  // 3 of 4 failed
  EXPECT_FALSE(detector.ShouldEject(1500));  // those fell out of the window
  detector.Record(true, 2000);
  detector.Record(true, 2001);
  detector.Record(false, 2002);
  detector.Record(false, 2003);
  EXPECT_FALSE(detector.ShouldEject(2004));  // exactly 0.5 is not above it
  detector.Record(true, 2005);
  ASSERT_TRUE(detector.ShouldEject(2006));
  detector.Eject(2006);
  EXPECT_TRUE(detector.IsEjected(2400));
  EXPECT_FALSE(detector.IsEjected(2506));
  EXPECT_FALSE(detector.ShouldEject(2507));  // a fresh window after the ejection
}

TEST(BackendTest, HealthThresholdsAndDraining) {
  RouteConfig config;
  HealthConfig health{.unhealthy_threshold = 2, .healthy_threshold = 2};
  Backend backend(0, {.url = "http://a:1"}, config);
  EXPECT_TRUE(backend.IsRoutable(0));
  backend.OnHealthCheck(0, health);
  EXPECT_TRUE(backend.healthy());
  backend.OnHealthCheck(500, health);
  EXPECT_FALSE(backend.healthy());
  backend.OnHealthCheck(200, health);
  EXPECT_FALSE(backend.healthy());
  backend.OnHealthCheck(200, health);
  EXPECT_TRUE(backend.IsRoutable(0));
  backend.OnHealthCheck(503, health);  // draining: healthy, yet no new requests
  EXPECT_TRUE(backend.healthy());
  EXPECT_TRUE(backend.draining());
  EXPECT_FALSE(backend.IsRoutable(0));
  backend.OnHealthCheck(200, health);
  EXPECT_TRUE(backend.IsRoutable(0));
}

TEST(EngineMetricsTest, ReadsSurgeAndVllmNames) {
  StatusOr<EngineLoad> surge = ParseEngineLoad(
      "# HELP surge_num_requests_running x\n# TYPE surge_num_requests_running gauge\n"
      "surge_num_requests_running 3\nsurge_num_requests_waiting 2\nsurge_kv_cache_usage_ratio 0.25\n"
      "surge_num_requests_running_total 99\nsurge_engine_busy_fraction 0.75\n");
  ASSERT_TRUE(surge.ok()) << surge.status().ToString();
  EXPECT_EQ(surge->num_running, 3);
  EXPECT_DOUBLE_EQ(surge->busy_fraction, 0.75);
  EXPECT_EQ(surge->num_waiting, 2);
  EXPECT_DOUBLE_EQ(surge->kv_usage, 0.25);
  StatusOr<EngineLoad> vllm = ParseEngineLoad(
      "vllm:num_requests_running{model_name=\"m\"} 4.0\nvllm:num_requests_waiting{model_name=\"m\"} 1.0\n"
      "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n");
  ASSERT_TRUE(vllm.ok()) << vllm.status().ToString();
  EXPECT_EQ(vllm->num_running, 4);
  EXPECT_EQ(vllm->num_waiting, 1);
  EXPECT_DOUBLE_EQ(vllm->kv_usage, 0.5);
  StatusOr<EngineLoad> none = ParseEngineLoad("other_metric 1\nother_metric NaN\n");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->num_running, -1);
  EXPECT_EQ(none->kv_usage, -1);
  EXPECT_EQ(none->busy_fraction, -1);
}

// Issue 31: NaN, infinities and 1e999 reached the load-balancing policies. Now the answer
// is refused with the sample named (the monitor counts it and leaves the load unknown).
TEST(EngineMetricsTest, RefusesValuesRoutingCannotUse) {
  for (const char* bad : {"surge_num_requests_running NaN\n", "surge_num_requests_waiting +Inf\n",
                          "vllm:num_requests_running{a=\"b\"} 1e999\n", "surge_num_requests_running -1\n",
                          "surge_kv_cache_usage_ratio 1.5\n", "surge_engine_busy_fraction -Inf\n",
                          "surge_num_requests_waiting 1e10\n", "surge_kv_cache_usage_ratio nan\n"}) {
    StatusOr<EngineLoad> load = ParseEngineLoad(bad);
    ASSERT_FALSE(load.ok()) << bad;
    EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(load.status().message().find(std::string(bad).substr(0, 15)), std::string::npos) << load.status().ToString();
  }
}

RouteConfig TwoPools() {
  RouteConfig config;
  config.pools["default"].policy = "round-robin";
  config.pools["big"] = {.policy = "least-load", .models = {"llama-70b"}};
  config.backends = {{.url = "http://a:1"}, {.url = "http://b:2/"}, {.url = "http://c:3", .pool = "big"}};
  config.breaker.failure_threshold = 2;
  config.ejection = {.window_ms = 60'000, .min_requests = 2, .max_error_rate = 0.5, .duration_ms = 60'000};
  return config;
}

TEST(BackendSetTest, PoolsByModelAndRuntimeChanges) {
  RouteConfig config = TwoPools();
  auto set = BackendSet::Create(config);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  BackendSet& backends = **set;
  EXPECT_EQ(backends.PoolForModel("big"), "big");
  EXPECT_EQ(backends.PoolForModel("llama-70b"), "big");
  EXPECT_EQ(backends.PoolForModel("other"), "default");
  EXPECT_EQ(backends.PoolForModel(""), "default");
  EXPECT_EQ(backends.PolicyName("big"), "least-load");

  std::shared_ptr<Backend> chosen = backends.Choose("big", {}, {});
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->url(), "http://c:3");
  EXPECT_EQ(chosen->num_in_flight(), 1);
  chosen->OnAttemptEnd(AttemptOutcome::kSuccess, SteadyNowMs());
  // A tried backend is not chosen again for the same request.
  const int32_t tried[] = {chosen->id()};
  EXPECT_EQ(backends.Choose("big", {}, tried), nullptr);

  ASSERT_TRUE(backends.SetDraining("http://b:2", true).ok());  // the trailing '/' was dropped
  for (int i = 0; i < 4; ++i) {
    auto backend = backends.Choose("default", {}, {});
    EXPECT_EQ(backend->url(), "http://a:1");
    backend->OnAttemptEnd(AttemptOutcome::kNeutral, SteadyNowMs());
  }
  ASSERT_TRUE(backends.SetDraining("http://b:2", false).ok());
  EXPECT_EQ(backends.AddBackend("nope", "http://d:4", 1).code(), StatusCode::kNotFound);
  EXPECT_FALSE(backends.AddBackend("default", "http://a:1", 1).ok());  // already there
  ASSERT_TRUE(backends.AddBackend("big", "http://d:4", 2).ok());
  EXPECT_EQ(backends.Snapshot().size(), 4u);

  // Removing a backend with a request on it: new requests go elsewhere, the request
  // keeps its Backend until it ends.
  std::shared_ptr<Backend> held = backends.Choose("big", {}, {});
  ASSERT_TRUE(backends.RemoveBackend(held->url()).ok());
  EXPECT_TRUE(held->removed());
  EXPECT_FALSE(held->IsRoutable(SteadyNowMs()));
  for (int i = 0; i < 3; ++i) {
    auto other = backends.Choose("big", {}, {});
    ASSERT_NE(other, nullptr);
    EXPECT_NE(other->url(), held->url());
    other->OnAttemptEnd(AttemptOutcome::kSuccess, SteadyNowMs());
  }
  held->OnAttemptEnd(AttemptOutcome::kSuccess, SteadyNowMs());
  EXPECT_EQ(backends.RemoveBackend("http://zz:9").code(), StatusCode::kNotFound);
}

TEST(BackendSetTest, BreakerAndEjectionTakeABackendOutButNeverTheLast) {
  RouteConfig config = TwoPools();
  auto set = BackendSet::Create(config);
  ASSERT_TRUE(set.ok());
  BackendSet& backends = **set;
  std::map<std::string, std::shared_ptr<Backend>> by_url;
  for (auto& backend : backends.Snapshot()) by_url[backend->url()] = backend;
  Backend& a = *by_url["http://a:1"];
  const int64_t now = SteadyNowMs();
  a.OnAttemptStart(now);
  a.OnAttemptEnd(AttemptOutcome::kFailure, now);
  a.OnAttemptStart(now);
  a.OnAttemptEnd(AttemptOutcome::kFailure, now);
  EXPECT_EQ(a.breaker_state(), BreakerState::kOpen);
  EXPECT_TRUE(backends.MaybeEject(a, now));  // b is still routable
  EXPECT_TRUE(a.IsEjected(now));
  for (int i = 0; i < 3; ++i) {
    auto backend = backends.Choose("default", {}, {});
    EXPECT_EQ(backend->url(), "http://b:2");
    backend->OnAttemptEnd(AttemptOutcome::kNeutral, now);
  }
  // c is alone in its pool: however bad, it is never ejected.
  Backend& c = *by_url["http://c:3"];
  for (int i = 0; i < 4; ++i) {
    c.OnAttemptStart(now);
    c.OnAttemptEnd(AttemptOutcome::kFailure, now);
  }
  EXPECT_TRUE(c.ShouldEject(now));
  EXPECT_FALSE(backends.MaybeEject(c, now));
  EXPECT_EQ(backends.NumRoutable(now), 1);  // b; c's breaker is open
}

TEST(BackendSetTest, UnknownPolicyIsNamedWithItsPool) {
  RouteConfig config;
  config.pools["default"].policy = "nope";
  auto set = BackendSet::Create(config);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("pool 'default'"), std::string::npos);
  EXPECT_NE(set.status().message().find("'nope'"), std::string::npos);
}

}  // namespace
}  // namespace surge::router
