// Round trips of the codecs (weight_codec.h) and of PackedWeight, with the error bounds
// the header states asserted element by element.
#include "kernels/weight_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/packed_weight.h"

namespace surge {
namespace {

std::vector<float> RandomVector(std::mt19937& rng, int64_t n, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Bf16Test, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f + 0x1p-8f), 0x3f80);             // tie: down to even
  EXPECT_EQ(FloatToBf16(1.0f + 3 * 0x1p-8f), 0x3f82);         // tie: up to even
  EXPECT_EQ(FloatToBf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);  // above the tie
  EXPECT_EQ(FloatToBf16(-2.5f), 0xc020);
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7f80);  // overflows to inf
  EXPECT_EQ(FloatToBf16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(NAN))));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::bit_cast<float>(0x7f800001u)))));
}

TEST(Bf16Test, RoundTripWithinHalfUlp) {
  std::mt19937 rng(1);
  for (float x : RandomVector(rng, 100000, 10.0f)) {
    const float back = Bf16ToFloat(FloatToBf16(x));
    ASSERT_LE(std::fabs(x - back), 0x1p-8f * std::fabs(x)) << x;
    ASSERT_EQ(FloatToBf16(back), FloatToBf16(x)) << "bf16 values must round-trip exactly";
  }
}

TEST(F16Test, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) continue;  // NaN payloads
    ASSERT_EQ(FloatToF16(F16ToFloat(h)), h) << std::hex << bits;
  }
  EXPECT_EQ(FloatToF16(65520.0f), 0x7c00);  // halfway past the largest half: to inf
  EXPECT_EQ(FloatToF16(65519.0f), 0x7bff);
  EXPECT_TRUE(std::isnan(F16ToFloat(FloatToF16(NAN))));
}

TEST(F16Test, NearestAndDirectedRounding) {
  std::mt19937 rng(2);
  std::vector<float> values = RandomVector(rng, 50000, 1.0f);
  for (float& v : RandomVector(rng, 20000, 1e-5f)) values.push_back(v);  // subnormal halves
  for (float x : values) {
    const float nearest = F16ToFloat(FloatToF16(x));
    const float up = F16ToFloat(FloatToF16Up(x)), down = F16ToFloat(FloatToF16Down(x));
    ASSERT_LE(std::fabs(x - nearest), std::max(0x1p-11f * std::fabs(x), 0x1p-25f)) << x;
    ASSERT_GE(up, x);
    ASSERT_LE(down, x);
    ASSERT_LE(up - down, std::max(0x1p-10f * std::fabs(x), 0x1p-24f)) << x;  // adjacent
  }
}

TEST(Int8RowTest, ErrorWithinHalfAStep) {
  std::mt19937 rng(3);
  for (int64_t n : {1, 7, 64, 1000}) {
    std::vector<float> w = RandomVector(rng, n, 0.05f);
    std::vector<int8_t> q(n);
    const float scale = QuantizeInt8Row(w.data(), n, q.data());
    int max_q = 0;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(w[i] - scale * q[i]), scale / 2 * (1 + 1e-6f)) << i;
      max_q = std::max(max_q, std::abs(int{q[i]}));
    }
    EXPECT_EQ(max_q, 127) << "the largest |w| maps to the end of the range";
  }
  std::vector<float> zeros(5, 0.0f);
  std::vector<int8_t> q(5, 1);
  EXPECT_EQ(QuantizeInt8Row(zeros.data(), 5, q.data()), 0.0f);
  EXPECT_EQ(q, std::vector<int8_t>(5, 0));
}

TEST(ActivationQuantizerTest, ErrorWithinStatedBound) {
  std::mt19937 rng(4);
  for (int64_t n : {1, 3, 17, 768, 4097}) {
    std::vector<float> x = RandomVector(rng, n, 3.0f);
    std::vector<int8_t> q(n);
    const float scale = QuantizeActivationRow(x.data(), n, q.data());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_LE(std::abs(int{q[i]}), 127);
      ASSERT_LE(std::fabs(x[i] - scale * q[i]), scale * (0.5f + 0x1p-15f)) << i;
    }
  }
}

TEST(Int8GroupTest, ErrorWithinHalfAStep) {
  std::mt19937 rng(8);
  for (int64_t n : {1, 5, 32, 64, 128}) {
    const std::vector<float> w = RandomVector(rng, n, 0.05f);
    std::vector<int8_t> q(n);
    const float scale = F16ToFloat(QuantizeInt8Group(w.data(), n, q.data()));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_LE(std::abs(int{q[i]}), 127);
      ASSERT_LE(std::fabs(w[i] - scale * q[i]), scale / 2) << i;
    }
  }
  std::vector<float> zeros(4, 0.0f);
  std::vector<int8_t> q(4, 1);
  EXPECT_EQ(QuantizeInt8Group(zeros.data(), 4, q.data()), 0);
  EXPECT_EQ(q, std::vector<int8_t>(4, 0));
}

TEST(Int4GroupTest, ErrorWithinStatedBound) {
  std::mt19937 rng(5);
  for (int64_t n : {1, 5, 32, 64, 128}) {
    for (float offset : {0.0f, 0.3f, -7.0f}) {
      std::vector<float> w = RandomVector(rng, n, 0.02f);
      for (float& v : w) v += offset;
      std::vector<uint8_t> q(n);
      const Int4Group group = QuantizeInt4Group(w.data(), n, q.data());
      const float lo = *std::min_element(w.begin(), w.end());
      const float hi = *std::max_element(w.begin(), w.end());
      const float bound =
          (hi - lo) / 15 * (1 + 0x1p-9f) + 0x1p-10f * std::max(std::fabs(lo), std::fabs(hi));
      double squared_error = 0;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_LE(q[i], 15);
        const float error = std::fabs(w[i] - DequantizeInt4(group, q[i]));
        ASSERT_LE(error, bound) << "n " << n << " offset " << offset << " at " << i;
        squared_error += double{error} * error;
      }
      // Far better than the worst case: uniform rounding error has RMS step / sqrt(12).
      if (n >= 32) {
        EXPECT_LT(std::sqrt(squared_error / n), (hi - lo) / 15 * 0.45) << n;
      }
    }
  }
  const float same[3] = {0.25f, 0.25f, 0.25f};
  uint8_t q[3];
  const Int4Group constant = QuantizeInt4Group(same, 3, q);
  EXPECT_EQ(DequantizeInt4(constant, q[0]), 0.25f);
}

// Pack + Unpack returns exactly the codec's values, on shapes with partial panels,
// odd K and K not a multiple of the group.
TEST(PackedWeightTest, UnpackMatchesTheCodecs) {
  std::mt19937 rng(6);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {17, 5}, {33, 37}, {16, 130}}) {
    const std::vector<float> w = RandomVector(rng, rows * cols, 0.1f);
    const std::vector<float> f32 = PackedWeight::Pack(w.data(), rows, cols, {}).Unpack();
    EXPECT_EQ(f32, w);
    const std::vector<float> bf16 =
        PackedWeight::Pack(w.data(), rows, cols, {WeightDType::kBF16}).Unpack();
    for (int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(bf16[i], Bf16ToFloat(FloatToBf16(w[i])));
    const PackedWeight int8 = PackedWeight::Pack(w.data(), rows, cols, {WeightDType::kInt8});
    const std::vector<float> int8_values = int8.Unpack();
    std::vector<int8_t> q(cols);
    for (int64_t r = 0; r < rows; ++r) {
      const float scale = QuantizeInt8Row(&w[r * cols], cols, q.data());
      int32_t sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        ASSERT_EQ(int8_values[r * cols + c], scale * q[c]);
        sum += q[c];
      }
      EXPECT_EQ(int8.matrix().row_sums[r], sum);
    }
    for (int32_t group : {32, 64, 128}) {
      const std::vector<float> int8_groups =
          PackedWeight::Pack(w.data(), rows, cols, {WeightDType::kInt8Groups, group}).Unpack();
      const std::vector<float> int4 =
          PackedWeight::Pack(w.data(), rows, cols, {WeightDType::kInt4, group}).Unpack();
      std::vector<int8_t> q8(group);
      std::vector<uint8_t> q4(group);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t g = 0; g * group < cols; ++g) {
          const int64_t n = std::min<int64_t>(group, cols - g * group), at = r * cols + g * group;
          const float scale = F16ToFloat(QuantizeInt8Group(&w[at], n, q8.data()));
          const Int4Group params = QuantizeInt4Group(&w[at], n, q4.data());
          for (int64_t k = 0; k < n; ++k) {
            ASSERT_EQ(int8_groups[at + k], scale * q8[k]);
            ASSERT_EQ(int4[at + k], DequantizeInt4(params, q4[k]));
          }
        }
      }
    }
  }
}

TEST(PackedWeightTest, SizesFollowTheLayout) {
  std::vector<float> w(20 * 100, 0.5f);
  EXPECT_EQ(PackedWeight::Pack(w.data(), 20, 100, {}).size_bytes(), 2 * 16 * 100 * 4);
  EXPECT_EQ(PackedWeight::Pack(w.data(), 20, 100, {WeightDType::kBF16}).size_bytes(),
            2 * 16 * 100 * 2);
  EXPECT_EQ(PackedWeight::Pack(w.data(), 20, 100, {WeightDType::kInt8}).size_bytes(),
            2 * 16 * 100 + 2 * 16 * 8);
  // 100 = 3 groups of 32 + 4: four blocks of 32 * 8 bytes of nibbles + 64 of f16 params.
  EXPECT_EQ(PackedWeight::Pack(w.data(), 20, 100, {WeightDType::kInt4, 32}).size_bytes(),
            2 * 4 * (32 * 8 + 64));
}

}  // namespace
}  // namespace surge
