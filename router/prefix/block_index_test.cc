// BlockIndex: leading-prefix scores, the LRU bound in approximate mode, and precise mode's
// snapshots, ordering and gaps.
#include "router/prefix/block_index.h"

#include <gtest/gtest.h>

#include <vector>

namespace surge::router {
namespace {

using Type = KvEventRun::Type;

KvEventBatch Batch(uint64_t seq, Type type, std::vector<uint64_t> hashes) {
  return {seq, false, {{type, std::move(hashes)}}};
}

KvEventBatch Snapshot(uint64_t seq, std::vector<uint64_t> hashes) {
  return {seq, true, {{Type::kCleared, {}}, {Type::kStored, std::move(hashes)}}};
}

TEST(BlockIndexTest, CountsOnlyTheLeadingRun) {
  BlockIndex index(16);
  index.RecordRequest(std::vector<uint64_t>{1, 2, 3});
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 2, 3, 4}), 3);
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 9, 3}), 1);
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{2, 3}), 2);  // a chain names its prefix
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{9, 1}), 0);
  EXPECT_EQ(index.NumLeadingCached({}), 0);
}

TEST(BlockIndexTest, ApproximateModeIsBoundedAndDropsTailsFirst) {
  BlockIndex index(4);
  index.RecordRequest(std::vector<uint64_t>{1, 2, 3});
  index.RecordRequest(std::vector<uint64_t>{10, 11});  // one of the first request's blocks must go
  EXPECT_EQ(index.size(), 4u);
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 2, 3}), 2);  // its tail (3) went
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{10, 11}), 2);
  index.RecordRequest(std::vector<uint64_t>{1, 2});  // used again: now the most recent
  index.RecordRequest(std::vector<uint64_t>{20, 21});
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 2}), 2);
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{10, 11}), 0);
}

TEST(BlockIndexTest, PreciseModeFollowsTheEvents) {
  BlockIndex index(100);
  ASSERT_TRUE(index.Apply(Snapshot(5, {1, 2})));
  EXPECT_EQ(index.last_seq(), 5u);
  ASSERT_TRUE(index.Apply(Batch(6, Type::kStored, {3})));
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 2, 3}), 3);
  ASSERT_TRUE(index.Apply(Batch(7, Type::kEvicted, {2, 42})));  // an unknown hash is no error
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 2, 3}), 1);
  ASSERT_TRUE(index.Apply({8, false, {{Type::kStored, {7}}, {Type::kEvicted, {7}}, {Type::kStored, {8}}}}));
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{7}), 0);  // runs apply in order
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{8}), 1);
  ASSERT_TRUE(index.Apply(Snapshot(20, {9})));  // a snapshot replaces everything
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.num_gaps(), 0);
}

TEST(BlockIndexTest, AGapClearsTheIndexAndIsReported) {
  BlockIndex index(100);
  ASSERT_TRUE(index.Apply(Snapshot(1, {1, 2})));
  EXPECT_FALSE(index.Apply(Batch(3, Type::kStored, {3})));  // batch 2 was lost
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.num_gaps(), 1);
  EXPECT_FALSE(index.Apply(Batch(4, Type::kStored, {4})));  // still lost until a snapshot
  ASSERT_TRUE(index.Apply(Snapshot(4, {1, 2, 3, 4})));
  EXPECT_EQ(index.NumLeadingCached(std::vector<uint64_t>{1, 2, 3, 4}), 4);
}

TEST(BlockIndexTest, PreciseModeIsBoundedToo) {
  BlockIndex index(3);
  ASSERT_TRUE(index.Apply(Snapshot(1, {1, 2, 3, 4, 5})));
  EXPECT_EQ(index.size(), 3u);
}

}  // namespace
}  // namespace surge::router
