// DeepSeek checkpoints written by tools/make_tiny_model.py: their configs parse with the
// preset's values and the reference's softmax scale, they load with MLA's latent KV
// layout (FP8 ones only with their scales), and config errors are reported first.
// (Logits against the PyTorch reference: tests/reference/test_deepseek_vs_reference.py.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "model/config.h"
#include "model/model.h"
#include "model/model_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

// Per process: ctest runs each test in its own process, several at once.
std::string Temp(const std::string& name) {
  return testing::TempDir() + "/surge_ds_" + std::to_string(getpid()) + "_" + name;
}

std::string MakeTiny(const std::string& name, const std::string& flags) {
  return MakeTinyModel(Temp(name), flags);
}

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  CHECK(in.good()) << path;
  return Json::parse(in);
}

class DeepseekModelTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    v2_ = new std::string(MakeTiny("v2", "--preset deepseek-v2-lite-tiny"));
    v3_ = new std::string(MakeTiny("v3", "--preset deepseek-v3-tiny"));
    v3_fp8_ = new std::string(MakeTiny("v3_fp8", "--preset deepseek-v3-tiny --fp8"));
  }
  static void TearDownTestSuite() {
    for (std::string** dir : {&v2_, &v3_, &v3_fp8_}) {
      std::filesystem::remove_all(**dir);
      delete *dir;
      *dir = nullptr;
    }
  }
  static std::string* v2_;
  static std::string* v3_;
  static std::string* v3_fp8_;
};
std::string* DeepseekModelTest::v2_ = nullptr;
std::string* DeepseekModelTest::v3_ = nullptr;
std::string* DeepseekModelTest::v3_fp8_ = nullptr;

// Every MLA/MoE key of the written config.json lands in the parsed config.
void ExpectMatchesJson(const ModelConfig& c, const Json& j) {
  EXPECT_EQ(c.model_type, j["model_type"].get<std::string>());
  EXPECT_EQ(c.mla->q_lora_rank, j["q_lora_rank"].is_null() ? 0 : j["q_lora_rank"].get<int64_t>());
  EXPECT_EQ(c.mla->kv_lora_rank, j["kv_lora_rank"].get<int64_t>());
  EXPECT_EQ(c.mla->qk_nope_head_dim, j["qk_nope_head_dim"].get<int64_t>());
  EXPECT_EQ(c.mla->qk_rope_head_dim, j["qk_rope_head_dim"].get<int64_t>());
  EXPECT_EQ(c.mla->v_head_dim, j["v_head_dim"].get<int64_t>());
  EXPECT_EQ(c.moe->n_routed_experts, j["n_routed_experts"].get<int64_t>());
  EXPECT_EQ(c.moe->n_shared_experts, j["n_shared_experts"].get<int64_t>());
  EXPECT_EQ(c.moe->num_experts_per_tok, j["num_experts_per_tok"].get<int64_t>());
  EXPECT_EQ(c.moe->moe_intermediate_size, j["moe_intermediate_size"].get<int64_t>());
  EXPECT_EQ(c.moe->n_group, j["n_group"].get<int64_t>());
  EXPECT_EQ(c.moe->topk_group, j["topk_group"].get<int64_t>());
  EXPECT_EQ(c.moe->norm_topk_prob, j["norm_topk_prob"].get<bool>());
  EXPECT_DOUBLE_EQ(c.moe->routed_scaling_factor, j["routed_scaling_factor"].get<double>());
  EXPECT_DOUBLE_EQ(c.rope_scaling.mscale, j["rope_scaling"]["mscale"].get<double>());
  EXPECT_DOUBLE_EQ(c.rope_scaling.mscale_all_dim,
                   j["rope_scaling"]["mscale_all_dim"].get<double>());
  for (int64_t i = 0; i < c.num_layers; ++i) {
    EXPECT_EQ(IsMoeLayer(c, i), i >= j["first_k_dense_replace"].get<int64_t>()) << i;
  }
}

TEST_F(DeepseekModelTest, PresetConfigsParseWithTheReferenceSoftmaxScale) {
  const Json goldens = ReadJson("tests/data/deepseek_yarn_rope.json");
  for (const auto& [dir, preset] : {std::pair{*v2_, "deepseek-v2-lite-tiny"},
                                    std::pair{*v3_, "deepseek-v3-tiny"}}) {
    SCOPED_TRACE(preset);
    StatusOr<ModelConfig> c = LoadModelConfig(dir);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ExpectMatchesJson(*c, ReadJson(dir + "/config.json"));
    EXPECT_NEAR(AttentionSoftmaxScale(*c), goldens[preset]["softmax_scale"].get<double>(), 1e-12);
    EXPECT_NEAR(RopeCosSinScale(RopeParamsFor(*c)), goldens[preset]["cos_sin_scale"].get<double>(),
                1e-12);
    EXPECT_FALSE(c->fp8.has_value());
  }
  StatusOr<ModelConfig> fp8 = LoadModelConfig(*v3_fp8_);
  ASSERT_TRUE(fp8.ok()) << fp8.status().ToString();
  ASSERT_TRUE(fp8->fp8.has_value());
  EXPECT_EQ(fp8->fp8->block_rows, 128);
  EXPECT_EQ(fp8->fp8->block_cols, 128);
  EXPECT_EQ(fp8->num_nextn_predict_layers, 1);
}

// MLA caches one latent row per token: kv_lora_rank + qk_rope_head_dim values, one array
// per layer (no separate V), instead of per-head K and V.
TEST_F(DeepseekModelTest, LoadsWithALatentKvLayout) {
  for (const std::string* dir : {v2_, v3_, v3_fp8_}) {
    auto model = Model::Load(*dir, nullptr);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const ModelConfig& c = (*model)->config();
    const KvLayout layout = (*model)->kv_layout(16, KvDType::kF32);
    EXPECT_TRUE(layout.latent);
    EXPECT_EQ(layout.num_kv_heads, 1);
    EXPECT_EQ(layout.head_dim, c.mla->kv_lora_rank + c.mla->qk_rope_head_dim);
    EXPECT_EQ(layout.bytes_per_token(), 4u * (32 + 8) * c.num_layers);
    // The same model with standard multi-head attention would cache K and V per head.
    const size_t mha_bytes = 2u * 4 * c.num_heads * c.mla->q_head_dim() * c.num_layers;
    EXPECT_LT(layout.bytes_per_token() * 4, mha_bytes);
  }
}

// Every weight format the kernels offer runs MLA (absorbed weights included) and the
// experts: logits stay near f32's. The measure is the median over positions of a row's
// rms error / rms logit, because a rounded router input can flip one token's expert
// choice, which moves that row a lot (v3 bf16: overall rms 0.045 against a median of
// 0.006). Bounds 1.5-2x the medians printed here; unrelated logits of equal rms score ~1.4.
TEST_F(DeepseekModelTest, QuantizedWeightsStayCloseToF32) {
  struct Case {
    LoadOptions options;
    double max_median_error;
  };
  const Case cases[] = {{{WeightDType::kBF16}, 1e-2},
                        {{WeightDType::kF32, Quantization::kInt8}, 5e-2},
                        {{WeightDType::kF32, Quantization::kInt4, 32}, 0.4}};
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 48; ++i) ids.push_back((i * 97 + 13) % 256);
  for (const std::string* dir : {v2_, v3_}) {
    ThreadPool pool(2);
    std::unique_ptr<Model> f32 = LoadModelOrDie(*dir, &pool);
    const int64_t vocab = f32->config().vocab_size;
    const std::vector<float> want = AllLogits(*f32, ids);
    for (const Case& c : cases) {
      const std::vector<float> got = AllLogits(*LoadModelOrDie(*dir, &pool, c.options), ids);
      std::vector<double> row_errors;
      for (size_t r = 0; r < ids.size(); ++r) {
        double diff2 = 0, want2 = 0;
        for (int64_t v = r * vocab; v < static_cast<int64_t>(r + 1) * vocab; ++v) {
          diff2 += (double{got[v]} - want[v]) * (double{got[v]} - want[v]);
          want2 += double{want[v]} * want[v];
        }
        row_errors.push_back(std::sqrt(diff2 / want2));
      }
      std::sort(row_errors.begin(), row_errors.end());
      const double median = row_errors[row_errors.size() / 2];
      std::printf("%s %-8s median row rms error %.4f (worst row %.4f)\n", dir == v2_ ? "v2" : "v3",
                  LoadOptionsName(c.options).c_str(), median, row_errors.back());
      EXPECT_LT(median, c.max_median_error) << LoadOptionsName(c.options);
    }
  }
}

// An F8_E4M3 weight needs the config's block shape and its weight_scale_inv.
TEST_F(DeepseekModelTest, Fp8WeightsNeedTheirScalesAndConfig) {
  const std::string dir = MakeTiny("v3_fp8_noconfig", "--preset deepseek-v3-tiny --fp8");
  Json config = ReadJson(dir + "/config.json");
  config.erase("quantization_config");
  std::ofstream(dir + "/config.json") << config.dump();
  auto model = Model::Load(dir, nullptr);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument) << model.status().ToString();
  EXPECT_THAT(model.status().message(),
              HasSubstr("is F8_E4M3 but config.json has no FP8 quantization_config"));
  std::filesystem::remove_all(dir);
}

// A config error is reported before any weight is read, naming the file.
TEST_F(DeepseekModelTest, LoadReportsConfigErrorsFirst) {
  const std::string dir = MakeTiny("v3_broken", "--preset deepseek-v3-tiny");
  Json config = ReadJson(dir + "/config.json");
  config["topk_group"] = 5;
  std::ofstream(dir + "/config.json") << config.dump();
  auto model = Model::Load(dir, nullptr);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument) << model.status().ToString();
  EXPECT_THAT(model.status().message(),
              HasSubstr(dir + "/config.json: 'topk_group' (5) exceeds 'n_group' (4)"));
  std::filesystem::remove_all(dir);
}

// FP8 is recorded for any model_type, but only DeepSeek's loader will dequantize it.
TEST(DenseFp8Test, LlamaWithFp8ConfigIsRefused) {
  const std::string dir = MakeTiny("llama_fp8", "");
  Json config = ReadJson(dir + "/config.json");
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  std::ofstream(dir + "/config.json") << config.dump();
  auto model = Model::Load(dir, nullptr);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented) << model.status().ToString();
  EXPECT_THAT(model.status().message(), HasSubstr("FP8 weights are supported for DeepSeek only"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace surge
