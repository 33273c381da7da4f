// Goldens of the bundled stories260K model, produced by llama2.c's run.c and an
// independent PyTorch forward: prompt ids, 128 greedy ids, top-5 logits, decoded text.
#include "engine/generator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/thread_pool.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

constexpr char kModelDir[] = "models/stories260K";

class StoriesGoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pool_ = new ThreadPool(2);
    auto model = Model::Load(kModelDir, pool_);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = model->release();
    auto tokenizer = Tokenizer::FromDirectory(kModelDir);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    tokenizer_ = tokenizer->release();
    std::ifstream in(std::string(kModelDir) + "/goldens.json");
    goldens_ = nlohmann::json::parse(in);
  }
  static void TearDownTestSuite() {
    delete model_;
    delete tokenizer_;
    delete pool_;
  }

  static ThreadPool* pool_;
  static Model* model_;
  static Tokenizer* tokenizer_;
  static nlohmann::json goldens_;
};

ThreadPool* StoriesGoldenTest::pool_ = nullptr;
Model* StoriesGoldenTest::model_ = nullptr;
Tokenizer* StoriesGoldenTest::tokenizer_ = nullptr;
nlohmann::json StoriesGoldenTest::goldens_;

// The ids of the k largest logits, ties to the lower id, as the goldens were sorted.
std::vector<int32_t> TopK(std::span<const float> logits, size_t k) {
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  ids.resize(k);
  return ids;
}

TEST_F(StoriesGoldenTest, GreedyOutputsAndLogitsMatchReference) {
  ASSERT_EQ(goldens_["cases"].size(), 8u);
  for (const auto& c : goldens_["cases"]) {
    SCOPED_TRACE("prompt: " + c["prompt"].get<std::string>());
    std::vector<int32_t> prompt_ids = tokenizer_->Encode(c["prompt"].get<std::string>());
    ASSERT_EQ(prompt_ids, c["input_ids"].get<std::vector<int32_t>>());

    GenerateOptions options;
    options.max_tokens = 128;
    options.sampling.temperature = 0;
    options.stop_token_ids = {2};
    std::vector<std::vector<float>> step_logits;
    Generator generator(*model_, /*block_size=*/16);
    auto result = generator.Generate(prompt_ids, options, [&](int32_t, std::span<const float> logits) {
      step_logits.emplace_back(logits.begin(), logits.end());
      return true;
    });
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->output_ids, c["output_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(tokenizer_->Decode(result->output_ids), c["output_text"].get<std::string>());

    for (const auto& step : c["top5_logits"]) {
      const std::vector<float>& logits = step_logits.at(step["step"].get<size_t>());
      std::vector<int32_t> top = TopK(logits, 5);
      for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(top[i], step["top"][i]["id"].get<int32_t>());
        EXPECT_NEAR(logits[top[i]], step["top"][i]["logit"].get<float>(), 1e-4);
      }
    }
  }
}

TEST_F(StoriesGoldenTest, BlockSizeDoesNotChangeGreedyOutput) {
  std::vector<int32_t> prompt_ids = tokenizer_->Encode("Lily and Tom went to the park.");
  GenerateOptions options;
  options.max_tokens = 64;
  options.sampling.temperature = 0;
  Generator small_blocks(*model_, /*block_size=*/1);
  Generator large_blocks(*model_, /*block_size=*/32);
  auto a = small_blocks.Generate(prompt_ids, options);
  auto b = large_blocks.Generate(prompt_ids, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->output_ids, b->output_ids);
}

TEST_F(StoriesGoldenTest, SeededSamplingIsReproducible) {
  std::vector<int32_t> prompt_ids = tokenizer_->Encode("Once upon a time");
  GenerateOptions options;
  options.max_tokens = 48;
  options.sampling.temperature = 1.0;
  options.sampling.top_p = 0.9;
  options.sampling.seed = 1234;
  Generator generator(*model_);
  auto a = generator.Generate(prompt_ids, options);
  auto b = generator.Generate(prompt_ids, options);
  options.sampling.seed = 99;
  auto c = generator.Generate(prompt_ids, options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->output_ids, b->output_ids);
  EXPECT_NE(a->output_ids, c->output_ids);
}

TEST_F(StoriesGoldenTest, RejectsBadRequests) {
  Generator generator(*model_);
  GenerateOptions options;
  std::vector<int32_t> empty;
  EXPECT_EQ(generator.Generate(empty, options).status().code(), StatusCode::kInvalidArgument);
  std::vector<int32_t> out_of_vocab = {1, 512};
  EXPECT_NE(generator.Generate(out_of_vocab, options).status().message().find("outside the vocabulary"),
            std::string::npos);
  std::vector<int32_t> prompt = {1, 403};
  options.max_tokens = 600;
  EXPECT_NE(generator.Generate(prompt, options).status().message().find("context of 512"),
            std::string::npos);
}

}  // namespace
}  // namespace surge
