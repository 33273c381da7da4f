#include "base/block_hash.h"

#include <gtest/gtest.h>

#include <vector>

namespace surge {
namespace {

// The engine's prefix cache and every router compute these; a change here must be a
// deliberate protocol change (rename kBlockHashName), never an accident.
TEST(BlockHashTest, ValuesArePinned) {
  const std::vector<int32_t> first{1, 2, 3, 4};
  const std::vector<int32_t> second{5, 6, 7, 8};
  EXPECT_EQ(BlockHash(0, first), 0xaaa56d17346f94c4ULL);
  EXPECT_EQ(BlockHash(0xaaa56d17346f94c4ULL, second), 0xe4987b46005ad10fULL);
  EXPECT_EQ(BlockHash(7, std::vector<int32_t>{-1, 0, 32000, 7}), 0xf2ed3e2d461002e3ULL);
  EXPECT_EQ(BlockHash(0, {}), 0x48218226ff3cd4bfULL);
}

TEST(BlockHashTest, ChainCoversFullBlocksOnly) {
  const std::vector<int32_t> tokens{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<uint64_t> hashes = ChainedBlockHashes(tokens, 4);
  ASSERT_EQ(hashes.size(), 2u);
  EXPECT_EQ(hashes[0], 0xaaa56d17346f94c4ULL);
  EXPECT_EQ(hashes[1], 0xe4987b46005ad10fULL);
  EXPECT_TRUE(ChainedBlockHashes(std::vector<int32_t>{1, 2, 3}, 4).empty());
  EXPECT_NE(ChainedBlockHashes(tokens, 4, 1)[0], hashes[0]);  // the seed is the first parent
}

TEST(BlockHashTest, HexRoundTrips) {
  for (uint64_t hash : std::vector<uint64_t>{0, 1, 0xaaa56d17346f94c4ULL, ~uint64_t{0}}) {
    const std::string text = BlockHashToHex(hash);
    EXPECT_EQ(text.size(), 16u);
    uint64_t back = 0;
    ASSERT_TRUE(BlockHashFromHex(text, &back)) << text;
    EXPECT_EQ(back, hash);
  }
  EXPECT_EQ(BlockHashToHex(0xabcULL), "0000000000000abc");
  uint64_t ignored = 0;
  for (const char* bad : {"", "12345678901234567", "xyz", "12 3", "-1", "0x12"}) {
    EXPECT_FALSE(BlockHashFromHex(bad, &ignored)) << bad;
  }
}

}  // namespace
}  // namespace surge
