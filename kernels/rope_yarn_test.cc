// YaRN (DeepSeek V2/V3) against tests/data/deepseek_yarn_rope.json, which
// tests/reference/make_yarn_goldens.py writes from the PyTorch reference's rope_tables
// (ctest deepseek_yarn_goldens keeps the file equal to it).
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernels/rope.h"

namespace surge {
namespace {

using Json = nlohmann::json;

Json Goldens() {
  std::ifstream in("tests/data/deepseek_yarn_rope.json");
  EXPECT_TRUE(in.good()) << "run from the repository root";
  return Json::parse(in);
}

RopeParams YarnParams(const Json& g) {
  RopeParams p;
  p.kind = RopeKind::kYarn;
  p.head_dim = g["head_dim"].get<int64_t>();
  p.theta = g["theta"].get<double>();
  p.factor = g["factor"].get<double>();
  p.original_max_position_embeddings = g["original_max_position_embeddings"].get<double>();
  p.beta_fast = g["beta_fast"].get<double>();
  p.beta_slow = g["beta_slow"].get<double>();
  p.mscale = g["mscale"].get<double>();
  p.mscale_all_dim = g["mscale_all_dim"].get<double>();
  return p;
}

TEST(RopeYarnTest, GoldensCoverEveryCase) {
  Json goldens = Goldens();
  for (const char* name : {"deepseek-v2-lite-tiny", "deepseek-v3-tiny", "deepseek-v3",
                           "deepseek-v2-lite", "yarn-defaults", "yarn-clamped"}) {
    EXPECT_TRUE(goldens.contains(name)) << name;
  }
}

TEST(RopeYarnTest, CorrectionRangeAndScalesMatchReference) {
  const Json goldens = Goldens();  // outlives items()' proxy
  for (const auto& [name, g] : goldens.items()) {
    const RopeParams p = YarnParams(g);
    const YarnRange range = YarnCorrectionRange(p);
    EXPECT_DOUBLE_EQ(range.low, g["correction_low"].get<double>()) << name;
    EXPECT_DOUBLE_EQ(range.high, g["correction_high"].get<double>()) << name;
    EXPECT_NEAR(RopeCosSinScale(p), g["cos_sin_scale"].get<double>(), 1e-12) << name;
    const double softmax =
        std::pow(g["q_head_dim"].get<double>(), -0.5) * RopeSoftmaxScaleFactor(p);
    EXPECT_NEAR(softmax, g["softmax_scale"].get<double>(), 1e-12) << name;
  }
}

TEST(RopeYarnTest, InverseFrequenciesMatchReference) {
  const Json goldens = Goldens();  // outlives items()' proxy
  for (const auto& [name, g] : goldens.items()) {
    const std::vector<float> inv_freq = RopeInvFrequencies(YarnParams(g));
    const std::vector<double> want = g["inv_freq"].get<std::vector<double>>();
    ASSERT_EQ(inv_freq.size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      // Same f32 operations in the same order: at most an ulp from pow's rounding.
      EXPECT_NEAR(inv_freq[i], want[i], 2e-7 * want[i]) << name << " i=" << i;
    }
  }
}

// cos/sin times RopeCosSinScale, as the attention will use them.
TEST(RopeYarnTest, ScaledCosSinMatchReference) {
  const Json goldens = Goldens();  // outlives items()' proxy
  for (const auto& [name, g] : goldens.items()) {
    const RopeParams p = YarnParams(g);
    const std::vector<float> inv_freq = RopeInvFrequencies(p);
    const int64_t half = p.head_dim / 2;
    const double scale = RopeCosSinScale(p);
    std::vector<float> cos(half), sin(half);  // [half]
    const std::vector<int64_t> positions = g["positions"].get<std::vector<int64_t>>();
    for (size_t r = 0; r < positions.size(); ++r) {
      RopeCosSin(positions[r], inv_freq.data(), half, cos.data(), sin.data());
      for (int64_t i = 0; i < half; ++i) {
        // The f32 angle may differ by an ulp of position * inv_freq.
        const double tolerance = 2e-6 + 8.0 * positions[r] * 6e-8 * inv_freq[i];
        EXPECT_NEAR(cos[i] * scale, g["cos"][r][i].get<double>(), tolerance)
            << name << " position " << positions[r] << " i " << i;
        EXPECT_NEAR(sin[i] * scale, g["sin"][r][i].get<double>(), tolerance)
            << name << " position " << positions[r] << " i " << i;
      }
    }
  }
}

// DeepSeek's yarn_get_mscale and the published V3 numbers written out by hand.
TEST(RopeYarnTest, MscaleFormula) {
  EXPECT_EQ(YarnMscale(1.0, 1.0), 1.0);
  EXPECT_EQ(YarnMscale(0.5, 1.0), 1.0);
  EXPECT_NEAR(YarnMscale(40.0, 1.0), 0.1 * std::log(40.0) + 1.0, 1e-15);
  RopeParams v3;
  v3.kind = RopeKind::kYarn;
  v3.head_dim = 64;
  v3.factor = 40;
  v3.original_max_position_embeddings = 4096;
  v3.mscale = v3.mscale_all_dim = 1.0;
  EXPECT_EQ(RopeCosSinScale(v3), 1.0);
  EXPECT_NEAR(RopeSoftmaxScaleFactor(v3), std::pow(1.0 + 0.1 * std::log(40.0), 2), 1e-15);
  v3.mscale_all_dim = 0;  // not set: no softmax correction, cos/sin carry mscale
  EXPECT_EQ(RopeSoftmaxScaleFactor(v3), 1.0);
  EXPECT_NEAR(RopeCosSinScale(v3), 1.0 + 0.1 * std::log(40.0), 1e-15);
  v3.kind = RopeKind::kLlama3;  // other kinds: no scales
  EXPECT_EQ(RopeCosSinScale(v3), 1.0);
  EXPECT_EQ(RopeSoftmaxScaleFactor(v3), 1.0);
}

}  // namespace
}  // namespace surge
