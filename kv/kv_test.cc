#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kv/block_pool.h"
#include "kv/kv_storage.h"

namespace surge {
namespace {

KvLayout SmallLayout() {
  KvLayout layout;
  layout.num_layers = 3;
  layout.num_kv_heads = 2;
  layout.head_dim = 5;  // odd on purpose: arrays must still start 64-byte aligned
  layout.block_size = 4;
  return layout;
}

TEST(KvStorageTest, ArraysAreAlignedDisjointAndSizedFromTheLayout) {
  for (KvDType dtype :
       {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8, KvDType::kInt4}) {
    KvLayout layout = SmallLayout();
    layout.dtype = dtype;
    KvStorage kv(layout, 7);
    EXPECT_EQ(kv.num_blocks(), 7);
    EXPECT_GE(kv.size_bytes(), layout.bytes_per_block() * 7);
    std::set<const uint8_t*> starts;
    const size_t n = layout.bytes_per_block_array();
    for (int32_t layer = 0; layer < layout.num_layers; ++layer) {
      for (uint8_t* array : {kv.k_layer(layer), kv.v_layer(layer)}) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(array) % 64, 0u);
        starts.insert(array);
      }
      EXPECT_EQ(kv.k_block(layer, 3), kv.k_layer(layer) + 3 * n);
      EXPECT_EQ(kv.v_block(layer, 6), kv.v_layer(layer) + 6 * n);
    }
    EXPECT_EQ(starts.size(), 6u);
    // Fill every block of every array with its own tag and read the tags back: no overlap.
    for (int32_t layer = 0; layer < layout.num_layers; ++layer)
      for (BlockId b = 0; b < 7; ++b) {
        std::fill_n(kv.k_block(layer, b), n, uint8_t(layer * 16 + b));
        std::fill_n(kv.v_block(layer, b), n, uint8_t(128 + layer * 16 + b));
      }
    for (int32_t layer = 0; layer < layout.num_layers; ++layer)
      for (BlockId b = 0; b < 7; ++b) {
        EXPECT_EQ(kv.k_block(layer, b)[n - 1], uint8_t(layer * 16 + b));
        EXPECT_EQ(kv.v_block(layer, b)[0], uint8_t(128 + layer * 16 + b));
      }
  }
}

// What a token costs per format (head_dim 128, 8 kv heads, 32 layers: Llama-3-8B).
TEST(KvLayoutTest, BytesPerTokenFollowTheFormat) {
  KvLayout layout{32, 8, 128, 16, KvDType::kF32};
  EXPECT_EQ(layout.bytes_per_token(), 2u * 32 * 8 * 128 * 4);  // 256 KiB
  EXPECT_EQ(layout.bytes_per_block(), 16 * layout.bytes_per_token());
  layout.dtype = KvDType::kBF16;
  EXPECT_EQ(layout.bytes_per_token(), 2u * 32 * 8 * 128 * 2);
  layout.dtype = KvDType::kInt8;
  EXPECT_EQ(layout.bytes_per_token(), 2u * 32 * 8 * (128 + 4));  // + f32 scale per row
  layout.dtype = KvDType::kInt4;
  EXPECT_EQ(layout.bytes_per_token(), 2u * 32 * 8 * (64 + 4 * 4));  // + f16 scale, min / 32
}

TEST(BlockPoolTest, AllocatesUntilEmptyThenReturnsNothing) {
  BlockPool pool(4);
  EXPECT_EQ(pool.num_total_blocks(), 4);
  std::set<BlockId> got;
  for (int i = 0; i < 4; ++i) {
    std::optional<BlockId> block = pool.Allocate();
    ASSERT_TRUE(block.has_value());
    EXPECT_EQ(pool.ref_count(*block), 1);
    got.insert(*block);
  }
  EXPECT_EQ(got, (std::set<BlockId>{0, 1, 2, 3}));
  EXPECT_FALSE(pool.Allocate().has_value());
  EXPECT_EQ(pool.num_free_blocks(), 0);
  pool.Free(2);
  EXPECT_EQ(pool.Allocate(), std::optional<BlockId>(2));
}

TEST(BlockPoolTest, SharedBlocksFreeOnLastReference) {
  BlockPool pool(2);
  BlockId block = *pool.Allocate();
  pool.AddRef(block);
  EXPECT_EQ(pool.ref_count(block), 2);
  pool.Free(block);
  EXPECT_EQ(pool.num_free_blocks(), 1);
  pool.Free(block);
  EXPECT_EQ(pool.num_free_blocks(), 2);
  EXPECT_EQ(pool.ref_count(block), 0);
}

TEST(BlockPoolDeathTest, DoubleFreeAndBadIdsAbort) {
  BlockPool pool(2);
  BlockId block = *pool.Allocate();
  pool.Free(block);
  EXPECT_DEATH(pool.Free(block), "double free");
  EXPECT_DEATH(pool.Free(7), "outside");
  EXPECT_DEATH(pool.AddRef(1), "free block");
}

// Random allocate / share / free against a model of who holds what; after every step
// free + used == total, ref counts equal the number of holders, and the free list
// holds exactly the unreferenced blocks.
TEST(BlockPoolTest, RandomScenarioKeepsInvariants) {
  std::mt19937 rng(12);
  const int32_t kNumBlocks = 37;
  BlockPool pool(kNumBlocks);
  std::vector<BlockId> holders;  // one entry per reference
  for (int step = 0; step < 20000; ++step) {
    int action = std::uniform_int_distribution<int>(0, 2)(rng);
    if (action == 0) {
      const bool had_free = pool.num_free_blocks() > 0;
      std::optional<BlockId> block = pool.Allocate();
      ASSERT_EQ(block.has_value(), had_free);
      if (block) holders.push_back(*block);
    } else if (!holders.empty()) {
      size_t i = std::uniform_int_distribution<size_t>(0, holders.size() - 1)(rng);
      if (action == 1) {
        pool.AddRef(holders[i]);
        holders.push_back(holders[i]);
      } else {
        pool.Free(holders[i]);
        holders.erase(holders.begin() + i);
      }
    }
    ASSERT_EQ(pool.num_free_blocks() + pool.num_used_blocks(), pool.num_total_blocks());
    std::vector<int32_t> refs(kNumBlocks, 0);
    for (BlockId b : holders) ++refs[b];
    int32_t num_used = 0;
    for (BlockId b = 0; b < kNumBlocks; ++b) {
      ASSERT_EQ(pool.ref_count(b), refs[b]) << "block " << b << " step " << step;
      num_used += refs[b] > 0;
    }
    ASSERT_EQ(pool.num_used_blocks(), num_used);
  }
}

}  // namespace
}  // namespace surge
