#include "kernels/kv_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/weight_codec.h"

namespace surge {
namespace {

constexpr KvDType kAll[] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8,
                            KvDType::kInt4};
constexpr int32_t kDims[] = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 40, 47, 64, 80, 95, 128, 129, 256};

TEST(KvCodecTest, RowBytes) {
  EXPECT_EQ(KvRowBytes(KvDType::kF32, 64), 256);
  EXPECT_EQ(KvRowBytes(KvDType::kBF16, 64), 128);
  EXPECT_EQ(KvRowBytes(KvDType::kF16, 7), 16);     // 14 + pad
  EXPECT_EQ(KvRowBytes(KvDType::kInt8, 64), 68);   // f32 scale + 64 codes
  EXPECT_EQ(KvRowBytes(KvDType::kInt8, 5), 12);    // f32 scale + 5 codes + pad
  EXPECT_EQ(KvRowBytes(KvDType::kInt4, 64), 40);   // 2 x (f16 scale, f16 min) + 32 bytes
  EXPECT_EQ(KvRowBytes(KvDType::kInt4, 128), 80);  // 5 bits per value
  EXPECT_EQ(KvRowBytes(KvDType::kInt4, 33), 40);   // a partial group takes a whole one
  for (KvDType dtype : kAll)
    for (int32_t n : kDims) EXPECT_EQ(KvRowBytes(dtype, n) % 4, 0) << KvDTypeName(dtype) << n;
}

TEST(KvCodecTest, ParsesNames) {
  for (KvDType dtype : kAll) EXPECT_EQ(*ParseKvDType(KvDTypeName(dtype)), dtype);
  EXPECT_EQ(*ParseKvDType("auto"), KvDType::kF16);
  EXPECT_EQ(ParseKvDType("fp8").status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ParseKvDType("int3").status().message().find("int3"), std::string::npos);
}

std::vector<float> RandomRow(std::mt19937& rng, int32_t n, int kind) {
  std::normal_distribution<float> dist;
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  if (kind == 1) std::fill(x.begin(), x.end(), 0.0f);
  if (kind == 2) std::fill(x.begin(), x.end(), -1.25f);                // constant: scale 0
  if (kind == 3) for (float& v : x) v *= 1e5f;                         // past f16's range
  if (kind == 4) for (float& v : x) v *= 1e-6f;                        // f16 subnormals
  if (kind == 5) for (float& v : x) v = v * 3.0f + 40.0f;             // offset (int4 min)
  if (kind == 6 && n > 3) x[n / 2] = 50.0f;                            // an outlier
  return x;
}

// The documented per-element error of each format (DequantizeKvRow vs the input).
double ErrorBound(KvDType dtype, const std::vector<float>& x, int32_t i) {
  const float clamped = std::clamp(x[i], -65504.0f, 65504.0f);
  switch (dtype) {
    case KvDType::kF32:
      return 0;
    case KvDType::kBF16:
      return std::ldexp(std::fabs(x[i]), -8);
    case KvDType::kF16:
      return std::fabs(x[i] - clamped) + std::ldexp(std::fabs(clamped), -11) + 0x1p-25;
    case KvDType::kInt8: {
      float amax = 0;
      for (float v : x) amax = std::max(amax, std::fabs(v));
      return amax / 254.0 * (1 + 0x1p-14);
    }
    case KvDType::kInt4: {
      const int32_t begin = i / kKvInt4GroupSize * kKvInt4GroupSize;
      const int32_t end = std::min<int32_t>(begin + kKvInt4GroupSize, x.size());
      float lo = x[begin], hi = x[begin];
      for (int32_t j = begin; j < end; ++j) lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
      lo = std::clamp(lo, -65504.0f, 65504.0f), hi = std::clamp(hi, -65504.0f, 65504.0f);
      // Half a step of a scale rounded up to f16, plus the min rounded down to f16.
      return std::fabs(x[i] - clamped) + (hi - lo) / 30.0 * (1 + 0x1p-9) +
             std::ldexp(std::max(std::fabs(lo), std::fabs(hi)), -10) +
             0x1p-20;  // f16 subnormal steps (2^-24) of min and of 15 x scale
    }
  }
  return 0;
}

TEST(KvCodecTest, RoundTripWithinTheFormatsBound) {
  std::mt19937 rng(1);
  for (KvDType dtype : kAll) {
    for (int32_t n : kDims) {
      for (int kind = 0; kind < 7; ++kind) {
        const std::vector<float> x = RandomRow(rng, n, kind);
        std::vector<uint8_t> row(KvRowBytes(dtype, n));
        std::vector<float> back(n);
        QuantizeKvRow(dtype, x.data(), n, row.data());
        DequantizeKvRow(dtype, row.data(), n, back.data());
        for (int32_t i = 0; i < n; ++i) {
          ASSERT_LE(std::fabs(double{back[i]} - x[i]), ErrorBound(dtype, x, i))
              << KvDTypeName(dtype) << " n " << n << " kind " << kind << " at " << i;
        }
      }
    }
  }
}

// Every level's quantizer writes the scalar definition's bytes, padding included.
TEST(KvCodecTest, EveryLevelQuantizesBitExactly) {
  std::mt19937 rng(2);
  for (SimdLevel level : SupportedSimdLevels()) {
    for (KvDType dtype : kAll) {
      for (int32_t n : kDims) {
        for (int kind = 0; kind < 7; ++kind) {
          const std::vector<float> x = RandomRow(rng, n, kind);
          const int64_t bytes = KvRowBytes(dtype, n);
          std::vector<uint8_t> want(bytes), got(bytes, 0xab);
          QuantizeKvRow(dtype, x.data(), n, want.data());
          KvRowOpsFor(level, dtype).quantize(x.data(), n, got.data());
          ASSERT_EQ(got, want) << SimdLevelName(level) << " " << KvDTypeName(dtype) << " n " << n
                               << " kind " << kind;
        }
      }
    }
  }
}

// dot and axpy of every level against double arithmetic on the decoded row: they may
// round differently, never decode differently. The row sits at an odd offset and is
// followed by nothing (a read past its end would show up under ASan/valgrind).
TEST(KvCodecTest, EveryLevelDotAndAxpyMatchTheDecodedRow) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  for (SimdLevel level : SupportedSimdLevels()) {
    for (KvDType dtype : kAll) {
      const KvRowOps& ops = KvRowOpsFor(level, dtype);
      for (int32_t n : kDims) {
        const std::vector<float> x = RandomRow(rng, n, 0);
        std::vector<float> q(n), y(n), decoded(n);
        for (float& v : q) v = dist(rng);
        for (float& v : y) v = dist(rng);
        std::vector<uint8_t> row(KvRowBytes(dtype, n));
        QuantizeKvRow(dtype, x.data(), n, row.data());
        DequantizeKvRow(dtype, row.data(), n, decoded.data());
        double dot = 0, magnitude = 0;
        for (int32_t i = 0; i < n; ++i) {
          dot += double{q[i]} * decoded[i];
          magnitude += std::fabs(double{q[i]} * decoded[i]);
        }
        const char* what = KvDTypeName(dtype);
        EXPECT_NEAR(ops.dot(q.data(), row.data(), n), dot, 1e-6 * magnitude + 1e-30)
            << SimdLevelName(level) << " " << what << " n " << n;
        std::vector<float> got = y;
        const float a = dist(rng);
        ops.axpy(a, row.data(), got.data(), n);
        for (int32_t i = 0; i < n; ++i) {
          const double want = y[i] + double{a} * decoded[i];
          ASSERT_NEAR(got[i], want, 1e-6 * (std::fabs(y[i]) + std::fabs(a * decoded[i])))
              << SimdLevelName(level) << " " << what << " n " << n << " at " << i;
        }
      }
    }
  }
}

// dot_rows / axpy_rows are dot / axpy row by row, bit for bit: paged attention takes the
// batched ops for every batch shape, so this is what keeps its results batch-invariant.
TEST(KvCodecTest, RowBatchesAreRowByRowBitForBit) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  constexpr int32_t kRows = 33;
  for (SimdLevel level : SupportedSimdLevels()) {
    for (KvDType dtype : kAll) {
      const KvRowOps& ops = KvRowOpsFor(level, dtype);
      for (int32_t n : kDims) {
        const int64_t stride = KvRowBytes(dtype, n) + 4;  // rows not packed back to back
        std::vector<uint8_t> rows(kRows * stride, 0xff);  // the gaps are NaN poison
        std::vector<float> x(n), q(n), a(kRows), y(n);
        for (int32_t t = 0; t < kRows; ++t) {
          for (float& v : x) v = dist(rng);
          ops.quantize(x.data(), n, &rows[t * stride]);
          a[t] = dist(rng);
        }
        for (float& v : q) v = dist(rng);
        for (float& v : y) v = dist(rng);
        for (int32_t num_rows : {1, 2, 7, kRows}) {
          const float scale = 0.125f + dist(rng) * dist(rng);
          std::vector<float> scores(num_rows), want_y = y, got_y = y;
          ops.dot_rows(q.data(), rows.data(), stride, num_rows, n, scale, scores.data());
          ops.axpy_rows(a.data(), rows.data(), stride, num_rows, got_y.data(), n);
          for (int32_t t = 0; t < num_rows; ++t) {
            const float want = ops.dot(q.data(), &rows[t * stride], n) * scale;
            ASSERT_EQ(std::bit_cast<uint32_t>(scores[t]), std::bit_cast<uint32_t>(want))
                << SimdLevelName(level) << " " << KvDTypeName(dtype) << " n " << n << " row " << t;
            ops.axpy(a[t], &rows[t * stride], want_y.data(), n);
          }
          ASSERT_EQ(0, std::memcmp(got_y.data(), want_y.data(), 4 * size_t(n)))
              << SimdLevelName(level) << " " << KvDTypeName(dtype) << " n " << n << " rows "
              << num_rows;
        }
      }
    }
  }
}

}  // namespace
}  // namespace surge
