#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/reference/reference.h"

namespace surge {
namespace {

std::vector<float> RandomVector(std::mt19937& rng, int64_t n) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Case {
  int64_t m, n, k;
  bool bias;
};

// Fast path vs the double-accumulating reference; the bound scales with sum |x||w|.
void CheckAgainstReference(SimdLevel level, const Case& c, ThreadPool* pool, std::mt19937& rng) {
  std::vector<float> x = RandomVector(rng, c.m * c.k), w = RandomVector(rng, c.n * c.k);
  std::vector<float> bias = RandomVector(rng, c.n);
  std::vector<float> y(c.m * c.n, NAN), want(c.m * c.n);
  WeightMatrix weight = F32Weight(w.data(), c.n, c.k);
  const float* b = c.bias ? bias.data() : nullptr;
  MatMulWithLevel(level, x.data(), c.m, weight, b, y.data(), pool);
  reference::MatMul(x.data(), c.m, weight, b, want.data());
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t n = 0; n < c.n; ++n) {
      double magnitude = 0.0;
      for (int64_t k = 0; k < c.k; ++k) magnitude += std::fabs(x[i * c.k + k] * w[n * c.k + k]);
      ASSERT_NEAR(y[i * c.n + n], want[i * c.n + n], 2e-6 * magnitude + 1e-6)
          << SimdLevelName(level) << " m=" << c.m << " n=" << c.n << " k=" << c.k << " at (" << i
          << ", " << n << ")";
    }
  }
}

TEST(MatMulTest, EveryPathMatchesReference) {
  std::mt19937 rng(1);
  ThreadPool pool(3);
  const Case cases[] = {{1, 1, 1, false},     {1, 8, 16, true},   {1, 13, 17, true},
                        {2, 9, 31, false},    {3, 21, 100, true}, {4, 64, 64, false},
                        {5, 7, 5, true},      {7, 33, 48, true},  {33, 70, 129, true},
                        {70, 129, 33, false}, {130, 66, 8, true}};
  for (SimdLevel level : SupportedSimdLevels()) {
    for (const Case& c : cases) {
      CheckAgainstReference(level, c, nullptr, rng);
      CheckAgainstReference(level, c, &pool, rng);
    }
  }
}

// A row's output must be bit-identical whether it is computed alone or inside a batch of
// any size, with or without threads: the batch-invariance contract of MatMul.
TEST(MatMulTest, RowsDoNotDependOnTheBatch) {
  std::mt19937 rng(2);
  ThreadPool pool(4);
  const int64_t n = 77, k = 203;
  std::vector<float> w = RandomVector(rng, n * k), bias = RandomVector(rng, n);
  WeightMatrix weight = F32Weight(w.data(), n, k);
  for (SimdLevel level : SupportedSimdLevels()) {
    for (int64_t m : {2, 3, 4, 5, 9, 37, 100}) {
      std::vector<float> x = RandomVector(rng, m * k), batch(m * n), single(n);
      MatMulWithLevel(level, x.data(), m, weight, bias.data(), batch.data(), &pool);
      for (int64_t i = 0; i < m; ++i) {
        MatMulWithLevel(level, x.data() + i * k, 1, weight, bias.data(), single.data(), nullptr);
        ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + i * n, n * sizeof(float)))
            << SimdLevelName(level) << " row " << i << " of " << m;
      }
    }
  }
}

TEST(MatMulTest, ActiveLevelIsTheDetectedOne) {
  EXPECT_EQ(ActiveSimdLevel(), DetectedSimdLevel());
  {
    ScopedSimdLevel scalar(SimdLevel::kScalar);
    EXPECT_EQ(ActiveSimdLevel(), SimdLevel::kScalar);
  }
  EXPECT_EQ(ActiveSimdLevel(), DetectedSimdLevel());
}

}  // namespace
}  // namespace surge
