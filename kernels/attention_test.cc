#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/reference/reference.h"

namespace surge {
namespace {

struct Shape {
  int32_t num_heads, num_kv_heads, head_dim, block_size;
  int32_t start_position, num_queries;  // keys: [0, start_position + num_queries)
};

// One scenario: contiguous K/V [num_keys, kv_heads, head_dim] scattered into a pool
// through a random block table (with spare blocks in between), and queries.
struct Scenario {
  Shape s;
  std::vector<float> k, v, q;  // contiguous K/V; q: [num_queries, num_heads * head_dim]
  std::vector<float> k_pool, v_pool;
  std::vector<int32_t> block_table;

  Scenario(const Shape& shape, std::mt19937& rng) : s(shape) {
    std::normal_distribution<float> dist;
    const int32_t num_keys = s.start_position + s.num_queries;
    const int64_t row = int64_t{s.num_kv_heads} * s.head_dim;
    k.resize(num_keys * row), v.resize(num_keys * row);
    q.resize(int64_t{s.num_queries} * s.num_heads * s.head_dim);
    for (auto* vec : {&k, &v, &q})
      for (float& x : *vec) x = 2.0f * dist(rng);  // peaked softmax, far from uniform
    const int32_t num_blocks = (num_keys + s.block_size - 1) / s.block_size;
    std::vector<int32_t> ids(2 * num_blocks + 3);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    block_table.assign(ids.begin(), ids.begin() + num_blocks);
    k_pool.assign(ids.size() * s.block_size * row, NAN);  // unwritten rows are poison
    v_pool.assign(k_pool.size(), NAN);
    for (int32_t t = 0; t < num_keys; ++t) {
      int64_t dst =
          (int64_t{block_table[t / s.block_size]} * s.block_size + t % s.block_size) * row;
      std::copy_n(k.begin() + t * row, row, k_pool.begin() + dst);
      std::copy_n(v.begin() + t * row, row, v_pool.begin() + dst);
    }
  }

  PagedKvView kv() const {
    return {k_pool.data(), v_pool.data(), s.block_size, s.num_kv_heads, s.head_dim};
  }
  AttentionQueries queries(float* out) const {
    const int64_t stride = int64_t{s.num_heads} * s.head_dim;
    return {q.data(),         stride,        out,
            stride,           s.num_queries, s.num_heads,
            s.start_position, block_table,   1.0f / std::sqrt(static_cast<float>(s.head_dim))};
  }

  // Textbook attention on the contiguous K/V, in double.
  std::vector<float> Naive() const {
    const int32_t group = s.num_heads / s.num_kv_heads;
    std::vector<float> out(q.size());
    for (int32_t j = 0; j < s.num_queries; ++j) {
      for (int32_t h = 0; h < s.num_heads; ++h) {
        const int32_t num_keys = s.start_position + j + 1;
        const float* qh = &q[(int64_t{j} * s.num_heads + h) * s.head_dim];
        std::vector<double> p(num_keys);
        for (int32_t t = 0; t < num_keys; ++t) {
          const float* kt = &k[(int64_t{t} * s.num_kv_heads + h / group) * s.head_dim];
          p[t] = std::inner_product(qh, qh + s.head_dim, kt, 0.0) / std::sqrt(double(s.head_dim));
        }
        double max = *std::max_element(p.begin(), p.end()), sum = 0.0;
        for (double& x : p) sum += (x = std::exp(x - max));
        for (int32_t d = 0; d < s.head_dim; ++d) {
          double acc = 0.0;
          for (int32_t t = 0; t < num_keys; ++t)
            acc += p[t] / sum * v[(int64_t{t} * s.num_kv_heads + h / group) * s.head_dim + d];
          out[(int64_t{j} * s.num_heads + h) * s.head_dim + d] = static_cast<float>(acc);
        }
      }
    }
    return out;
  }
};

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, const char* what,
                const Shape& s) {
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-5)
        << what << ": heads " << s.num_heads << "/" << s.num_kv_heads << " dim " << s.head_dim
        << " block " << s.block_size << " start " << s.start_position << " queries "
        << s.num_queries << " at " << i;
  }
}

void CheckShape(const Shape& shape, std::mt19937& rng) {
  Scenario scenario(shape, rng);
  const std::vector<float> naive = scenario.Naive();
  std::vector<float> ref(naive.size(), NAN);
  reference::PagedAttention(scenario.kv(), scenario.queries(ref.data()));
  ExpectNear(ref, naive, "reference", shape);
  for (SimdLevel level : SupportedSimdLevels()) {
    std::vector<float> out(naive.size(), NAN);
    AttentionQueries queries = scenario.queries(out.data());
    for (int32_t j = 0; j < shape.num_queries; ++j) {
      for (int32_t g = 0; g < shape.num_kv_heads; ++g) {
        PagedAttentionWithLevel(level, scenario.kv(), queries, j, g);
      }
    }
    ExpectNear(out, naive, SimdLevelName(level), shape);
  }
}

TEST(PagedAttentionTest, MatchesContiguousAttention) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int32_t> length(1, 2000);
  const int32_t kGqaRatios[] = {1, 4, 8};
  const int32_t kHeadDims[] = {64, 128, 40};
  const int32_t kBlockSizes[] = {1, 4, 16, 48};
  for (int trial = 0; trial < 18; ++trial) {
    const int32_t ratio = kGqaRatios[trial % 3];
    const int32_t num_kv_heads = ratio == 8 ? 1 : 2;
    const int32_t num_keys = trial < 3 ? trial + 1 : length(rng);
    // Long histories get a short chunk of queries at the end (decode / chunked prefill);
    // short ones are a whole prefill.
    const int32_t num_queries = num_keys <= 64 ? num_keys : 1 + trial % 5;
    Shape shape{ratio * num_kv_heads,
                num_kv_heads,
                kHeadDims[trial % 3 == 0 ? trial / 3 % 3 : trial % 3],
                kBlockSizes[trial % 4],
                num_keys - num_queries,
                num_queries};
    CheckShape(shape, rng);
  }
}

TEST(PagedAttentionTest, LargeGroupsTakeSeveralPasses) {
  std::mt19937 rng(10);
  CheckShape(Shape{40, 2, 16, 4, 30, 3}, rng);  // 20 query heads per kv head
}

TEST(PagedAttentionTest, SingleKeyCopiesValue) {
  std::mt19937 rng(11);
  Scenario scenario(Shape{4, 2, 8, 4, 0, 1}, rng);
  std::vector<float> out(scenario.q.size());
  AttentionQueries queries = scenario.queries(out.data());
  for (int32_t g = 0; g < 2; ++g) PagedAttention(scenario.kv(), queries, 0, g);
  for (int32_t h = 0; h < 4; ++h)
    for (int32_t d = 0; d < 8; ++d) EXPECT_FLOAT_EQ(out[h * 8 + d], scenario.v[(h / 2) * 8 + d]);
}

}  // namespace
}  // namespace surge
