// Flag value parsers and the cross-flag rules of BenchConfig.
#include "bench/config.h"

#include <gtest/gtest.h>

#include <cmath>

namespace surge::bench {
namespace {

TEST(ConfigTest, ListsOfConcurrenciesAndRates) {
  EXPECT_EQ(*ParseIntList("1,4,8,16", "concurrency"), (std::vector<int64_t>{1, 4, 8, 16}));
  EXPECT_FALSE(ParseIntList("1,,4", "concurrency").ok());
  EXPECT_FALSE(ParseIntList("0", "concurrency").ok());
  EXPECT_FALSE(ParseIntList("four", "concurrency").ok());
  StatusOr<std::vector<double>> rates = ParseRateList("0.5,2,inf", "request-rate");
  ASSERT_TRUE(rates.ok());
  EXPECT_EQ((*rates)[0], 0.5);
  EXPECT_TRUE(std::isinf((*rates)[2]));
  EXPECT_FALSE(ParseRateList("-1", "request-rate").ok());
  EXPECT_NE(ParseRateList("x", "request-rate").status().message().find("--request-rate"), std::string::npos);
}

TEST(ConfigTest, Durations) {
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("500ms", "d", true), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("2s", "d", true), 2.0);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1.5m", "d", true), 90.0);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("30", "d", true), 30.0);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("30", "d", false), 0.03);
  EXPECT_FALSE(ParseDurationSeconds("soon", "d", true).ok());
  EXPECT_FALSE(ParseDurationSeconds("-1s", "d", true).ok());
}

TEST(ConfigTest, SloSpec) {
  StatusOr<SloConfig> slo = ParseSlo("ttft=500ms,tpot=50ms,e2e=10s");
  ASSERT_TRUE(slo.ok()) << slo.status().ToString();
  EXPECT_DOUBLE_EQ(*slo->ttft_ms, 500);
  EXPECT_DOUBLE_EQ(*slo->tpot_ms, 50);
  EXPECT_DOUBLE_EQ(*slo->e2e_ms, 10'000);
  EXPECT_DOUBLE_EQ(*ParseSlo("ttft=250")->ttft_ms, 250);  // milliseconds by default
  EXPECT_FALSE(ParseSlo("latency=1s").ok());
  EXPECT_FALSE(ParseSlo("ttft").ok());
  EXPECT_FALSE(ParseSlo("ttft=0").ok());
}

BenchConfig Valid() {
  BenchConfig c;
  c.urls = {"http://127.0.0.1:1"};
  c.points = {{4, 0}};
  c.num_requests = 10;
  return c;
}

TEST(ConfigTest, ValidateCrossFlagRules) {
  EXPECT_TRUE(Validate(Valid()).ok());
  BenchConfig c = Valid();
  c.workload.kind = WorkloadKind::kMultiTurn;
  EXPECT_NE(Validate(c).message().find("--endpoint chat"), std::string::npos);
  c = Valid();
  c.workload.kind = WorkloadKind::kShareGpt;
  EXPECT_NE(Validate(c).message().find("--dataset"), std::string::npos);
  c = Valid();
  c.num_requests = 0;
  EXPECT_FALSE(Validate(c).ok());
  c.duration_s = 1;
  EXPECT_TRUE(Validate(c).ok());
  c = Valid();
  c.points = {{0, INFINITY}};
  c.num_requests = 0;
  c.duration_s = 1;
  EXPECT_NE(Validate(c).message().find("inf"), std::string::npos);
  c = Valid();
  c.workload.input.range = 1.5;
  EXPECT_FALSE(Validate(c).ok());
}

TEST(ConfigTest, PointLabels) {
  EXPECT_EQ((LoadPoint{4, 0}).Label(), "c=4");
  EXPECT_EQ((LoadPoint{0, 2.5}).Label(), "rate=2.5");
  EXPECT_EQ((LoadPoint{0, INFINITY}).Label(), "rate=inf");
}

}  // namespace
}  // namespace surge::bench
