#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <vector>

namespace surge {
namespace {

KvLayout Layout(int32_t block_size) {
  KvLayout layout;
  layout.num_layers = 2;
  layout.num_kv_heads = 2;
  layout.head_dim = 4;
  layout.block_size = block_size;
  return layout;
}

std::vector<int32_t> Tokens(int32_t num_tokens) {
  std::vector<int32_t> tokens(num_tokens);
  std::iota(tokens.begin(), tokens.end(), 100);
  return tokens;
}

TEST(KvCacheManagerTest, AllocateGrowsTheTableBlockByBlock) {
  KvCacheManager kv(Layout(4), 10);
  const std::vector<int32_t> tokens = Tokens(40);
  EXPECT_EQ(kv.NumBlocksFor(0), 0);
  EXPECT_EQ(kv.NumBlocksFor(4), 1);
  EXPECT_EQ(kv.NumBlocksFor(5), 2);
  ASSERT_TRUE(kv.Allocate(1, tokens, 5));
  EXPECT_EQ(kv.BlockTable(1).size(), 2u);
  ASSERT_TRUE(kv.Allocate(1, tokens, 8));  // still two blocks
  EXPECT_EQ(kv.BlockTable(1).size(), 2u);
  ASSERT_TRUE(kv.Allocate(1, tokens, 9));
  EXPECT_EQ(kv.BlockTable(1).size(), 3u);
  EXPECT_EQ(kv.num_used_blocks(), 3);
  EXPECT_EQ(kv.num_free_blocks(), 7);
  EXPECT_TRUE(kv.CheckInvariants().ok()) << kv.CheckInvariants().ToString();
}

TEST(KvCacheManagerTest, NoRoomChangesNothing) {
  KvCacheManager kv(Layout(4), 3);
  const std::vector<int32_t> tokens = Tokens(40);
  ASSERT_TRUE(kv.Allocate(1, tokens, 8));
  EXPECT_FALSE(kv.Allocate(1, tokens, 13));  // needs 2 more, 1 free
  EXPECT_EQ(kv.BlockTable(1).size(), 2u);
  EXPECT_EQ(kv.num_free_blocks(), 1);
  EXPECT_FALSE(kv.Allocate(2, tokens, 5));  // a new sequence that does not fit
  EXPECT_FALSE(kv.Contains(2));
  EXPECT_EQ(kv.num_sequences(), 1);
  EXPECT_TRUE(kv.Allocate(2, tokens, 4));
  EXPECT_EQ(kv.num_free_blocks(), 0);
  EXPECT_TRUE(kv.CheckInvariants().ok());
}

TEST(KvCacheManagerTest, FreeReturnsAllBlocksAtOnce) {
  KvCacheManager kv(Layout(16), 8);
  const std::vector<int32_t> tokens = Tokens(100);
  ASSERT_TRUE(kv.Allocate(7, tokens, 100));
  EXPECT_EQ(kv.num_used_blocks(), 7);
  kv.Free(7);
  kv.Free(7);  // unknown now: ignored
  EXPECT_EQ(kv.num_free_blocks(), 8);
  EXPECT_FALSE(kv.Contains(7));
  EXPECT_TRUE(kv.BlockTable(7).empty());
  EXPECT_TRUE(kv.CheckInvariants().ok());
}

TEST(KvCacheManagerTest, NothingIsCachedWithoutPrefixCaching) {
  KvCacheManager kv(Layout(4), 8, PrefixCacheOptions{.enabled = false});
  const std::vector<int32_t> tokens = Tokens(20);
  ASSERT_TRUE(kv.Allocate(1, tokens, 20));
  kv.CommitComputed();
  EXPECT_EQ(kv.NumCachedTokens(tokens), 0);
  kv.Free(1);
  EXPECT_EQ(kv.num_cached_blocks(), 0);
  EXPECT_EQ(kv.stats().num_queried_tokens, 0);
  EXPECT_TRUE(kv.CheckInvariants().ok()) << kv.CheckInvariants().ToString();
}

TEST(KvCacheManagerTest, ForkSharesOnlyFullBlocks) {
  KvCacheManager kv(Layout(16), 10);
  std::vector<int32_t> tokens = Tokens(37);
  ASSERT_TRUE(kv.Allocate(1, tokens, 37));  // blocks for 16 + 16 + 5 positions
  const std::vector<BlockId> parent(kv.BlockTable(1).begin(), kv.BlockTable(1).end());
  EXPECT_EQ(kv.Fork(1, 2, 37), 32);
  EXPECT_EQ(kv.Fork(1, 3, 37), 32);
  ASSERT_EQ(kv.BlockTable(2).size(), 2u);
  EXPECT_EQ(kv.BlockTable(2)[0], parent[0]);
  EXPECT_EQ(kv.BlockTable(3)[1], parent[1]);
  EXPECT_EQ(kv.num_used_blocks(), 3);
  EXPECT_TRUE(kv.CheckInvariants().ok()) << kv.CheckInvariants().ToString();
  // Each child recomputes positions 32..37 (and its first output) into its own block.
  tokens.push_back(9);
  ASSERT_TRUE(kv.Allocate(2, tokens, 38));
  ASSERT_TRUE(kv.Allocate(3, tokens, 38));
  EXPECT_NE(kv.BlockTable(2)[2], parent[2]);
  EXPECT_NE(kv.BlockTable(2)[2], kv.BlockTable(3)[2]);
  EXPECT_EQ(kv.num_used_blocks(), 5);
  kv.Free(1);
  EXPECT_EQ(kv.num_used_blocks(), 4);  // only the parent's partial block came back
  kv.Free(2);
  kv.Free(3);
  EXPECT_EQ(kv.num_free_blocks(), 10);
  EXPECT_TRUE(kv.CheckInvariants().ok());
}

TEST(KvCacheManagerTest, ForkOfABlockAlignedPromptSharesEverything) {
  KvCacheManager kv(Layout(4), 4);
  const std::vector<int32_t> tokens = Tokens(8);
  ASSERT_TRUE(kv.Allocate(1, tokens, 8));
  EXPECT_EQ(kv.Fork(1, 2, 8), 8);
  EXPECT_EQ(kv.num_used_blocks(), 2);
  EXPECT_TRUE(kv.CheckInvariants().ok());
}

// Sequences grow, fork and finish at random; the manager's invariants hold after every
// operation, a failed Allocate changes nothing, and at the end every block is free.
TEST(KvCacheManagerTest, RandomScenarioKeepsInvariants) {
  std::mt19937 rng(7);
  KvCacheManager kv(Layout(4), 41);
  const std::vector<int32_t> tokens = Tokens(400);
  std::map<SequenceId, int32_t> num_tokens;  // live sequences and the positions they cover
  SequenceId next_id = 0;
  auto pick = [&] {
    auto it = num_tokens.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, num_tokens.size() - 1)(rng));
    return it;
  };
  for (int step = 0; step < 20000; ++step) {
    const int action = std::uniform_int_distribution<int>(0, 9)(rng);
    if (action < 2 || num_tokens.empty()) {
      const int32_t n = std::uniform_int_distribution<int32_t>(1, 60)(rng);
      const int32_t num_free = kv.num_free_blocks();
      const bool ok = kv.Allocate(next_id, tokens, n);
      ASSERT_EQ(ok, kv.NumBlocksFor(n) <= num_free);
      if (ok) num_tokens[next_id] = n;
      ++next_id;
    } else if (action < 7) {
      auto it = pick();
      const int32_t n = it->second + std::uniform_int_distribution<int32_t>(1, 9)(rng);
      const int32_t num_free = kv.num_free_blocks();
      const size_t num_held = kv.BlockTable(it->first).size();
      if (kv.Allocate(it->first, tokens, std::min(n, 400))) {
        it->second = std::min(n, 400);
      } else {
        ASSERT_EQ(kv.num_free_blocks(), num_free);
        ASSERT_EQ(kv.BlockTable(it->first).size(), num_held);
      }
    } else if (action < 8) {
      auto it = pick();
      num_tokens[next_id] = kv.Fork(it->first, next_id, it->second);
      ++next_id;
    } else {
      auto it = pick();
      kv.Free(it->first);
      num_tokens.erase(it);
    }
    ASSERT_TRUE(kv.CheckInvariants().ok())
        << "step " << step << ": " << kv.CheckInvariants().ToString();
  }
  for (const auto& [seq, n] : num_tokens) kv.Free(seq);
  EXPECT_EQ(kv.num_free_blocks(), kv.num_total_blocks());
  EXPECT_EQ(kv.num_sequences(), 0);
}

}  // namespace
}  // namespace surge
