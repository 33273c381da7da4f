// The load driver against the scripted server: measured timings match the script, load
// patterns keep their shape, and every injected fault is counted under its kind.
#include "bench/load_driver.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "bench/metrics.h"
#include "bench/runner.h"
#include "bench/testing/scripted_server.h"

namespace surge::bench {
namespace {

using testing::Fault;
using testing::ScriptedServer;
using testing::StreamScript;

// No timed assertion (a loaded machine delays any wake-up): a measured time is never shorter
// than what the scripted server waited (less a millisecond of clock granularity), and never
// longer by the factor a unit mistake (s for ms, us for ms) would show.
constexpr double kUnitMistake = 10;

void ExpectMeasured(double measured, double scripted, const char* what) {
  EXPECT_GE(measured, scripted - 1) << what;
  EXPECT_LT(measured, scripted * kUnitMistake) << what;
}

struct Fixture {
  explicit Fixture(StreamScript script, WorkloadConfig config = {}) : server(std::move(script)) {
    EXPECT_TRUE(server.Start().ok());
    config.input = {8, 0};
    config.output = {4, 0};
    workload = MakeSyntheticWorkload(config);
  }
  RoundRun Run(RoundPlan plan, Endpoint endpoint = Endpoint::kCompletions) {
    LoadDriver driver(client, *workload, RequestOptions{endpoint, "", true});
    return driver.Run(Target{"", server.url(), "scripted-model", {}}, plan, nullptr);
  }
  ScriptedServer server;
  std::unique_ptr<Workload> workload;
  net::HttpClient client;
};

// A port of 127.0.0.1 with nothing listening: bound, read back, released.
uint16_t UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

RoundMetrics Metrics(const RoundRun& run) { return Aggregate(std::span<const RoundRun>(&run, 1), SloConfig{}); }

TEST(LoadDriverTest, MeasuredTimingsMatchTheScript) {
  // TTFT 200 ms, then a token every 40 ms: 8 tokens take 200 + 7 * 40 = 480 ms. (Long
  // enough that a busy machine's wake-up delays, a few ms, stay far inside 5 %.)
  Fixture f(StreamScript{.ttft_ms = 200, .itl_ms = 40, .num_tokens = 8});
  RoundRun run = f.Run({.point = {4, 0}, .num_requests = 12});
  RoundMetrics m = Metrics(run);
  ASSERT_EQ(m.num_completed, 12) << (m.errors.empty() ? "" : m.errors.begin()->first);
  ExpectMeasured(m.ttft_ms.mean, 200, "ttft");
  ExpectMeasured(m.itl_ms.mean, 40, "itl");
  ExpectMeasured(m.tpot_ms.mean, 40, "tpot");
  ExpectMeasured(m.e2e_ms.mean, 480, "e2e");
  EXPECT_EQ(m.itl_ms.count, 12 * 7);
  EXPECT_EQ(m.total_output_tokens, 96);
  EXPECT_EQ(m.num_usage_reported, 12);
  EXPECT_EQ(f.client.num_connections_opened(), 4);  // keep-alive: one connection per slot
  // Closed loop of 4: three requests back to back on each slot, so at most 4 / 0.480 s.
  EXPECT_LE(m.request_throughput, 4 / 0.479);
  EXPECT_GT(m.request_throughput, 4 / 0.480 / kUnitMistake);
  EXPECT_NEAR(m.output_token_throughput, 8 * m.request_throughput, 1e-6 * m.output_token_throughput);
}

TEST(LoadDriverTest, ConstantArrivalsAreEvenlySpaced) {
  Fixture f(StreamScript{.num_tokens = 2});
  RoundRun run = f.Run({.point = {0, 50.0}, .arrival = Arrival::kConstant, .num_requests = 20});
  ASSERT_EQ(run.records.size(), 20u);
  std::vector<double> sends;
  for (const RequestRecord& r : run.records) sends.push_back(r.send_s);
  std::sort(sends.begin(), sends.end());
  // Arrivals are scheduled on absolute times: never early, and a late wake-up does not
  // shift the ones after it.
  std::vector<double> lateness;
  for (size_t i = 0; i < sends.size(); ++i) {
    lateness.push_back(sends[i] - 0.02 * static_cast<double>(i));
    EXPECT_GE(lateness.back(), -0.001) << i;
  }
}

TEST(LoadDriverTest, PoissonArrivalsHaveTheRequestedRate) {
  Fixture f(StreamScript{.num_tokens = 2});
  RoundRun run = f.Run({.point = {0, 400.0}, .arrival = Arrival::kPoisson, .num_requests = 400, .seed = 3});
  ASSERT_EQ(run.records.size(), 400u);
  double last_send = 0;
  for (const RequestRecord& r : run.records) last_send = std::max(last_send, r.send_s);
  // 399 gaps of 2.5 ms on average (seeded: the schedule's last arrival is near 1 s); sends are
  // never early, and a late machine only delays them.
  EXPECT_GT(last_send, 0.8);
  EXPECT_LT(last_send, 1.2 * kUnitMistake);
}

TEST(LoadDriverTest, MaxConcurrencyCapsAnInfiniteRate) {
  Fixture f(StreamScript{.ttft_ms = 100, .itl_ms = 0, .num_tokens = 1});
  RoundRun run = f.Run({.point = {0, INFINITY}, .max_concurrency = 3, .num_requests = 9});
  ASSERT_EQ(run.records.size(), 9u);
  for (const RequestRecord& r : run.records) {
    int overlapping = 0;
    for (const RequestRecord& other : run.records) {
      if (other.send_s <= r.send_s && other.send_s + other.latency_s > r.send_s) ++overlapping;
    }
    EXPECT_LE(overlapping, 3);
  }
  EXPECT_GE(run.wall_s, 3 * 0.100);  // three waves of three
}

TEST(LoadDriverTest, DurationBoundsARound) {
  Fixture f(StreamScript{.ttft_ms = 20, .itl_ms = 10, .num_tokens = 3});
  RoundRun run = f.Run({.point = {2, 0}, .duration_s = 0.3});
  EXPECT_GE(run.records.size(), 2u);  // about 2 * 0.3 / 0.04 = 15 on an idle machine, fewer on a loaded one
  EXPECT_LE(run.records.size(), 18u);
  for (const RequestRecord& r : run.records) EXPECT_LT(r.send_s, 0.3);
}

TEST(LoadDriverTest, InjectedFaultsAreCountedByKind) {
  Fixture f(StreamScript{.ttft_ms = 5, .itl_ms = 2, .num_tokens = 6,
                         .faults = {Fault::kNone, Fault::kHttp500, Fault::kMalformedSse, Fault::kCloseMidStream,
                                    Fault::kNoDone}});
  RoundMetrics m = Metrics(f.Run({.point = {4, 0}, .num_requests = 20}));
  EXPECT_EQ(m.num_requests, 20);
  EXPECT_EQ(m.num_completed, 4);
  EXPECT_EQ(m.errors["http_500"], 4);
  EXPECT_EQ(m.errors["malformed_sse"], 4);
  EXPECT_EQ(m.errors["truncated"], 8);  // cut mid-stream, or ended without [DONE]
  EXPECT_EQ(m.error_examples["http_500"], "scripted failure");
}

TEST(LoadDriverTest, StalledStreamsTimeOut) {
  Fixture f(StreamScript{.num_tokens = 2, .faults = {Fault::kStall, Fault::kNone}});
  RoundMetrics m = Metrics(f.Run({.point = {2, 0}, .num_requests = 4, .timeout_s = 0.3}));
  EXPECT_EQ(m.errors["timeout"], 2);
  EXPECT_EQ(m.num_completed, 2);
}

TEST(LoadDriverTest, UnreachableServerCountsConnectErrors) {
  std::unique_ptr<Workload> workload = MakeSyntheticWorkload(WorkloadConfig{});
  net::HttpClient client;
  LoadDriver driver(client, *workload, RequestOptions{Endpoint::kCompletions, "", true});
  std::string url = "http://127.0.0.1:" + std::to_string(UnusedPort());
  RoundRun run = driver.Run(Target{"", url, "m", {}}, {.point = {2, 0}, .num_requests = 6}, nullptr);
  RoundMetrics m = Metrics(run);
  EXPECT_EQ(m.errors["connect"], 6);
  EXPECT_EQ(m.num_completed, 0);
  EXPECT_TRUE(std::isnan(m.ttft_ms.mean));
}

TEST(LoadDriverTest, MultiTurnSendsEachAnswerBack) {
  WorkloadConfig config;
  config.kind = WorkloadKind::kMultiTurn;
  config.turns = 3;
  Fixture f(StreamScript{.num_tokens = 2}, config);
  RoundRun run = f.Run({.point = {1, 0}, .num_requests = 3}, Endpoint::kChat);
  ASSERT_EQ(run.records.size(), 3u);
  std::vector<std::string> bodies = f.server.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  nlohmann::json last = nlohmann::json::parse(bodies[2]);
  ASSERT_EQ(last["messages"].size(), 5u);
  EXPECT_EQ(last["messages"][1]["content"], " w0 w1");
  EXPECT_EQ(last["messages"][3]["content"], " w0 w1");
  EXPECT_EQ(run.records[2].turn, 2);
}

TEST(LoadDriverTest, RunBenchmarkProbesAndCompares) {
  ScriptedServer a(StreamScript{.ttft_ms = 100, .itl_ms = 5, .num_tokens = 4});
  ScriptedServer b(StreamScript{.ttft_ms = 200, .itl_ms = 5, .num_tokens = 4, .has_tokenize = false});
  ASSERT_TRUE(a.Start().ok() && b.Start().ok());
  BenchConfig config;
  config.urls = {a.url(), b.url()};
  config.models = {"", ""};
  config.points = {{1, 0}, {2, 0}};
  config.num_requests = 4;
  config.workload.input = {40, 0};
  StatusOr<BenchReport> report = RunBenchmark(config, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->targets[1].model, "scripted-model");
  EXPECT_TRUE(report->calibration.measured);
  EXPECT_NEAR(report->config.workload.tokens_per_word, 2.0, 1e-9);
  ASSERT_EQ(report->rounds.size(), 4u);
  std::vector<ComparedPoint> pairs = PairRounds(*report);
  ASSERT_EQ(pairs.size(), 2u);
  for (const ComparedPoint& pair : pairs) {
    EXPECT_EQ(pair.a->target_label, "A");
    EXPECT_EQ(pair.b->target_label, "B");
    // Each side measured at least its server's scripted wait; the ratio is of those means.
    ExpectMeasured(pair.a->ttft_ms.mean, 100, "ttft of A");
    ExpectMeasured(pair.b->ttft_ms.mean, 200, "ttft of B");
    EXPECT_DOUBLE_EQ(Ratio(pair.a->ttft_ms.mean, pair.b->ttft_ms.mean), pair.a->ttft_ms.mean / pair.b->ttft_ms.mean);
  }
  // Both sides got the same prompts: 20 words each, as 40 tokens at 2 tokens per word.
  std::vector<std::string> a_bodies = a.bodies(), b_bodies = b.bodies();
  std::sort(a_bodies.begin(), a_bodies.end());
  std::sort(b_bodies.begin(), b_bodies.end());
  EXPECT_EQ(a_bodies, b_bodies);
  std::string prompt = nlohmann::json::parse(a.bodies()[0])["prompt"];
  EXPECT_EQ(std::count(prompt.begin(), prompt.end(), ' '), 19);
}

}  // namespace
}  // namespace surge::bench
