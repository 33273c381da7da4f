// CacheAwarePick: the longest cached prefix wins, ties by load then at random (seeded),
// and the balance guard on both sides of each threshold.
#include "router/prefix/cache_aware.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

namespace surge::router {
namespace {

const std::vector<uint64_t> kPrompt{1, 2, 3, 4};

struct Fixture {
  // Backend i holds the first prefixes[i] blocks of kPrompt.
  explicit Fixture(std::vector<int32_t> prefixes) {
    for (int32_t num : prefixes) {
      indexes.push_back(std::make_unique<BlockIndex>(64));
      indexes.back()->RecordRequest(std::span<const uint64_t>(kPrompt).first(num));
      backends.push_back({indexes.back().get(), 0, 0});
    }
  }
  std::vector<std::unique_ptr<BlockIndex>> indexes;
  std::vector<CacheAwareBackend> backends;
};

TEST(CacheAwareTest, TheLongestCachedPrefixWins) {
  Fixture f({1, 3, 0});
  std::mt19937_64 rng(1);
  const CacheAwareDecision decision = CacheAwarePick(kPrompt, f.backends, {}, rng);
  EXPECT_EQ(decision.backend, 1);
  EXPECT_EQ(decision.num_cached_blocks, 3);
  EXPECT_FALSE(decision.balance_fallback);
}

TEST(CacheAwareTest, TiesGoToTheLowerLoadThenAtRandom) {
  Fixture f({2, 2, 2, 0});
  f.backends[0].load = 3;
  std::mt19937_64 rng(7);
  std::map<int32_t, int> counts;
  for (int i = 0; i < 1000; ++i) ++counts[CacheAwarePick(kPrompt, f.backends, {}, rng).backend];
  EXPECT_EQ(counts.count(0), 0u);  // more loaded
  EXPECT_EQ(counts.count(3), 0u);  // no prefix
  EXPECT_GT(counts[1], 400);
  EXPECT_GT(counts[2], 400);
  // The same seed, the same choices.
  std::mt19937_64 a(99), b(99);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(CacheAwarePick(kPrompt, f.backends, {}, a).backend, CacheAwarePick(kPrompt, f.backends, {}, b).backend);
  }
}

TEST(CacheAwareTest, InFlightCountsAtDecisionTime) {
  Fixture f({0, 0});
  f.backends[0].load = 1;         // stale metrics say 1
  f.backends[0].num_in_flight = 5;  // but the router has 5 requests out there
  f.backends[1].load = 2;
  std::mt19937_64 rng(3);
  EXPECT_EQ(CacheAwarePick(kPrompt, f.backends, {}, rng).backend, 1);
  EXPECT_EQ(EffectiveLoad(f.backends[0]), 5);
}

TEST(CacheAwareTest, BalanceGuardNeedsBothThresholds) {
  const CacheAwareOptions options{.balance_abs_threshold = 10, .balance_rel_threshold = 1.5};
  std::mt19937_64 rng(5);
  Fixture f({4, 0});
  // max - min = 11 > 10 and 21 > 1.5 * 10: imbalanced, the least loaded wins.
  f.backends[0].load = 21;
  f.backends[1].load = 10;
  CacheAwareDecision decision = CacheAwarePick(kPrompt, f.backends, options, rng);
  EXPECT_TRUE(decision.balance_fallback);
  EXPECT_EQ(decision.backend, 1);
  EXPECT_EQ(decision.num_cached_blocks, 0);
  // The absolute gap alone is not enough: 100 vs 80 (20 > 10 but 100 < 1.5 * 80).
  f.backends[0].load = 100;
  f.backends[1].load = 80;
  decision = CacheAwarePick(kPrompt, f.backends, options, rng);
  EXPECT_FALSE(decision.balance_fallback);
  EXPECT_EQ(decision.backend, 0);
  // Nor the ratio alone: 9 vs 1 (9 > 1.5 but a gap of only 8).
  f.backends[0].load = 9;
  f.backends[1].load = 1;
  decision = CacheAwarePick(kPrompt, f.backends, options, rng);
  EXPECT_FALSE(decision.balance_fallback);
  EXPECT_EQ(decision.backend, 0);
  // Exactly at the absolute threshold is still balanced (strictly greater trips it).
  f.backends[0].load = 10;
  f.backends[1].load = 0;
  EXPECT_FALSE(CacheAwarePick(kPrompt, f.backends, options, rng).balance_fallback);
  f.backends[0].load = 10.5;
  EXPECT_TRUE(CacheAwarePick(kPrompt, f.backends, options, rng).balance_fallback);
}

TEST(CacheAwareTest, UnknownIndexesAndNoBackends) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(CacheAwarePick(kPrompt, {}, {}, rng).backend, -1);
  std::vector<CacheAwareBackend> backends{{nullptr, 2, 0}, {nullptr, 1, 0}};
  const CacheAwareDecision decision = CacheAwarePick(kPrompt, backends, {}, rng);
  EXPECT_EQ(decision.backend, 1);
  EXPECT_EQ(decision.num_cached_blocks, 0);
}

}  // namespace
}  // namespace surge::router
