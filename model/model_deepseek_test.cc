// DeepSeek checkpoints written by tools/make_tiny_model.py: their configs parse with the
// preset's values and the reference's softmax scale, and Model::Load (and GGUF
// conversion) refuses them by name instead of reading them as a llama.
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
#include "model/gguf_convert.h"
#include "model/model.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

// Per process: ctest runs each test in its own process, several at once.
std::string Temp(const std::string& name) {
  return testing::TempDir() + "/surge_ds_" + std::to_string(getpid()) + "_" + name;
}

std::string MakeTiny(const std::string& name, const std::string& flags) {
  const std::string dir = Temp(name);
  const std::string command = "/usr/bin/python3 tools/make_tiny_model.py --out " + dir + " " +
                              flags + " > /dev/null";
  CHECK(std::system(command.c_str()) == 0) << command;
  return dir;
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

TEST_F(DeepseekModelTest, LoadRefusesByNameAfterTheConfigValidates) {
  for (const auto& [dir, type] : {std::pair{*v2_, "deepseek_v2"}, std::pair{*v3_, "deepseek_v3"},
                                  std::pair{*v3_fp8_, "deepseek_v3"}}) {
    auto model = Model::Load(dir, nullptr);
    ASSERT_FALSE(model.ok()) << dir;
    EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented) << model.status().ToString();
    EXPECT_THAT(model.status().message(), HasSubstr(dir + "/config.json"));
    EXPECT_THAT(model.status().message(),
                HasSubstr(std::string(type) + ": MLA/MoE forward not implemented yet"));
  }
}

// A config error wins over the "not implemented" refusal and names the file.
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

TEST_F(DeepseekModelTest, GgufConversionRefusesDeepseek) {
  Status status = ConvertHfToGguf(*v3_, Temp("v3.gguf"), GgufFileType::kF32);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("deepseek_v3"));
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
