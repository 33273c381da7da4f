// Prefix caching in the KV cache manager: hits, sharing, the LRU, eviction, the TTL,
// collisions, and a seeded random scenario against a shadow of the KV contents.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/kv_test_util.h"
#include "kv/prefix_index.h"

namespace surge {
namespace {

using testing_util::ConsecutiveTokens;
using testing_util::TinyKvLayout;

#define EXPECT_INVARIANTS(kv) EXPECT_TRUE((kv).CheckInvariants().ok()) << (kv).CheckInvariants().ToString()

TEST(PrefixCacheTest, ANewSequenceReusesTheFullBlocksOfAnEarlierOne) {
  KvCacheManager kv(TinyKvLayout(16), 10);
  const std::vector<int32_t> tokens = ConsecutiveTokens(37);
  EXPECT_EQ(kv.NumCachedTokens(tokens), 0);
  ASSERT_TRUE(kv.Allocate(1, tokens, 37));
  EXPECT_EQ(kv.NumCachedTokens(tokens), 0);  // not findable before the pass wrote it
  kv.CommitComputed();
  EXPECT_EQ(kv.num_cached_blocks(), 2);       // the partial third block is not cached
  EXPECT_EQ(kv.NumCachedTokens(tokens), 32);
  std::vector<int32_t> other = tokens;
  other[20] = 7;                              // differs in block 1
  EXPECT_EQ(kv.NumCachedTokens(other), 16);
  ASSERT_TRUE(kv.Allocate(2, tokens, 37));
  EXPECT_EQ(kv.BlockTable(2)[0], kv.BlockTable(1)[0]);
  EXPECT_EQ(kv.BlockTable(2)[1], kv.BlockTable(1)[1]);
  EXPECT_NE(kv.BlockTable(2)[2], kv.BlockTable(1)[2]);
  EXPECT_EQ(kv.num_used_blocks(), 4);
  EXPECT_EQ(kv.stats().num_queried_tokens, 74);
  EXPECT_EQ(kv.stats().num_hit_tokens, 32);
  EXPECT_INVARIANTS(kv);
  EXPECT_TRUE(kv.CheckTokens(2, tokens).ok());
}

// Embeddings' admission: no lookup (cached blocks are not attached, nothing counted), and
// the blocks it computes are never filed, however it grows; freed, they are plain free.
TEST(PrefixCacheTest, AllocatePromptWithoutThePrefixCacheNeitherReadsNorFiles) {
  KvCacheManager kv(TinyKvLayout(16), 10);
  const std::vector<int32_t> tokens = ConsecutiveTokens(40);
  ASSERT_TRUE(kv.Allocate(1, tokens, 40));
  kv.CommitComputed();
  ASSERT_EQ(kv.num_cached_blocks(), 2);
  const PrefixCacheStats before = kv.stats();
  ASSERT_EQ(kv.AllocatePrompt(2, tokens, 20, /*use_prefix_cache=*/false), 0);
  EXPECT_EQ(kv.BlockTable(2).size(), 2u);  // 20 tokens of its own
  EXPECT_NE(kv.BlockTable(2)[0], kv.BlockTable(1)[0]);
  ASSERT_TRUE(kv.Allocate(2, tokens, 40));
  kv.CommitComputed();
  EXPECT_EQ(kv.num_cached_blocks(), 2);  // sequence 1's only
  EXPECT_EQ(kv.stats().num_queried_tokens, before.num_queried_tokens);
  EXPECT_EQ(kv.stats().num_hit_tokens, before.num_hit_tokens);
  EXPECT_INVARIANTS(kv);
  kv.Free(2);
  EXPECT_EQ(kv.num_cached_free_blocks(), 0);
  EXPECT_EQ(kv.num_used_blocks(), 3);
  EXPECT_INVARIANTS(kv);
}

// The scheduler's admission: one lookup attaches the cached blocks and allocates the
// rest within the token budget; without room, nothing changes.
TEST(PrefixCacheTest, AllocatePromptAttachesTheCachedBlocksAndAllocatesTheRest) {
  KvCacheManager kv(TinyKvLayout(16), 5);
  const std::vector<int32_t> tokens = ConsecutiveTokens(37);
  ASSERT_TRUE(kv.Allocate(1, tokens, 37));
  kv.CommitComputed();
  EXPECT_EQ(kv.AllocatePrompt(2, tokens, 3), std::optional<int32_t>(32));
  ASSERT_EQ(kv.BlockTable(2).size(), 3u);  // 32 cached + 3 new tokens
  EXPECT_EQ(kv.BlockTable(2)[1], kv.BlockTable(1)[1]);
  EXPECT_EQ(kv.num_used_blocks(), 4);
  const std::vector<int32_t> unrelated = ConsecutiveTokens(40, 900);  // needs 3 blocks, 1 is free
  EXPECT_EQ(kv.AllocatePrompt(3, unrelated, 40), std::nullopt);
  EXPECT_FALSE(kv.Contains(3));
  EXPECT_EQ(kv.num_used_blocks(), 4);
  EXPECT_EQ(kv.AllocatePrompt(3, unrelated, 16), std::optional<int32_t>(0));
  EXPECT_EQ(kv.stats().num_hit_tokens, 32);
  EXPECT_INVARIANTS(kv);
  EXPECT_TRUE(kv.CheckTokens(2, tokens).ok());
}

TEST(PrefixCacheTest, TheLastTokenIsAlwaysComputed) {
  KvCacheManager kv(TinyKvLayout(4), 10);
  const std::vector<int32_t> tokens = ConsecutiveTokens(8);
  ASSERT_TRUE(kv.Allocate(1, tokens, 8));
  kv.CommitComputed();
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  EXPECT_EQ(kv.NumCachedTokens(tokens), 4);  // not 8: the last token's logits are needed
  EXPECT_EQ(kv.NumCachedTokens(ConsecutiveTokens(9)), 8);
  EXPECT_EQ(kv.NumCachedTokens(ConsecutiveTokens(1)), 0);
}

TEST(PrefixCacheTest, BlocksOfASequenceThatLeftThePlanAreNeverCached) {
  KvCacheManager kv(TinyKvLayout(4), 4);
  const std::vector<int32_t> tokens = ConsecutiveTokens(12);
  ASSERT_TRUE(kv.Allocate(1, tokens, 8));
  kv.CommitComputed();                    // [0, 8) computed
  ASSERT_TRUE(kv.Allocate(1, tokens, 12));
  kv.Free(1);                             // preempted before the pass wrote [8, 12)
  kv.CommitComputed();
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  EXPECT_EQ(kv.num_cached_free_blocks(), 2);
  EXPECT_EQ(kv.NumCachedTokens(ConsecutiveTokens(13)), 8);
  EXPECT_EQ(kv.num_free_blocks(), 4);
  EXPECT_INVARIANTS(kv);
}

TEST(PrefixCacheTest, FreedBlocksStayCachedUntilTheirSpaceIsNeeded) {
  KvCacheManager kv(TinyKvLayout(4), 4);
  const std::vector<int32_t> a = ConsecutiveTokens(17, 100);
  ASSERT_TRUE(kv.Allocate(1, a, 16));
  kv.CommitComputed();
  kv.Free(1);
  EXPECT_EQ(kv.num_free_blocks(), 4);
  EXPECT_EQ(kv.num_cached_free_blocks(), 4);
  EXPECT_EQ(kv.NumCachedTokens(a), 16);
  // A different prompt needs two blocks: the prefix's tail goes first, its head stays.
  const std::vector<int32_t> b = ConsecutiveTokens(8, 500);
  ASSERT_TRUE(kv.Allocate(2, b, 8));
  EXPECT_EQ(kv.stats().num_evicted_blocks, 2);
  EXPECT_EQ(kv.NumCachedTokens(a), 8);
  EXPECT_INVARIANTS(kv);
  // A hit revives cached free blocks; they no longer count as free.
  ASSERT_TRUE(kv.Allocate(3, a, 8));
  EXPECT_EQ(kv.BlockTable(3).size(), 2u);
  EXPECT_EQ(kv.num_free_blocks(), 0);
  EXPECT_FALSE(kv.Allocate(4, ConsecutiveTokens(4, 900), 4));
  EXPECT_INVARIANTS(kv);
}

TEST(PrefixCacheTest, AllocateCountsRevivedBlocksAsTaken) {
  KvCacheManager kv(TinyKvLayout(4), 3);
  const std::vector<int32_t> a = ConsecutiveTokens(9);
  ASSERT_TRUE(kv.Allocate(1, a, 8));
  kv.CommitComputed();
  kv.Free(1);
  // 3 free blocks, 2 of them the hits: 9 tokens need the 2 hits + 1 new block.
  ASSERT_TRUE(kv.Allocate(2, a, 9));
  EXPECT_EQ(kv.num_free_blocks(), 0);
  kv.Free(2);
  kv.CommitComputed();
  // 13 tokens need 2 hits + 2 new, but only 1 block is neither: no room, nothing changes.
  const std::vector<int32_t> longer = ConsecutiveTokens(13);
  EXPECT_FALSE(kv.Allocate(3, longer, 13));
  EXPECT_FALSE(kv.Contains(3));
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  EXPECT_EQ(kv.stats().num_evicted_blocks, 0);
  EXPECT_INVARIANTS(kv);
}

TEST(PrefixCacheTest, ConcurrentSequencesShareAPrefixByReferenceCount) {
  KvCacheManager kv(TinyKvLayout(4), 8);
  const std::vector<int32_t> prompt = ConsecutiveTokens(9);
  ASSERT_TRUE(kv.Allocate(1, prompt, 9));
  kv.CommitComputed();
  for (SequenceId seq = 2; seq <= 4; ++seq) ASSERT_TRUE(kv.Allocate(seq, prompt, 9));
  const BlockId first = kv.BlockTable(1)[0];
  for (SequenceId seq = 2; seq <= 4; ++seq) EXPECT_EQ(kv.BlockTable(seq)[0], first);
  kv.Free(1);
  kv.Free(2);
  EXPECT_EQ(kv.num_cached_free_blocks(), 0);  // still held by 3 and 4
  kv.Free(3);
  kv.Free(4);
  EXPECT_EQ(kv.num_cached_free_blocks(), 2);
  EXPECT_EQ(kv.num_free_blocks(), 8);
  EXPECT_INVARIANTS(kv);
}

TEST(PrefixCacheTest, IdleBlocksExpireAfterTheTtl) {
  double now = 1000;
  PrefixCacheOptions options;
  options.ttl_s = 60;
  options.clock = [&] { return now; };
  KvCacheManager kv(TinyKvLayout(4), 8, options);
  ASSERT_TRUE(kv.Allocate(1, ConsecutiveTokens(9, 100), 9));
  ASSERT_TRUE(kv.Allocate(2, ConsecutiveTokens(9, 500), 9));
  kv.CommitComputed();
  kv.Free(1);
  now += 30;
  kv.Free(2);
  now += 40;  // 1's blocks idle 70 s, 2's 40 s
  kv.ReleaseIdleBlocks();
  EXPECT_EQ(kv.stats().num_expired_blocks, 2);
  EXPECT_EQ(kv.NumCachedTokens(ConsecutiveTokens(9, 100)), 0);
  EXPECT_EQ(kv.NumCachedTokens(ConsecutiveTokens(9, 500)), 8);
  // A hit resets the idle clock: held blocks never expire.
  ASSERT_TRUE(kv.Allocate(3, ConsecutiveTokens(9, 500), 9));
  now += 100;
  kv.ReleaseIdleBlocks();
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  kv.Free(3);
  now += 59;
  kv.ReleaseIdleBlocks();
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  now += 2;
  kv.ReleaseIdleBlocks();
  EXPECT_EQ(kv.num_cached_blocks(), 0);
  EXPECT_EQ(kv.num_free_blocks(), 8);
  EXPECT_INVARIANTS(kv);
}

// Two contents under one hash (a collision, forced here) or one content under another
// parent are misses, never a wrong hit.
TEST(PrefixCacheTest, ACollidingHashIsAMiss) {
  PrefixIndex index(4, 2);
  const std::vector<int32_t> a = {1, 2};
  const std::vector<int32_t> b = {3, 4};
  const PrefixId id = index.AddPending(0, /*hash=*/42, kRootPrefix, a);
  std::vector<BlockId> registered;
  index.Commit(&registered);
  ASSERT_EQ(registered, std::vector<BlockId>{0});
  EXPECT_EQ(index.Find(42, kRootPrefix, a), BlockId{0});
  EXPECT_FALSE(index.Find(42, kRootPrefix, b).has_value());
  EXPECT_FALSE(index.Find(42, id, a).has_value());
  // A second block filed under the same hash stays uncached: the first keeps the entry.
  index.AddPending(1, 42, kRootPrefix, b);
  registered.clear();
  index.Commit(&registered);
  EXPECT_TRUE(registered.empty());
  EXPECT_FALSE(index.registered(1));
  EXPECT_EQ(index.CheckInvariants(), "");
}

TEST(PrefixCacheTest, TheHashChainsThroughTheParent) {
  const std::vector<int32_t> tokens = {5, 6, 7, 8};
  EXPECT_NE(PrefixIndex::Hash(1, tokens), PrefixIndex::Hash(2, tokens));
  EXPECT_EQ(PrefixIndex::Hash(1, tokens), PrefixIndex::Hash(1, tokens));
  EXPECT_NE(PrefixIndex::Hash(1, tokens), PrefixIndex::Hash(1, std::vector<int32_t>{5, 6, 8, 7}));
  // The seed is the root's parent hash: another seed, another cache namespace.
  KvCacheManager seeded(TinyKvLayout(4), 4, PrefixCacheOptions{.hash_seed = 7});
  ASSERT_TRUE(seeded.Allocate(1, ConsecutiveTokens(5), 5));
  seeded.CommitComputed();
  EXPECT_EQ(seeded.NumCachedTokens(ConsecutiveTokens(5)), 4);
  EXPECT_TRUE(seeded.CheckTokens(1, ConsecutiveTokens(5)).ok());
}

TEST(PrefixCacheTest, ForkedChildrenShareTheCachedPrompt) {
  KvCacheManager kv(TinyKvLayout(4), 8);
  std::vector<int32_t> tokens = ConsecutiveTokens(10);
  ASSERT_TRUE(kv.Allocate(1, tokens, 10));
  kv.CommitComputed();
  EXPECT_EQ(kv.Fork(1, 2, 10), 8);
  tokens.push_back(3);
  ASSERT_TRUE(kv.Allocate(2, tokens, 11));
  EXPECT_INVARIANTS(kv);
  EXPECT_TRUE(kv.CheckTokens(2, tokens).ok());
  kv.Free(1);
  kv.Free(2);
  kv.CommitComputed();
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  EXPECT_INVARIANTS(kv);
}

// Sequences with shared prefixes of random lengths arrive, grow, fork, are preempted
// before or after their pass and finish at random, in a pool small enough to evict. A
// shadow of every block's contents, written only when a pass "runs" (CommitComputed),
// checks that each hit attaches blocks holding exactly the sequence's tokens; the
// manager's invariants hold after every operation, and nothing leaks.
TEST(PrefixCacheTest, RandomScenarioAgainstAShadowOfTheContents) {
  constexpr int32_t kBlockSize = 4;
  constexpr int32_t kNumBlocks = 48;
  std::mt19937 rng(11);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  double now = 0;
  PrefixCacheOptions options;
  options.ttl_s = 8;
  options.clock = [&] { return now; };
  KvCacheManager kv(TinyKvLayout(kBlockSize), kNumBlocks, options);
  std::vector<std::vector<int32_t>> shadow(kNumBlocks, std::vector<int32_t>(kBlockSize, -1));
  std::vector<std::vector<int32_t>> prefixes(3);
  for (auto& prefix : prefixes) {
    for (int t = 0; t < 40; ++t) prefix.push_back(uniform(0, 5));  // small vocabulary: many repeats
  }
  struct Live {
    std::vector<int32_t> tokens;  // all it will ever know
    int32_t num_known = 0;        // tokens known so far (prompt, then sampled ones)
    int32_t num_allocated = 0;    // positions the next pass computes up to
    int32_t num_written = 0;      // positions whose K/V a pass wrote
  };
  std::map<SequenceId, Live> live;
  SequenceId next_id = 0;
  auto commit = [&] {  // the forward pass runs
    for (auto& [seq, s] : live) {
      const std::span<const BlockId> table = kv.BlockTable(seq);
      for (int32_t pos = s.num_written; pos < s.num_allocated; ++pos) {
        shadow[table[pos / kBlockSize]][pos % kBlockSize] = s.tokens[pos];
      }
      s.num_written = s.num_allocated;
    }
    kv.CommitComputed();
  };
  auto pick = [&] {
    auto it = live.begin();
    std::advance(it, uniform(0, static_cast<int>(live.size()) - 1));
    return it;
  };
  int64_t num_hits = 0;
  for (int step = 0; step < 20000; ++step) {
    const int action = uniform(0, 9);
    if (action < 3 || live.empty()) {
      Live s;
      const auto& prefix = prefixes[uniform(0, 2)];
      s.tokens.assign(prefix.begin(), prefix.begin() + uniform(0, 40));
      while (s.tokens.size() < 120) s.tokens.push_back(uniform(0, 5));
      s.num_known = static_cast<int32_t>(s.tokens.size()) - uniform(20, 80);
      const std::span<const int32_t> known(s.tokens.data(), s.num_known);
      const int32_t num_cached = kv.NumCachedTokens(known);
      ASSERT_EQ(num_cached % kBlockSize, 0);
      ASSERT_LT(num_cached, s.num_known);
      s.num_allocated = num_cached + uniform(1, s.num_known - num_cached);
      if (kv.Allocate(next_id, known, s.num_allocated)) {
        const std::span<const BlockId> table = kv.BlockTable(next_id);
        for (int32_t pos = 0; pos < num_cached; ++pos) {
          ASSERT_EQ(shadow[table[pos / kBlockSize]][pos % kBlockSize], s.tokens[pos])
              << "step " << step << ": a hit attached a block with other contents";
        }
        num_hits += num_cached > 0;
        s.num_written = num_cached;
        live[next_id] = s;
      }
      ++next_id;
    } else if (action < 6) {
      auto it = pick();
      Live& s = it->second;
      if (s.num_allocated == s.num_known && s.num_known < 120) ++s.num_known;  // sampled one
      const int32_t target = std::min(s.num_known, s.num_allocated + uniform(1, 9));
      if (kv.Allocate(it->first, std::span<const int32_t>(s.tokens.data(), s.num_known), target)) {
        s.num_allocated = target;
      } else {
        kv.Free(it->first);  // preempted: what the coming pass would have written is lost
        live.erase(it);
      }
    } else if (action < 8) {
      commit();
      now += uniform(0, 3);
      kv.ReleaseIdleBlocks();
      if (action == 7) {  // a fork right after a pass, as the scheduler does
        auto it = pick();
        Live child = it->second;
        child.num_allocated = child.num_written = kv.Fork(it->first, next_id, it->second.num_written);
        live[next_id++] = child;
      }
    } else {
      auto it = pick();
      kv.Free(it->first);
      live.erase(it);
    }
    ASSERT_TRUE(kv.CheckInvariants().ok()) << "step " << step << ": " << kv.CheckInvariants().ToString();
    for (const auto& [seq, s] : live) {
      const Status tokens_ok = kv.CheckTokens(seq, std::span<const int32_t>(s.tokens.data(), s.num_known));
      ASSERT_TRUE(tokens_ok.ok()) << "step " << step << ": " << tokens_ok.ToString();
    }
  }
  EXPECT_GT(num_hits, 1000);
  EXPECT_GT(kv.stats().num_evicted_blocks, 100);
  EXPECT_GT(kv.stats().num_expired_blocks, 0);
  for (const auto& [seq, s] : live) kv.Free(seq);
  kv.CommitComputed();
  EXPECT_EQ(kv.num_free_blocks(), kv.num_total_blocks());
  EXPECT_EQ(kv.num_sequences(), 0);
  EXPECT_INVARIANTS(kv);
}

}  // namespace
}  // namespace surge
