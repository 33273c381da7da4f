// TtftWindow: P95 over the window's samples, expiry by time, the memory bound, tiers apart.
#include "router/tiers/ttft_window.h"

#include <gtest/gtest.h>

#include "router/tiers/test_clock.h"

namespace surge::router {
namespace {

TtftWindowOptions Options(VirtualClock& clock, int64_t window_ms = 30000, int32_t max_samples = 4096) {
  TtftWindowOptions options;
  options.window_ms = window_ms;
  options.max_samples = max_samples;
  options.now_ms = clock.Fn();
  return options;
}

TEST(TtftWindowTest, P95OfTheSamples) {
  VirtualClock clock;
  TtftWindow window(Options(clock));
  EXPECT_EQ(window.P95(Tier::kRealtime), std::nullopt);
  for (int i = 1; i <= 100; ++i) window.Add(Tier::kRealtime, i);
  EXPECT_NEAR(*window.P95(Tier::kRealtime), 95.05, 1e-9);  // linear between closest ranks
  EXPECT_EQ(window.NumSamples(Tier::kRealtime), 100);
  EXPECT_EQ(window.NumSamples(Tier::kBatch), 0);  // tiers are kept apart
  EXPECT_EQ(window.P95(Tier::kBatch), std::nullopt);
}

TEST(TtftWindowTest, SamplesExpireWithTime) {
  VirtualClock clock;
  TtftWindow window(Options(clock, 1000));
  window.Add(Tier::kNormal, 5000);
  clock.Advance(600);
  window.Add(Tier::kNormal, 10);
  EXPECT_EQ(window.NumSamples(Tier::kNormal), 2);
  clock.Advance(400);  // the first is now exactly window_ms old: out
  EXPECT_EQ(window.NumSamples(Tier::kNormal), 1);
  EXPECT_DOUBLE_EQ(*window.P95(Tier::kNormal), 10);
  clock.Advance(600);
  EXPECT_EQ(window.P95(Tier::kNormal), std::nullopt);
}

TEST(TtftWindowTest, MemoryIsBoundedOldestFirst) {
  VirtualClock clock;
  TtftWindow window(Options(clock, 30000, 10));
  for (int i = 0; i < 10; ++i) window.Add(Tier::kBatch, 1000);
  for (int i = 0; i < 10; ++i) window.Add(Tier::kBatch, 1);
  EXPECT_EQ(window.NumSamples(Tier::kBatch), 10);
  EXPECT_DOUBLE_EQ(*window.P95(Tier::kBatch), 1);
}

TEST(TtftWindowTest, ValidationNamesTheField) {
  VirtualClock clock;
  EXPECT_NE(ValidateTtftWindowOptions(Options(clock, 0)).message().find("window_ms"), std::string::npos);
  EXPECT_NE(ValidateTtftWindowOptions(Options(clock, 10, 0)).message().find("max_samples"), std::string::npos);
  TtftWindowOptions options = Options(clock);
  options.now_ms = nullptr;
  EXPECT_NE(ValidateTtftWindowOptions(options).message().find("now_ms"), std::string::npos);
  EXPECT_TRUE(ValidateTtftWindowOptions(Options(clock)).ok());
}

}  // namespace
}  // namespace surge::router
