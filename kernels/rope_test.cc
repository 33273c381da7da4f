#include "kernels/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "kernels/reference/reference.h"

namespace surge {
namespace {

RopeParams Llama31(int64_t head_dim) {
  RopeParams p;
  p.head_dim = head_dim;
  p.theta = 500000.0;
  p.kind = RopeKind::kLlama3;
  p.factor = 8.0;
  p.low_freq_factor = 1.0;
  p.high_freq_factor = 4.0;
  p.original_max_position_embeddings = 8192;
  return p;
}

TEST(RopeTest, InverseFrequenciesMatchTheFormulas) {
  RopeParams linear{64, 10000.0, RopeKind::kLinear, 4.0};
  for (const RopeParams& p : {RopeParams{8, 10000.0}, RopeParams{128, 1e6}, linear, Llama31(128)}) {
    std::vector<float> inv_freq = RopeInvFrequencies(p);
    ASSERT_EQ(static_cast<int64_t>(inv_freq.size()), p.head_dim / 2);
    for (int64_t i = 0; i < p.head_dim / 2; ++i) {
      double want = reference::RopeInvFrequency(p, i);
      EXPECT_NEAR(inv_freq[i], want, 1e-6 * want) << "i=" << i << " theta=" << p.theta;
    }
  }
}

// Llama 3.1's published rule: short wavelengths keep their frequency, wavelengths past
// original_max / low_freq_factor are slowed by `factor`, the band between is blended.
TEST(RopeTest, Llama3ScalingRegions) {
  RopeParams p = Llama31(128);
  RopeParams plain = p;
  plain.kind = RopeKind::kDefault;
  std::vector<float> scaled = RopeInvFrequencies(p), base = RopeInvFrequencies(plain);
  int num_kept = 0, num_divided = 0, num_blended = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    double wavelen = 2 * std::numbers::pi / base[i];
    if (wavelen < 8192 / 4.0) {
      EXPECT_EQ(scaled[i], base[i]);
      ++num_kept;
    } else if (wavelen > 8192 / 1.0) {
      EXPECT_NEAR(scaled[i], base[i] / 8.0, 1e-7 * base[i]);
      ++num_divided;
    } else {
      EXPECT_LT(scaled[i], base[i]);
      EXPECT_GT(scaled[i], base[i] / 8.0);
      ++num_blended;
    }
  }
  EXPECT_GT(num_kept, 0);
  EXPECT_GT(num_divided, 0);
  EXPECT_GT(num_blended, 0);
}

TEST(RopeTest, ApplyMatchesReference) {
  std::mt19937 rng(8);
  std::normal_distribution<float> dist;
  RopeParams linear{64, 10000.0, RopeKind::kLinear, 2.0};
  for (const RopeParams& p :
       {RopeParams{8, 10000.0}, RopeParams{64, 10000.0}, linear, Llama31(128)}) {
    std::vector<float> inv_freq = RopeInvFrequencies(p);
    const int64_t half = p.head_dim / 2, num_heads = 3;
    std::vector<float> cos(half), sin(half);
    for (int64_t position : {0, 1, 5, 17, 100, 1023, 2047}) {
      std::vector<float> x(num_heads * p.head_dim);
      for (float& v : x) v = dist(rng);
      std::vector<float> want = x;
      RopeCosSin(position, inv_freq.data(), half, cos.data(), sin.data());
      ApplyRope(x.data(), num_heads, p.head_dim, cos.data(), sin.data());
      reference::Rope(want.data(), num_heads, p, position);
      // The f32 angle (as in HF) is off by up to half an ulp of position * inv_freq.
      double tolerance = 2e-6 + 8.0 * position * 6e-8;
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_NEAR(x[i], want[i], tolerance) << "position " << position << " i " << i;
      }
    }
  }
}

TEST(RopeTest, PositionZeroIsIdentityAndPairsRotateHalf) {
  RopeParams p{4, 10000.0};
  std::vector<float> inv_freq = RopeInvFrequencies(p);
  float cos[2], sin[2];
  RopeCosSin(0, inv_freq.data(), 2, cos, sin);
  float x[4] = {1, 2, 3, 4};
  ApplyRope(x, 1, 4, cos, sin);
  EXPECT_EQ(x[0], 1);
  EXPECT_EQ(x[3], 4);
  // inv_freq[0] = 1: at position 1 dims 0 and 2 turn by one radian.
  RopeCosSin(1, inv_freq.data(), 2, cos, sin);
  float y[4] = {1, 0, 0, 0};
  ApplyRope(y, 1, 4, cos, sin);
  EXPECT_FLOAT_EQ(y[0], std::cos(1.0f));
  EXPECT_FLOAT_EQ(y[2], std::sin(1.0f));
}

}  // namespace
}  // namespace surge
