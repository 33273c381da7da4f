#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/attention_tile.h"
#include "kernels/reference/reference.h"
#include "kernels/thread_pool.h"

namespace surge {
namespace {

struct Shape {
  int32_t num_heads, num_kv_heads, head_dim, block_size;
  int32_t start_position, num_queries;  // keys: [0, start_position + num_queries)
};

// One scenario: contiguous K/V [num_keys, kv_heads, head_dim] stored in `dtype` into a
// pool through a random block table (with spare blocks in between), and queries.
struct Scenario {
  Shape s;
  KvDType dtype;
  std::vector<float> k, v, q;  // contiguous K/V as the cache holds them (dequantized)
  std::vector<float> k_f32, v_f32;  // contiguous K/V before quantization
  std::vector<uint8_t> k_pool, v_pool;
  std::vector<int32_t> block_table;

  Scenario(const Shape& shape, std::mt19937& rng, KvDType kv_dtype = KvDType::kF32)
      : s(shape), dtype(kv_dtype) {
    std::normal_distribution<float> dist;
    const int32_t num_keys = s.start_position + s.num_queries;
    const int64_t row = int64_t{s.num_kv_heads} * s.head_dim;
    k_f32.resize(num_keys * row), v_f32.resize(num_keys * row);
    q.resize(int64_t{s.num_queries} * s.num_heads * s.head_dim);
    for (auto* vec : {&k_f32, &v_f32, &q})
      for (float& x : *vec) x = 2.0f * dist(rng);  // peaked softmax, far from uniform
    const int32_t num_blocks = (num_keys + s.block_size - 1) / s.block_size;
    std::vector<int32_t> ids(2 * num_blocks + 3);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    block_table.assign(ids.begin(), ids.begin() + num_blocks);
    const int64_t head_bytes = KvRowBytes(dtype, s.head_dim);
    // Unwritten rows are poison: 0xff bytes are NaN in every format's floats and scales.
    k_pool.assign(ids.size() * s.block_size * s.num_kv_heads * head_bytes, 0xff);
    v_pool.assign(k_pool.size(), 0xff);
    k.resize(k_f32.size()), v.resize(v_f32.size());
    for (int32_t t = 0; t < num_keys; ++t) {
      for (int32_t g = 0; g < s.num_kv_heads; ++g) {
        const int64_t src = t * row + int64_t{g} * s.head_dim;
        // [num_blocks, num_kv_heads, block_size, head_bytes], written out independently of
        // PagedKvRowOffset.
        const int64_t dst =
            ((int64_t{block_table[t / s.block_size]} * s.num_kv_heads + g) * s.block_size +
             t % s.block_size) * head_bytes;
        QuantizeKvRow(dtype, &k_f32[src], s.head_dim, &k_pool[dst]);
        QuantizeKvRow(dtype, &v_f32[src], s.head_dim, &v_pool[dst]);
        DequantizeKvRow(dtype, &k_pool[dst], s.head_dim, &k[src]);
        DequantizeKvRow(dtype, &v_pool[dst], s.head_dim, &v[src]);
      }
    }
  }

  PagedKvView kv() const {
    return {k_pool.data(), v_pool.data(), s.block_size, s.num_kv_heads, s.head_dim, dtype};
  }
  AttentionQueries queries(float* out) const {
    const int64_t stride = int64_t{s.num_heads} * s.head_dim;
    return {q.data(),         stride,        out,
            stride,           s.num_queries, s.num_heads,
            s.start_position, block_table,   1.0f / std::sqrt(static_cast<float>(s.head_dim))};
  }

  // Textbook attention on the contiguous K/V (the cache's values), in double.
  std::vector<float> Naive() const { return Naive(k, v); }
  std::vector<float> Naive(const std::vector<float>& k, const std::vector<float>& v) const {
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
                const Shape& s, KvDType dtype = KvDType::kF32, double tolerance = 2e-5) {
  for (size_t i = 0; i < got.size(); ++i) {
    // Relative past 1: long f32 sums of outputs ~4 round at a few 1e-5.
    ASSERT_NEAR(got[i], want[i], tolerance * std::max(1.0f, std::fabs(want[i])))
        << what << " kv " << KvDTypeName(dtype) << ": heads " << s.num_heads << "/"
        << s.num_kv_heads << " dim " << s.head_dim << " block " << s.block_size << " start "
        << s.start_position << " queries " << s.num_queries << " at " << i;
  }
}

// Every path against textbook attention over the values the cache holds; the kernels
// differ from it only in rounding, whatever the format.
void CheckShape(const Shape& shape, std::mt19937& rng, KvDType dtype = KvDType::kF32,
                double tolerance = 2e-5) {
  Scenario scenario(shape, rng, dtype);
  const std::vector<float> naive = scenario.Naive();
  std::vector<float> ref(naive.size(), NAN);
  reference::PagedAttention(scenario.kv(), scenario.queries(ref.data()));
  ExpectNear(ref, naive, "reference", shape, dtype, tolerance);
  for (SimdLevel level : SupportedSimdLevels()) {
    std::vector<float> out(naive.size(), NAN);
    AttentionQueries queries = scenario.queries(out.data());
    for (int32_t j = 0; j < shape.num_queries; ++j) {
      for (int32_t g = 0; g < shape.num_kv_heads; ++g) {
        PagedAttentionWithLevel(level, scenario.kv(), queries, j, g);
      }
    }
    ExpectNear(out, naive, SimdLevelName(level), shape, dtype, tolerance);
  }
}

constexpr KvDType kAllKvDTypes[] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8,
                                    KvDType::kInt4};

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
    for (KvDType dtype : kAllKvDTypes) CheckShape(shape, rng, dtype);
  }
}

TEST(PagedAttentionTest, OddHeadDimsInEveryFormat) {
  std::mt19937 rng(12);
  for (int32_t head_dim : {1, 7, 17, 33, 50, 95, 513}) {  // 513: past kMaxDecodedDim
    for (KvDType dtype : kAllKvDTypes) CheckShape(Shape{4, 2, head_dim, 5, 37, 4}, rng, dtype);
  }
}

// The quantization error itself, end to end: attention over the cache's values against
// attention over the f32 K/V. Outputs are convex combinations of V rows (|v| ~ 2 sigma
// = 4 here), so each bound is about the format's V error plus what its K error does to
// the softmax weights: bf16 2^-8 relative, f16 2^-11, int8 max|x| / 254 (~0.03 for rows
// of 64 normals with sigma 2), int4 a group's range / 30 (~0.5). The max over 2048
// outputs is several times the rms: a peaked softmax amplifies K errors on the few
// keys that dominate.
TEST(PagedAttentionTest, QuantizedCacheStaysCloseToF32) {
  std::mt19937 rng(13);
  const struct {
    KvDType dtype;
    double max_error, max_rms;  // about 1.5x what seed 13 measures
  } cases[] = {{KvDType::kBF16, 0.05, 0.008}, {KvDType::kF16, 0.01, 0.001},
               {KvDType::kInt8, 0.2, 0.03}, {KvDType::kInt4, 2.5, 0.3}};
  for (const auto& c : cases) {
    const Shape shape{8, 2, 64, 16, 200, 4};
    Scenario scenario(shape, rng, c.dtype);
    const std::vector<float> exact = scenario.Naive(scenario.k_f32, scenario.v_f32);
    const std::vector<float> cached = scenario.Naive();
    double max_error = 0, sum_squares = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      max_error = std::max(max_error, std::fabs(double{cached[i]} - exact[i]));
      sum_squares += (double{cached[i]} - exact[i]) * (double{cached[i]} - exact[i]);
    }
    const double rms = std::sqrt(sum_squares / exact.size());
    std::printf("kv %-4s attention output: max |error| %.5f, rms %.5f\n", KvDTypeName(c.dtype),
                max_error, rms);
    EXPECT_LT(max_error, c.max_error) << KvDTypeName(c.dtype);
    EXPECT_LT(rms, c.max_rms) << KvDTypeName(c.dtype);
  }
}

TEST(PagedAttentionTest, LargeGroupsTakeSeveralPasses) {
  std::mt19937 rng(10);
  // 20 query heads per kv head: passes of 16 and 4.
  for (KvDType dtype : kAllKvDTypes) CheckShape(Shape{40, 2, 16, 4, 30, 3}, rng, dtype);
}

// The batch invariance contract for prefill: a query's output from PagedAttentionQueries
// over any range of a chunk is bit for bit its output alone (PagedAttention, as decode
// computes it), for every format, SIMD level and GQA ratio (20: two head passes; 4 and
// 20 take the int4 decoded-once path), chunk sizes 1..40, in one range and (some sizes)
// two, and starts on, before and after block and key-tile boundaries (a chunk past one
// 128-query tile: FlashTileKernelHeadDimsAndBlockSizes).
// Head dims 64 and 128 in f32, bf16, f16 and int8: at ratio 1 (MHA) a query alone takes
// the portable loop (row ops) and a chunk AttendQueryTileAvx512, which are compared bit
// for bit; at ratios 2 and up the flash kernel takes both, so this checks that its result
// for a (query, head) pair does not depend on the other pairs of its blocks and tiles.
TEST(PagedAttentionTest, QueryTilesMatchSingleQueriesBitForBit) {
  std::mt19937 rng(14);
  constexpr int32_t kMaxChunk = 40;
  const struct {
    int32_t start, block_size;
  } starts[] = {{0, 16}, {15, 16}, {33, 16}, {47, 48}, {64, 5}};
  for (int32_t head_dim : {40, 64, 128}) {
  for (int32_t ratio : {1, 2, 4, 20}) {
    for (const auto& st : starts) {
      for (KvDType dtype : kAllKvDTypes) {
        const bool tile_kernel = head_dim != 40 && dtype != KvDType::kInt4;
        // Dim 40 covers the portable loop in every format; 64 and 128 the tile kernel.
        if (head_dim != 40 && !tile_kernel) continue;
        if (ratio == 2 && !tile_kernel) continue;  // ratio 2 is for the tile kernel's GQA
        const int32_t num_kv_heads = ratio <= 2 ? 2 : 1;
        const Shape shape{ratio * num_kv_heads, num_kv_heads, head_dim, st.block_size,
                          st.start, kMaxChunk};
        Scenario scenario(shape, rng, dtype);
        ASSERT_EQ(AttendQueryTileAvx512Takes(scenario.kv()), tile_kernel) << KvDTypeName(dtype);
        for (SimdLevel level : SupportedSimdLevels()) {
          // At 64 and 128 the levels past kAvx512 run the same attention code (KvRowOpsFor,
          // VecOpsFor), and below it the quantized formats run the portable loop that dim
          // 40 covers.
          const bool same_code = level > SimdLevel::kAvx512;
          const bool portable = dtype != KvDType::kF32 && level < SimdLevel::kAvx512;
          if (head_dim != 40 && (same_code || portable)) continue;
          std::vector<float> alone(scenario.q.size(), NAN);
          const AttentionQueries all = scenario.queries(alone.data());
          for (int32_t j = 0; j < kMaxChunk; ++j)
            for (int32_t g = 0; g < num_kv_heads; ++g)
              PagedAttentionWithLevel(level, scenario.kv(), all, j, g);
          for (int32_t chunk = 1; chunk <= kMaxChunk; ++chunk) {
            // The chunk's queries in one range, and (some sizes) the same chunk split at
            // query `split` into two ranges, as threads may take it.
            const int32_t split = chunk / 3;
            std::vector<float> tiled(scenario.q.size(), NAN), halves(tiled.size(), NAN);
            AttentionQueries queries = scenario.queries(tiled.data());
            queries.num_queries = chunk;
            AttentionQueries split_queries = scenario.queries(halves.data());
            split_queries.num_queries = chunk;
            const bool also_split = chunk % 4 == 3;  // every size would double the time
            if (!also_split) halves = alone;
            for (int32_t g = 0; g < num_kv_heads; ++g) {
              PagedAttentionQueriesWithLevel(level, scenario.kv(), queries, 0, chunk, g);
              if (!also_split) continue;
              PagedAttentionQueriesWithLevel(level, scenario.kv(), split_queries, 0, split, g);
              PagedAttentionQueriesWithLevel(level, scenario.kv(), split_queries, split, chunk, g);
            }
            const size_t size = size_t(chunk) * shape.num_heads * shape.head_dim;
            for (size_t i = 0; i < size; ++i) {
              // memcmp-like: the same bits, NaN never expected.
              ASSERT_EQ(std::bit_cast<uint32_t>(tiled[i]), std::bit_cast<uint32_t>(alone[i]))
                  << KvDTypeName(dtype) << " " << SimdLevelName(level) << " dim " << head_dim
                  << " ratio " << ratio
                  << " start " << st.start << " block " << st.block_size << " chunk " << chunk
                  << " at " << i;
              ASSERT_EQ(std::bit_cast<uint32_t>(halves[i]), std::bit_cast<uint32_t>(alone[i]))
                  << KvDTypeName(dtype) << " " << SimdLevelName(level) << " split " << split
                  << " chunk " << chunk << " at " << i;
            }
          }
        }
      }
    }
  }
  }
}

// Contexts below, at and across key-partition boundaries (kAttentionPartitionTokens).
constexpr int32_t kSplitContexts[] = {1, 511, 512, 513, 1025, 4097};

// Flash-decoding (PagedDecodeAttention on pools of 1-3 threads) against the scalar
// reference (kernels/reference: double scores, two-pass softmax over the cache's
// decoded rows) on fresh random inputs, for every format, MHA and GQA (4 and 8 heads per
// kv head, which at head_dim 64 / 128 take the AVX-512 tile kernel; 20: two head passes),
// the decode query at the end of each context.
TEST(PagedAttentionTest, SplitDecodeMatchesReference) {
  std::mt19937 rng(21);
  ThreadPool pool(3);
  const struct {
    int32_t num_heads, num_kv_heads, head_dim, block_size;
  } layouts[] = {{4, 4, 64, 16}, {16, 2, 64, 16}, {8, 2, 128, 16}, {20, 1, 40, 48}};
  for (const auto& l : layouts) {
    for (int32_t context : kSplitContexts) {
      for (KvDType dtype : kAllKvDTypes) {
        const Shape shape{l.num_heads, l.num_kv_heads, l.head_dim, l.block_size, context - 1, 1};
        Scenario scenario(shape, rng, dtype);
        std::vector<float> ref(scenario.q.size(), NAN), out(ref.size(), NAN);
        reference::PagedAttention(scenario.kv(), scenario.queries(ref.data()));
        std::vector<float> partials(AttentionPartialsFloats(l.num_heads, l.head_dim, context), NAN);
        PagedDecodeAttention(pool, scenario.kv(), scenario.queries(out.data()), 0, partials.data());
        ExpectNear(out, ref, "split decode", shape, dtype);
      }
    }
  }
}

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want, const char* what,
                    KvDType dtype, SimdLevel level, int32_t context) {
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << what << " " << KvDTypeName(dtype) << " " << SimdLevelName(level) << " context "
        << context << " at " << i;
  }
}

// The split's invariance: a decode's output is bit for bit the same on pools of 1, 2 and
// 3 threads, with its partitions computed in reverse order, as PagedAttention computes
// it unsplit, and as a prefill chunk computes the same position (PagedAttentionQueries
// over queries that straddle the partition boundaries), for every format and SIMD
// level. Head dims 64 and 128 in f32, bf16, f16 and int8: MHA (4/4) runs the prefill
// through AttendQueryTileAvx512 against the row ops' decode; GQA (8/2, 8/4) runs both
// through the flash kernel; dim 40 and int4 the portable loop.
TEST(PagedAttentionTest, SplitDecodeIsBitIdenticalAcrossThreadsAndPaths) {
  std::mt19937 rng(22);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  constexpr int32_t kChunk = 20;  // prefill queries ending at the decode's position
  const struct {
    int32_t num_heads, num_kv_heads, head_dim, block_size;
  } layouts[] = {{4, 4, 64, 16}, {8, 2, 64, 16}, {8, 4, 128, 16}, {20, 1, 40, 48}};
  for (const auto& l : layouts) {
    for (int32_t context : {513, 1030, 4097}) {
      for (KvDType dtype : kAllKvDTypes) {
        const Shape shape{l.num_heads, l.num_kv_heads, l.head_dim, l.block_size,
                          context - kChunk, kChunk};
        Scenario scenario(shape, rng, dtype);
        const int32_t last = kChunk - 1;  // the decode: query `last`, keys [0, context)
        const size_t row = size_t(l.num_heads) * l.head_dim;
        for (SimdLevel level : SupportedSimdLevels()) {
          std::vector<float> whole(scenario.q.size(), NAN), prefill(whole.size(), NAN);
          const AttentionQueries whole_q = scenario.queries(whole.data());
          const AttentionQueries prefill_q = scenario.queries(prefill.data());
          for (int32_t g = 0; g < l.num_kv_heads; ++g) {
            PagedAttentionWithLevel(level, scenario.kv(), whole_q, last, g);
            PagedAttentionQueriesWithLevel(level, scenario.kv(), prefill_q, 0, kChunk, g);
          }
          const std::vector<float> want(whole.begin() + last * row, whole.end());
          ExpectSameBits({prefill.begin() + last * row, prefill.end()}, want, "prefill", dtype,
                         level, context);
          std::vector<float> partials(AttentionPartialsFloats(l.num_heads, l.head_dim, context));
          for (ThreadPool& pool : pools) {
            std::vector<float> out(scenario.q.size(), NAN);
            PagedDecodeAttentionWithLevel(level, pool, scenario.kv(), scenario.queries(out.data()),
                                          last, partials.data());
            ExpectSameBits({out.begin() + last * row, out.end()}, want, "split", dtype, level,
                           context);
          }
          std::vector<float> reversed(scenario.q.size(), NAN);
          const AttentionQueries reversed_q = scenario.queries(reversed.data());
          std::fill(partials.begin(), partials.end(), NAN);
          for (int32_t g = l.num_kv_heads - 1; g >= 0; --g) {
            for (int32_t p = NumAttentionPartitions(context) - 1; p >= 0; --p)
              PagedAttentionPartitionWithLevel(level, scenario.kv(), reversed_q, last, g, p,
                                               partials.data());
          }
          for (int32_t g = 0; g < l.num_kv_heads; ++g)
            MergeAttentionPartitionsWithLevel(level, scenario.kv(), reversed_q, last, g,
                                              partials.data());
          ExpectSameBits({reversed.begin() + last * row, reversed.end()}, want, "reversed", dtype,
                         level, context);
        }
      }
    }
  }
}

// The AVX-512 flash tile kernel takes grouped heads at every head dim that is a multiple
// of 16 up to kAttentionTileMaxHeadDim (MLA's 576-wide latent rows included): against textbook
// attention on fresh inputs, at dims that exercise its one-piece value passes (16, 48,
// 80) and its longest rows; its key tiles are aligned positions, not blocks, so the
// same K/V in blocks of 1, 5, 16 or 48 tokens give the same bits; and a chunk longer
// than one query tile (kMaxPagedAttentionQueryTile) gives each query its bits alone.
TEST(PagedAttentionTest, FlashTileKernelHeadDimsAndBlockSizes) {
  std::mt19937 rng(23);
  for (int32_t head_dim : {16, 48, 80, 576}) {
    for (KvDType dtype : kAllKvDTypes) {
      if (dtype == KvDType::kInt4) continue;
      // Rows of 576 products round more: every path, the portable one too, lands a few
      // 1e-5 from the double result (scores ~ N(0, 16) here, so weights amplify them).
      const int32_t num_heads = head_dim == 576 ? 16 : 4;
      CheckShape(Shape{num_heads, head_dim == 576 ? 1 : 2, head_dim, 16, 45, 30}, rng, dtype,
                 head_dim == 576 ? 6e-5 : 2e-5);
    }
  }
  for (int32_t head_dim : {64, 128}) {
    for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
      std::vector<float> first;
      constexpr int32_t kChunk = kMaxPagedAttentionQueryTile + 22;
      for (int32_t block_size : {16, 1, 5, 48}) {
        std::mt19937 same(100 + head_dim);  // the same K, V and q for every block size
        Scenario scenario(Shape{8, 2, head_dim, block_size, 600, kChunk}, same, dtype);
        std::vector<float> out(scenario.q.size(), NAN);
        const AttentionQueries queries = scenario.queries(out.data());
        ASSERT_TRUE(AttendQueryTileFlashAvx512Takes(scenario.kv(), queries));
        if (DetectedSimdLevel() < SimdLevel::kAvx512) GTEST_SKIP() << "no AVX-512 on this CPU";
        for (int32_t g = 0; g < 2; ++g)
          PagedAttentionQueriesWithLevel(SimdLevel::kAvx512, scenario.kv(), queries, 0, kChunk, g);
        if (first.empty()) {
          first = out;
          std::vector<float> alone(out.size(), NAN);
          const AttentionQueries alone_q = scenario.queries(alone.data());
          for (int32_t j = 0; j < kChunk; ++j)
            for (int32_t g = 0; g < 2; ++g)
              PagedAttentionWithLevel(SimdLevel::kAvx512, scenario.kv(), alone_q, j, g);
          ExpectSameBits(out, alone, "chunk vs alone", dtype, SimdLevel::kAvx512, kChunk);
        }
        ExpectSameBits(out, first, "block size", dtype, SimdLevel::kAvx512, block_size);
      }
    }
  }
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
