// GGUF -> Hugging Face: a model through HF -> GGUF (f32) -> HF again gives the original's
// logits bit for bit in f32 (so llama's Q/K rows are back in HF order), and within bf16
// rounding from a bf16 directory; config.json reads back as the same config.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/gguf_convert.h"
#include "model/gguf_to_hf.h"
#include "model/model_test_util.h"
#include "model/safetensors.h"

namespace surge {
namespace {

class GgufToHfTest : public testing::Test {
 protected:
  void SetUp() override {
    // A directory of this test's own: ctest runs each test as a process, side by side.
    std::string pattern = testing::TempDir() + "/gguf_to_hf_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // HF_DIR -> f32 GGUF -> HF in `dtype`; returns the new directory.
  std::string RoundTrip(const std::string& hf_dir, TensorDType dtype, const std::string& name) {
    const std::string gguf = dir_ + "/" + name + ".gguf";
    if (!std::filesystem::exists(gguf)) {
      Status to_gguf = ConvertHfToGguf(hf_dir, gguf, GgufFileType::kF32);
      EXPECT_TRUE(to_gguf.ok()) << to_gguf.ToString();
    }
    const std::string out = dir_ + "/" + name + (dtype == TensorDType::kF32 ? "_f32" : "_bf16");
    Status back = ConvertGgufToHf(gguf, out, dtype);
    EXPECT_TRUE(back.ok()) << back.ToString();
    return out;
  }

  std::string dir_;
};

void ExpectSameConfig(const std::string& a_dir, const std::string& b_dir) {
  auto a = LoadModelConfig(a_dir);
  auto b = LoadModelConfig(b_dir);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  EXPECT_EQ(a->architecture, b->architecture);
  EXPECT_EQ(a->hidden_size, b->hidden_size);
  EXPECT_EQ(a->num_layers, b->num_layers);
  EXPECT_EQ(a->num_kv_heads, b->num_kv_heads);
  EXPECT_EQ(a->head_dim, b->head_dim);
  EXPECT_EQ(a->vocab_size, b->vocab_size);
  EXPECT_EQ(a->max_position_embeddings, b->max_position_embeddings);
  EXPECT_EQ(a->rms_norm_eps, b->rms_norm_eps);
  EXPECT_EQ(a->rope_theta, b->rope_theta);
  EXPECT_EQ(a->tie_word_embeddings, b->tie_word_embeddings);
  EXPECT_EQ(a->qkv_bias, b->qkv_bias);
  EXPECT_EQ(a->qk_norm, b->qk_norm);
}

TEST_F(GgufToHfTest, StoriesF32IsExactAndBf16WithinRounding) {
  const std::string original = "models/stories260K";
  const std::string f32 = RoundTrip(original, TensorDType::kF32, "stories");
  const std::string bf16 = RoundTrip(original, TensorDType::kBF16, "stories");
  ExpectSameConfig(original, f32);
  ExpectSameConfig(original, bf16);
  const std::vector<int32_t> ids = SomeIds(512, 40);
  const std::vector<float> want = AllLogits(*LoadModelOrDie(original, nullptr), ids);
  EXPECT_EQ(AllLogits(*LoadModelOrDie(f32, nullptr), ids), want);
  EXPECT_EQ(AllLogits(*LoadModelOrDie(dir_ + "/stories.gguf", nullptr), ids), want);
  const LogitError error = CompareLogits(want, AllLogits(*LoadModelOrDie(bf16, nullptr), ids));
  EXPECT_LT(error.rms_relative, 2e-2);
  EXPECT_GT(error.rms_relative, 0.0);
  // The bf16 file holds bf16 tensors, and what a bf16 load of the f32 GGUF makes of the
  // linear layers: the same logits when the embeddings and norms are bf16-exact too, which
  // they are after a bf16 -> f32 -> bf16 trip.
  LoadOptions bf16_load;
  bf16_load.dtype = WeightDType::kBF16;
  const std::string bf16_again = RoundTrip(bf16, TensorDType::kBF16, "stories_bf16");
  EXPECT_EQ(AllLogits(*LoadModelOrDie(bf16_again, nullptr, bf16_load), ids),
            AllLogits(*LoadModelOrDie(bf16, nullptr, bf16_load), ids));
}

TEST_F(GgufToHfTest, Qwen2AndQwen3RoundTripExactly) {
  for (const char* type : {"qwen2", "qwen3"}) {
    const std::string hf = MakeTinyModel(dir_ + "/" + type, std::string("--model-type ") + type + " --no-tie");
    const std::string back = RoundTrip(hf, TensorDType::kF32, std::string(type) + "_back");
    ExpectSameConfig(hf, back);
    const std::vector<int32_t> ids = SomeIds(LoadModelOrDie(hf, nullptr)->config().vocab_size, 24);
    EXPECT_EQ(AllLogits(*LoadModelOrDie(back, nullptr), ids), AllLogits(*LoadModelOrDie(hf, nullptr), ids)) << type;
  }
}

TEST_F(GgufToHfTest, SafetensorsHeaderIsValidAndTyped) {
  const std::string bf16 = RoundTrip("models/stories260K", TensorDType::kBF16, "stories");
  std::ifstream in(bf16 + "/model.safetensors", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto header = ParseSafetensorsHeader(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "model.safetensors");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->data_offset_bytes % 8, 0u);
  EXPECT_EQ(header->metadata.at("format"), "pt");
  for (const SafetensorsEntry& entry : header->tensors) EXPECT_EQ(entry.dtype, TensorDType::kBF16) << entry.name;
  // Tied: no lm_head.
  EXPECT_EQ(std::count_if(header->tensors.begin(), header->tensors.end(),
                          [](const SafetensorsEntry& e) { return e.name == "lm_head.weight"; }),
            0);
}

TEST_F(GgufToHfTest, ConfigJsonNamesTheArchitecture) {
  ModelConfig config;
  config.architecture = Architecture::kQwen3;
  config.model_type = "qwen3";
  config.rms_norm_eps = 9.999999747378752e-06;  // what an f32 metadata value reads as
  auto json = HfConfigJson(config, TensorDType::kBF16);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"Qwen3ForCausalLM\""), std::string::npos);
  EXPECT_NE(json->find("\"rms_norm_eps\": 1e-05"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"torch_dtype\": \"bfloat16\""), std::string::npos);
  config.architecture = Architecture::kDeepseekV3;
  EXPECT_EQ(HfConfigJson(config, TensorDType::kBF16).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace surge
