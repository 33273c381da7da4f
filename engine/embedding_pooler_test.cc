// EmbeddingPooler: last and mean pooling over chunks, L2 normalization, and starting over
// when a preempted sequence recomputes from position 0.
#include "engine/embedding_pooler.h"

#include <gtest/gtest.h>

#include <cmath>

namespace surge {
namespace {

TEST(EmbeddingPoolerTest, MeanOverChunksIsNormalized) {
  EmbeddingPooler pooler(PoolingKind::kMean, 2);
  const float first[] = {1, 0, 3, 0};  // two rows
  const float second[] = {2, 6};
  pooler.Add(0, first);
  pooler.Add(2, second);
  // mean = (2, 2) -> (1/sqrt2, 1/sqrt2)
  const std::vector<float> out = pooler.Finish();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[0], 1 / std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(out[1], 1 / std::sqrt(2.0f));
}

TEST(EmbeddingPoolerTest, LastTakesTheLastRowOnly) {
  EmbeddingPooler pooler(PoolingKind::kLast, 2);
  const float rows[] = {5, 5, 3, 4};
  pooler.Add(0, rows);
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{0.6f, 0.8f}));
  pooler.Add(2, {});  // a chunk that does not end the prompt brings no row
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{0.6f, 0.8f}));
}

TEST(EmbeddingPoolerTest, ClsTakesPositionZerosRow) {
  EmbeddingPooler pooler(PoolingKind::kCls, 2);
  const float rows[] = {3, 4, 100, 0};
  pooler.Add(0, rows);
  const float later[] = {0, 100};
  pooler.Add(2, later);  // a later chunk leaves the first row
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{0.6f, 0.8f}));
}

TEST(EmbeddingPoolerTest, WithoutNormalizationTheMeanStays) {
  EmbeddingPooler pooler(PoolingKind::kMean, 2, /*normalize=*/false);
  const float rows[] = {1, 2, 3, 6};
  pooler.Add(0, rows);
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{2, 4}));
}

TEST(EmbeddingPoolerTest, PositionZeroStartsOver) {
  EmbeddingPooler pooler(PoolingKind::kMean, 2);
  const float stale[] = {100, 0};
  const float fresh[] = {0, 2};
  pooler.Add(0, stale);
  pooler.Add(0, fresh);  // recomputed after a preemption
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{0, 1}));
}

TEST(EmbeddingPoolerTest, ZeroVectorStaysZero) {
  EmbeddingPooler pooler(PoolingKind::kMean, 3);
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{0, 0, 0}));
  const float zeros[] = {0, 0, 0};
  pooler.Add(0, zeros);
  EXPECT_EQ(pooler.Finish(), (std::vector<float>{0, 0, 0}));
}

TEST(EmbeddingPoolerTest, PoolingNames) {
  EXPECT_STREQ(PoolingKindName(PoolingKind::kLast), "last");
  EXPECT_STREQ(PoolingKindName(PoolingKind::kMean), "mean");
  EXPECT_EQ(*ParsePoolingKind("mean"), PoolingKind::kMean);
  EXPECT_EQ(*ParsePoolingKind("last"), PoolingKind::kLast);
  EXPECT_STREQ(PoolingKindName(PoolingKind::kCls), "cls");
  EXPECT_EQ(*ParsePoolingKind("cls"), PoolingKind::kCls);
  EXPECT_FALSE(ParsePoolingKind("max").ok());
}

}  // namespace
}  // namespace surge
