// Goldens of the bundled stories260K model through the engine, produced by llama2.c's
// run.c and an independent PyTorch forward: prompt ids, 128 greedy ids, top-5 logits,
// decoded text. The engine runs each request alone; a recording executor keeps the
// logits of every forward pass, so each step's logits are checked, not just the tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

using testing_util::Drain;
using testing_util::RequestResult;

constexpr char kModelDir[] = "models/stories260K";

// Runs `model` and keeps a copy of every logits row it produced, in order.
class RecordingExecutor final : public ModelExecutor {
 public:
  explicit RecordingExecutor(ModelExecutor& model) : model_(model) {}
  const ModelConfig& config() const override { return model_.config(); }
  KvLayout kv_layout(int32_t block_size, KvDType dtype) const override {
    return model_.kv_layout(block_size, dtype);
  }
  void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
           std::span<float> hidden) override {
    model_.Run(batch, kv, logits, hidden);
    const size_t vocab = static_cast<size_t>(config().vocab_size);
    for (size_t row = 0; row < batch.logits_rows.size(); ++row) {
      rows_.emplace_back(logits.begin() + row * vocab, logits.begin() + (row + 1) * vocab);
    }
  }
  int64_t linear_weight_bytes() const override { return model_.linear_weight_bytes(); }
  std::string linear_weight_formats() const override { return model_.linear_weight_formats(); }

  // Read only while the engine is idle.
  std::vector<std::vector<float>>& rows() { return rows_; }

 private:
  ModelExecutor& model_;
  std::vector<std::vector<float>> rows_;  // [num_rows][vocab_size]
};

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

  static std::unique_ptr<Engine> StartEngine(ModelExecutor& model, int32_t block_size = 16) {
    EngineOptions options;
    options.block_size = block_size;
    options.kv_cache_bytes = int64_t{16} << 20;
    options.enable_prefix_caching = false;  // every request computes its whole prompt
    options.check_invariants = true;
    auto engine = Engine::Create(model, *tokenizer_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    (*engine)->Start();
    return std::move(engine).value();
  }

  static EngineRequest Request(std::vector<int32_t> prompt_ids, int32_t max_tokens) {
    EngineRequest request;
    request.prompt_ids = std::move(prompt_ids);
    request.sampling.temperature = 0;
    request.stop.max_tokens = max_tokens;
    return request;
  }

  static std::vector<int32_t> Generate(Engine& engine, EngineRequest request) {
    auto stream = engine.Submit(std::move(request), nullptr);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return {};
    RequestResult result = Drain(**stream);
    EXPECT_TRUE(result.error.ok()) << result.error.ToString();
    return result.choices.at(0).token_ids;
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
  RecordingExecutor recorder(*model_);
  std::unique_ptr<Engine> engine = StartEngine(recorder);
  for (const auto& c : goldens_["cases"]) {
    SCOPED_TRACE("prompt: " + c["prompt"].get<std::string>());
    std::vector<int32_t> prompt_ids = tokenizer_->Encode(c["prompt"].get<std::string>());
    ASSERT_EQ(prompt_ids, c["input_ids"].get<std::vector<int32_t>>());

    recorder.rows().clear();
    // Stops at EOS (2), the tokenizer's, as the goldens did.
    const std::vector<int32_t> output_ids = Generate(*engine, Request(prompt_ids, 128));
    EXPECT_EQ(output_ids, c["output_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(tokenizer_->Decode(output_ids), c["output_text"].get<std::string>());
    // One forward pass per token (the prompt fits one chunk), one sampled row each.
    ASSERT_EQ(recorder.rows().size(), output_ids.size());

    for (const auto& step : c["top5_logits"]) {
      const std::vector<float>& logits = recorder.rows().at(step["step"].get<size_t>());
      std::vector<int32_t> top = TopK(logits, 5);
      for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(top[i], step["top"][i]["id"].get<int32_t>());
        EXPECT_NEAR(logits[top[i]], step["top"][i]["logit"].get<float>(), 1e-4);
      }
    }
  }
  engine->Stop();
}

TEST_F(StoriesGoldenTest, BlockSizeDoesNotChangeGreedyOutput) {
  std::vector<int32_t> prompt_ids = tokenizer_->Encode("Lily and Tom went to the park.");
  std::vector<int32_t> a = Generate(*StartEngine(*model_, /*block_size=*/1), Request(prompt_ids, 64));
  std::vector<int32_t> b = Generate(*StartEngine(*model_, /*block_size=*/32), Request(prompt_ids, 64));
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a, b);
}

TEST_F(StoriesGoldenTest, SeededSamplingIsReproducible) {
  std::unique_ptr<Engine> engine = StartEngine(*model_);
  EngineRequest request = Request(tokenizer_->Encode("Once upon a time"), 48);
  request.sampling.temperature = 1.0;
  request.sampling.top_p = 0.9;
  request.sampling.seed = 1234;
  std::vector<int32_t> a = Generate(*engine, request);
  std::vector<int32_t> b = Generate(*engine, request);
  request.sampling.seed = 99;
  std::vector<int32_t> c = Generate(*engine, request);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST_F(StoriesGoldenTest, RejectsBadRequests) {
  std::unique_ptr<Engine> engine = StartEngine(*model_);
  EXPECT_EQ(engine->Submit(Request({}, 16), nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(engine->Submit(Request({1, 512}, 16), nullptr).status().message().find("outside the vocabulary"),
            std::string::npos);
  EXPECT_NE(engine->Submit(Request({1, 403}, 600), nullptr).status().message().find("context of 512"),
            std::string::npos);
}

}  // namespace
}  // namespace surge
