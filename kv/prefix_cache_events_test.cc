// The prefix cache's change log (record_events), which the engine's KV event stream
// publishes: stored when a block becomes findable, evicted when its entry goes, in order,
// under the hashes a router computes from the same tokens (base/block_hash.h).
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <unordered_set>
#include <vector>

#include "base/block_hash.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_test_util.h"

namespace surge {
namespace {

using testing_util::ConsecutiveTokens;
using testing_util::TinyKvLayout;

using Kind = PrefixCacheEvent::Kind;

PrefixCacheOptions Recording() {
  PrefixCacheOptions options;
  options.record_events = true;
  return options;
}

std::vector<PrefixCacheEvent> Take(KvCacheManager& kv) {
  std::vector<PrefixCacheEvent> events;
  kv.TakeEvents(&events);
  return events;
}

TEST(PrefixCacheEventsTest, StoredAtCommitUnderTheChainedHashes) {
  KvCacheManager kv(TinyKvLayout(4), 8, Recording());
  const std::vector<int32_t> tokens = ConsecutiveTokens(9, 100);
  ASSERT_TRUE(kv.Allocate(1, tokens, 9));
  EXPECT_FALSE(kv.has_events());  // pending blocks are not findable yet
  kv.CommitComputed();
  const std::vector<uint64_t> expected = ChainedBlockHashes(tokens, 4);
  const std::vector<PrefixCacheEvent> events = Take(kv);
  ASSERT_EQ(events.size(), 2u);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].kind, Kind::kStored);
    EXPECT_EQ(events[i].hash, expected[i]);
  }
  // A hit files nothing new.
  ASSERT_TRUE(kv.Allocate(2, tokens, 9));
  kv.CommitComputed();
  EXPECT_TRUE(Take(kv).empty());
}

TEST(PrefixCacheEventsTest, EvictedWhenTheSpaceIsReused) {
  KvCacheManager kv(TinyKvLayout(4), 2, Recording());
  const std::vector<int32_t> first = ConsecutiveTokens(8, 100);
  ASSERT_TRUE(kv.Allocate(1, first, 8));
  kv.CommitComputed();
  kv.Free(1);
  Take(kv);
  ASSERT_TRUE(kv.Allocate(2, ConsecutiveTokens(8, 500), 8));  // needs both cached blocks back
  const std::vector<PrefixCacheEvent> events = Take(kv);
  const std::vector<uint64_t> old_hashes = ChainedBlockHashes(first, 4);
  ASSERT_EQ(events.size(), 2u);
  std::unordered_set<uint64_t> evicted;
  for (const PrefixCacheEvent& event : events) {
    EXPECT_EQ(event.kind, Kind::kEvicted);
    evicted.insert(event.hash);
  }
  EXPECT_EQ(evicted, std::unordered_set<uint64_t>(old_hashes.begin(), old_hashes.end()));
}

TEST(PrefixCacheEventsTest, ExpiryIsAnEviction) {
  double now = 0;
  PrefixCacheOptions options = Recording();
  options.ttl_s = 10;
  options.clock = [&] { return now; };
  KvCacheManager kv(TinyKvLayout(4), 4, options);
  ASSERT_TRUE(kv.Allocate(1, ConsecutiveTokens(4, 7), 4));
  kv.CommitComputed();
  kv.Free(1);
  Take(kv);
  now = 11;
  kv.ReleaseIdleBlocks();
  const std::vector<PrefixCacheEvent> events = Take(kv);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::kEvicted);
  EXPECT_EQ(events[0].hash, ChainedBlockHashes(ConsecutiveTokens(4, 7), 4)[0]);
}

TEST(PrefixCacheEventsTest, NothingIsKeptUnlessAsked) {
  KvCacheManager kv(TinyKvLayout(4), 8);
  ASSERT_TRUE(kv.Allocate(1, ConsecutiveTokens(9, 100), 9));
  kv.CommitComputed();
  EXPECT_FALSE(kv.has_events());
  EXPECT_TRUE(Take(kv).empty());
}

// Seeded random traffic over few prefixes in a small pool: replaying the events into a
// set always gives exactly the cache's registered blocks (same count, and every prompt's
// cached prefix is in the set), and no hash is stored twice without an eviction between.
TEST(PrefixCacheEventsTest, ReplayedEventsMirrorTheCache) {
  KvCacheManager kv(TinyKvLayout(4), 12, Recording());
  std::mt19937 rng(1234);
  std::unordered_set<uint64_t> mirror;
  std::vector<SequenceId> live;
  for (SequenceId seq = 1; seq <= 400; ++seq) {
    const std::vector<int32_t> tokens = ConsecutiveTokens(4 + static_cast<int32_t>(rng() % 12), 10 * static_cast<int32_t>(rng() % 4));
    if (kv.Allocate(seq, tokens, static_cast<int32_t>(tokens.size()))) live.push_back(seq);
    kv.CommitComputed();
    while (live.size() > 2 || (!live.empty() && rng() % 2)) {
      kv.Free(live.front());
      live.erase(live.begin());
    }
    for (const PrefixCacheEvent& event : Take(kv)) {
      if (event.kind == Kind::kStored) {
        ASSERT_TRUE(mirror.insert(event.hash).second) << "stored twice at seq " << seq;
      } else {
        ASSERT_EQ(mirror.erase(event.hash), 1u) << "evicted an unknown block at seq " << seq;
      }
    }
    ASSERT_EQ(static_cast<int32_t>(mirror.size()), kv.num_cached_blocks()) << "at seq " << seq;
    const int32_t num_cached_blocks = kv.NumCachedTokens(tokens) / 4;
    const std::vector<uint64_t> hashes = ChainedBlockHashes(tokens, 4);
    for (int32_t i = 0; i < num_cached_blocks; ++i) ASSERT_TRUE(mirror.contains(hashes[i]));
  }
}

}  // namespace
}  // namespace surge
