#include "model/bert_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

namespace surge {
namespace {

using ::testing::HasSubstr;
constexpr char kMiniLm[] = "models/all-MiniLM-L6-v2";

TEST(BertKernelsTest, GeluErfMatchesStdErf) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.001f) x.push_back(v);
  std::vector<float> y = x;
  GeluErf(y.data(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = x[i] * 0.5 * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
    ASSERT_NEAR(y[i], want, 2e-6 * std::max(1.0, std::abs(want))) << "x = " << x[i];
  }
}

TEST(BertKernelsTest, LayerNormRows) {
  const std::vector<float> x = {1, 2, 3, 4, -1, -1, -1, -1};
  const std::vector<float> weight = {1, 2, 1, 1}, bias = {0, 0, 1, 0};
  std::vector<float> y(8);
  LayerNormRows(x.data(), weight.data(), bias.data(), 2, 4, 1e-12f, y.data());
  const float s = 1.0f / std::sqrt(1.25f);
  EXPECT_NEAR(y[0], -1.5f * s, 1e-5);
  EXPECT_NEAR(y[1], 2 * -0.5f * s, 1e-5);
  EXPECT_NEAR(y[2], 0.5f * s + 1, 1e-5);
  EXPECT_NEAR(y[4], 0, 1e-5);  // a constant row: all bias
  EXPECT_NEAR(y[6], 1, 1e-5);
}

TEST(BertConfigTest, ParsesAndRefuses) {
  const std::string ok = R"({"model_type": "bert", "hidden_size": 32, "intermediate_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64})";
  StatusOr<BertConfig> config = ParseBertConfig(ok, "c.json");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->model.head_dim, 8);
  EXPECT_TRUE(config->model.is_encoder);
  EXPECT_EQ(config->max_seq_length, 64);
  EXPECT_THAT(ParseBertConfig(R"({"hidden_size": 32})", "c.json").status().ToString(), HasSubstr("intermediate_size"));
  std::string relu = ok;
  relu.insert(1, R"("hidden_act": "relu", )");
  EXPECT_THAT(ParseBertConfig(relu, "c.json").status().ToString(), HasSubstr("hidden_act 'relu'"));
}

TEST(BertModelTest, MiniLmConfigFromSentenceTransformersFiles) {
  if (!std::filesystem::exists(kMiniLm)) GTEST_SKIP() << kMiniLm << " not installed (scripts/setup.sh)";
  StatusOr<BertConfig> config = LoadBertConfig(kMiniLm);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(IsBertDirectory(kMiniLm));
  EXPECT_FALSE(IsBertDirectory("models/stories260K"));
  EXPECT_EQ(config->pooling, EncoderPooling::kMean);
  EXPECT_TRUE(config->normalize);
  EXPECT_EQ(config->max_seq_length, 256);
  EXPECT_EQ(config->model.num_layers, 6);
}

// A sequence's rows do not depend on what else is in the batch.
TEST(BertModelTest, MiniLmBatchInvariant) {
  if (!std::filesystem::exists(kMiniLm)) GTEST_SKIP() << kMiniLm << " not installed (scripts/setup.sh)";
  ThreadPool pool(2);
  StatusOr<std::unique_ptr<BertModel>> model = BertModel::Load(kMiniLm, &pool);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int64_t h = (*model)->config().hidden_size;
  KvStorage kv((*model)->kv_layout(16), 1);
  std::mt19937 rng(35);
  std::vector<int32_t> a = {101}, b = {101};
  for (int i = 0; i < 9; ++i) a.push_back(1000 + static_cast<int32_t>(rng() % 20000));
  for (int i = 0; i < 30; ++i) b.push_back(1000 + static_cast<int32_t>(rng() % 20000));
  a.push_back(102);
  b.push_back(102);
  auto run = [&](const std::vector<std::vector<int32_t>>& inputs) {
    std::vector<int32_t> ids, rows;
    std::vector<SequenceChunk> chunks;
    for (const auto& input : inputs) {
      chunks.push_back({static_cast<int32_t>(ids.size()), static_cast<int32_t>(input.size()), 0, {}});
      ids.insert(ids.end(), input.begin(), input.end());
    }
    for (int32_t i = 0; i < static_cast<int32_t>(ids.size()); ++i) rows.push_back(i);
    std::vector<float> hidden(rows.size() * h);
    ForwardBatch batch{ids, chunks, {}, rows};
    (*model)->Run(batch, kv, {}, hidden);
    return hidden;
  };
  const std::vector<float> alone = run({a});
  const std::vector<float> together = run({b, a});
  ASSERT_EQ(together.size(), (a.size() + b.size()) * h);
  for (size_t i = 0; i < alone.size(); ++i) ASSERT_EQ(alone[i], together[b.size() * h + i]) << i;
  for (float v : alone) ASSERT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace surge
