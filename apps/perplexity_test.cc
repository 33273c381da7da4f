#include "apps/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/model.h"

namespace surge {
namespace {

// A model of 4 tokens that, after token t, gives t + 1 (mod 4) logit ln 3 and the others 0:
// P(next = t + 1) = 3 / 6, any other 1 / 6. Records what it was asked.
class NextTokenModel final : public ModelExecutor {
 public:
  NextTokenModel() { config_.vocab_size = 4; }
  const ModelConfig& config() const override { return config_; }
  KvLayout kv_layout(int32_t block_size, KvDType dtype) const override {
    return {.num_layers = 1, .num_kv_heads = 1, .head_dim = 16, .block_size = block_size, .dtype = dtype};
  }
  void Run(const ForwardBatch& batch, KvStorage&, std::span<float> logits, std::span<float>) override {
    ++num_passes;
    for (const SequenceChunk& chunk : batch.sequences) window_starts.push_back(batch.token_ids[chunk.token_begin]);
    for (size_t i = 0; i < batch.logits_rows.size(); ++i) {
      const int32_t token = batch.token_ids[batch.logits_rows[i]];
      for (int32_t v = 0; v < 4; ++v) logits[i * 4 + v] = v == (token + 1) % 4 ? std::log(3.0f) : 0.0f;
    }
  }
  int64_t linear_weight_bytes() const override { return 0; }
  std::string linear_weight_formats() const override { return "test"; }

  int num_passes = 0;
  std::vector<int32_t> window_starts;

 private:
  ModelConfig config_;
};

TEST(PerplexityTest, PlanFollowsLlamaPerplexity) {
  auto plan = PlanPerplexity(1100, 512);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->num_windows, 2);
  EXPECT_EQ(plan->first_scored, 256);
  EXPECT_EQ(plan->scored_per_window(), 255);
  EXPECT_FALSE(PlanPerplexity(1023, 512).ok());  // fewer than 2 * n_ctx tokens
  auto tiny = PlanPerplexity(100, 2);
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.status().message().find("--context"), std::string::npos);
}

TEST(PerplexityTest, TokenNllIsMinusLogSoftmax) {
  const std::vector<float> logits = {std::log(3.0f), 0, 0, 0};
  EXPECT_NEAR(TokenNll(logits, 0), std::log(2.0), 1e-7);
  EXPECT_NEAR(TokenNll(logits, 3), std::log(6.0), 1e-7);
  const std::vector<float> shifted = {1000 + std::log(3.0f), 1000, 1000, 1000};  // no overflow
  EXPECT_NEAR(TokenNll(shifted, 3), std::log(6.0), 1e-4);
}

// n_ctx 4, 9 tokens: 2 windows (the ninth token unused), each scoring position 2 against
// position 3. Window 0 predicts 2 -> 3 (NLL ln 2), window 1 predicts 2 -> 3 but sees 0
// (NLL ln 6): PPL = exp((ln 2 + ln 6) / 2) = sqrt(12), and the error is
// PPL * sqrt(var / (n - 1)) with var = ((ln 6 - ln 2) / 2)^2, i.e. sqrt(12) * ln 3 / 2.
TEST(PerplexityTest, HandComputedWindows) {
  const std::vector<int32_t> tokens = {0, 1, 2, 3, 1, 1, 2, 0, 2};
  for (int64_t batch_tokens : {4, 8, 100}) {
    NextTokenModel model;
    PerplexityOptions options;
    options.context_tokens = 4;
    options.batch_tokens = batch_tokens;
    std::vector<double> running;
    auto result = EvaluatePerplexity(model, tokens, options, [&](int32_t window, const NllAccumulator& nll) {
      EXPECT_EQ(window, static_cast<int32_t>(running.size()));
      running.push_back(nll.Perplexity());
    });
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->nll.count(), 2);
    EXPECT_NEAR(result->nll.Perplexity(), std::sqrt(12.0), 1e-6);
    EXPECT_NEAR(result->nll.PerplexityError(), std::sqrt(12.0) * std::log(3.0) / 2, 1e-6);
    ASSERT_EQ(running.size(), 2u);
    EXPECT_NEAR(running[0], 2.0, 1e-6);
    EXPECT_EQ(model.num_passes, batch_tokens == 4 ? 2 : 1);
    EXPECT_EQ(model.window_starts, (std::vector<int32_t>{0, 1}));  // no BOS asked for
  }
}

TEST(PerplexityTest, BosReplacesEachWindowsFirstToken) {
  const std::vector<int32_t> tokens = {0, 1, 2, 3, 1, 1, 2, 0};
  NextTokenModel model;
  PerplexityOptions options;
  options.context_tokens = 4;
  options.bos_token_id = 3;
  auto result = EvaluatePerplexity(model, tokens, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(model.window_starts, (std::vector<int32_t>{3, 3}));
  // Scoring still reads the text's own tokens: the same figures as without BOS here.
  EXPECT_NEAR(result->nll.Perplexity(), std::sqrt(12.0), 1e-6);
}

TEST(PerplexityTest, RefusesTokensOutsideTheVocabulary) {
  NextTokenModel model;
  PerplexityOptions options;
  options.context_tokens = 4;
  auto result = EvaluatePerplexity(model, std::vector<int32_t>{0, 1, 2, 3, 4, 1, 2, 3}, options);
  EXPECT_FALSE(result.ok());
}

// On a real model (stories260K), several windows per pass give each window's figures bit
// for bit what one window per pass gives (batch invariance), in every KV dtype.
TEST(PerplexityTest, WindowsPerPassDoNotChangeTheFigure) {
  auto model = Model::Load("models/stories260K", nullptr);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<int32_t> tokens;
  for (int i = 0; i < 200; ++i) tokens.push_back((i * 37 + 11) % 512);
  for (KvDType dtype : {KvDType::kF32, KvDType::kInt4}) {
    PerplexityOptions options;
    options.context_tokens = 40;
    options.kv_dtype = dtype;
    options.bos_token_id = 1;
    options.batch_tokens = 40;
    auto one = EvaluatePerplexity(**model, tokens, options);
    options.batch_tokens = 160;
    auto four = EvaluatePerplexity(**model, tokens, options);
    ASSERT_TRUE(one.ok() && four.ok());
    EXPECT_EQ(four->windows_per_pass, 4);
    EXPECT_EQ(one->nll.count(), 5 * 19);
    EXPECT_TRUE(std::isfinite(one->nll.Perplexity()));
    EXPECT_EQ(one->nll.Perplexity(), four->nll.Perplexity());
  }
}

}  // namespace
}  // namespace surge
