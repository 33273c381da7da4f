#include "router/policy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace surge::router {
namespace {

std::vector<std::string> kUrls = {"http://a:1", "http://b:2", "http://c:3", "http://d:4"};

std::vector<Candidate> Candidates(size_t num, std::vector<double> weights = {}) {
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < num; ++i) {
    candidates.push_back({.backend_id = static_cast<int32_t>(i), .url = kUrls[i],
                          .weight = weights.empty() ? 1.0 : weights[i]});
  }
  return candidates;
}

std::unique_ptr<Policy> Make(const std::string& name, PolicyOptions options = {}) {
  StatusOr<std::unique_ptr<Policy>> policy = MakePolicy(name, options);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::move(policy).value();
}

TEST(PolicyTest, RegistryNamesAndRefusesUnknown) {
  for (const char* name : {"round-robin", "least-load", "p2c", "session"}) EXPECT_EQ(Make(name)->name(), name);
  StatusOr<std::unique_ptr<Policy>> bad = MakePolicy("fastest", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'fastest'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("round-robin"), std::string::npos);
  RegisterPolicy("always-last", [](const PolicyOptions&) -> StatusOr<std::unique_ptr<Policy>> {
    struct Last : Policy {
      std::string_view name() const override { return "always-last"; }
      PickResult Pick(const RouteRequest&, std::span<const Candidate> c) override { return c.size() - 1; }
    };
    return std::unique_ptr<Policy>(new Last);
  });
  EXPECT_EQ(Make("always-last")->Pick({}, Candidates(3)).index, 2u);
}

TEST(PolicyTest, WeightedRoundRobinIsSmoothAndProportional) {
  auto policy = Make("round-robin");
  std::vector<Candidate> candidates = Candidates(3, {3, 1, 1});
  std::vector<size_t> picks;
  for (int i = 0; i < 10; ++i) picks.push_back(policy->Pick({}, candidates).index);
  std::map<size_t, int> counts;
  for (size_t pick : picks) ++counts[pick];
  EXPECT_EQ(counts[0], 6);
  EXPECT_EQ(counts[1], 2);
  EXPECT_EQ(counts[2], 2);
  // Smooth: the heavy backend never gets more than two in a row here.
  for (size_t i = 0; i + 2 < picks.size(); ++i) EXPECT_FALSE(picks[i] == 0 && picks[i + 1] == 0 && picks[i + 2] == 0);
  // Equal weights: strict rotation.
  auto plain = Make("round-robin");
  std::vector<Candidate> two = Candidates(2);
  EXPECT_NE(plain->Pick({}, two).index, plain->Pick({}, two).index);
}

TEST(PolicyTest, LeastLoadScoreFollowsTheFormula) {
  PolicyOptions options;
  options.backend_capacity = 10;
  std::vector<Candidate> candidates = Candidates(3);
  candidates[0].load = {.num_running = 2, .num_waiting = 0, .kv_usage = 0.9};  // 0.6*0.1 + 0.4/1 = 0.46
  candidates[1].load = {.num_running = 5, .num_waiting = 3, .kv_usage = 0.2};  // 0.6*0.8 + 0.4/4 = 0.58
  candidates[2].load = {.num_running = 4, .num_waiting = -1, .kv_usage = -1};  // 0.6*0.6 + 0.4/1 = 0.76
  EXPECT_NEAR(LoadFraction(candidates[2], options), 0.4, 1e-9);
  EXPECT_NEAR(QueueLength(candidates[1]), 3, 1e-9);
  auto policy = Make("least-load", options);
  EXPECT_EQ(policy->Pick({}, candidates).index, 2u);
  candidates[2].num_in_flight = 9;  // queue 9, load 0.9: 0.6*0.1 + 0.4/10 = 0.10
  EXPECT_EQ(policy->Pick({}, candidates).index, 1u);
  // The weighted scorers are the building block: a custom preset picks by its own rule.
  auto kv_only = MakeScoringPolicy("kv", {{1.0, [](const Candidate& c, const PolicyOptions&) { return -c.load.num_running; }}}, options);
  EXPECT_EQ(kv_only->Pick({}, candidates).index, 0u);
}

TEST(PolicyTest, LeastLoadSpreadsTiesAcrossIdleBackends) {
  auto policy = Make("least-load");
  std::vector<Candidate> candidates = Candidates(3);
  std::map<size_t, int> counts;
  for (int i = 0; i < 30; ++i) ++counts[policy->Pick({}, candidates).index];
  EXPECT_EQ(counts.size(), 3u);
}

TEST(PolicyTest, P2cPrefersTheLessLoadedOfTwo) {
  PolicyOptions options;
  options.seed = 42;
  auto policy = Make("p2c", options);
  std::vector<Candidate> candidates = Candidates(2);
  candidates[0].load = {.num_running = 10, .num_waiting = 5};
  candidates[1].num_in_flight = 1;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(policy->Pick({}, candidates).index, 1u);
  // With many candidates the most loaded one can never win (it loses every pair).
  std::vector<Candidate> four = Candidates(4);
  for (int i = 0; i < 4; ++i) four[i].num_in_flight = i;
  std::map<size_t, int> counts;
  for (int i = 0; i < 400; ++i) ++counts[policy->Pick({}, four).index];
  EXPECT_EQ(counts[3], 0);
  EXPECT_GT(counts[0], counts[2]);
  EXPECT_EQ(policy->Pick({}, Candidates(1)).index, 0u);
}

TEST(PolicyTest, SessionKeyFromHeaderThenUser) {
  net::HttpHeaders headers{{"X-Session-Id", "s1"}};
  nlohmann::json body = {{"user", "u1"}};
  EXPECT_EQ(SessionKey({.body = &body, .headers = &headers}, "x-session-id"), "s1");
  net::HttpHeaders none;
  EXPECT_EQ(SessionKey({.body = &body, .headers = &none}, "x-session-id"), "u1");
  nlohmann::json empty = nlohmann::json::object();
  EXPECT_EQ(SessionKey({.body = &empty, .headers = &none}, "x-session-id"), "");
}

TEST(PolicyTest, SessionIsStickyAndAFailedBackendMovesOnlyItsSessions) {
  auto policy = Make("session");
  std::vector<Candidate> all = Candidates(4);
  std::map<std::string, std::string> home;  // session -> url
  for (int s = 0; s < 400; ++s) {
    net::HttpHeaders headers{{"x-session-id", "session-" + std::to_string(s)}};
    RouteRequest request{.path = "/v1/chat/completions", .headers = &headers};
    const std::string url(all[policy->Pick(request, all).index].url);
    EXPECT_EQ(url, all[policy->Pick(request, all).index].url);  // sticky
    home[headers.Get("x-session-id")] = url;
  }
  std::map<std::string, int> per_backend;
  for (const auto& [session, url] : home) ++per_backend[url];
  for (const auto& [url, num] : per_backend) EXPECT_GT(num, 50) << url;  // spread
  // Backend c fails: its sessions move, every other session stays where it was.
  std::vector<Candidate> without_c = {all[0], all[1], all[3]};
  int num_moved = 0;
  for (const auto& [session, url] : home) {
    net::HttpHeaders headers{{"x-session-id", session}};
    const std::string now(without_c[policy->Pick({.headers = &headers}, without_c).index].url);
    if (url == "http://c:3") {
      EXPECT_NE(now, url);
      ++num_moved;
    } else {
      EXPECT_EQ(now, url) << session;
    }
  }
  EXPECT_EQ(num_moved, per_backend["http://c:3"]);
  // And they come back when it returns.
  for (const auto& [session, url] : home) {
    net::HttpHeaders headers{{"x-session-id", session}};
    EXPECT_EQ(all[policy->Pick({.headers = &headers}, all).index].url, url);
  }
}

TEST(PolicyTest, SessionWithoutKeyFallsBackToLeastLoad) {
  auto policy = Make("session");
  std::vector<Candidate> candidates = Candidates(3);
  candidates[0].num_in_flight = 5;
  candidates[1].num_in_flight = 5;
  net::HttpHeaders none;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(policy->Pick({.headers = &none}, candidates).index, 2u);
}

}  // namespace
}  // namespace surge::router
