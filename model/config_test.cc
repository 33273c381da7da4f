#include "model/config.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace surge {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr const char* kPath = "/models/x/config.json";

// A minimal valid Llama config; tests edit one field at a time.
Json LlamaJson() {
  return Json{{"architectures", {"LlamaForCausalLM"}},
              {"model_type", "llama"},
              {"hidden_size", 64},
              {"intermediate_size", 172},
              {"num_hidden_layers", 2},
              {"num_attention_heads", 8},
              {"vocab_size", 512}};
}

StatusOr<ModelConfig> Parse(const Json& json) { return ParseModelConfig(json.dump(), kPath); }

void ExpectError(const StatusOr<ModelConfig>& result, StatusCode code, const std::string& text) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status().ToString();
  EXPECT_THAT(result.status().message(), HasSubstr(kPath));
  EXPECT_THAT(result.status().message(), HasSubstr(text));
}

TEST(ModelConfigTest, BundledStoriesConfig) {
  StatusOr<ModelConfig> config = LoadModelConfig("models/stories260K");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->architecture, Architecture::kLlama);
  EXPECT_EQ(config->hidden_size, 64);
  EXPECT_EQ(config->intermediate_size, 172);
  EXPECT_EQ(config->num_layers, 5);
  EXPECT_EQ(config->num_heads, 8);
  EXPECT_EQ(config->num_kv_heads, 4);
  EXPECT_EQ(config->head_dim, 8);
  EXPECT_EQ(config->vocab_size, 512);
  EXPECT_EQ(config->max_position_embeddings, 512);
  EXPECT_DOUBLE_EQ(config->rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(config->rope_theta, 10000.0);
  EXPECT_EQ(config->rope_scaling.type, RopeScaling::Type::kNone);
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_FALSE(config->qkv_bias);
  EXPECT_FALSE(config->o_bias);
  EXPECT_FALSE(config->mlp_bias);
  EXPECT_EQ(config->bos_token_id, 1);
  EXPECT_EQ(config->eos_token_ids, std::vector<int32_t>{2});
}

TEST(ModelConfigTest, LlamaDefaults) {
  StatusOr<ModelConfig> config = Parse(LlamaJson());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->num_kv_heads, 8);
  EXPECT_EQ(config->head_dim, 8);
  EXPECT_EQ(config->max_position_embeddings, 2048);
  EXPECT_DOUBLE_EQ(config->rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(config->rope_theta, 10000.0);
  EXPECT_FALSE(config->tie_word_embeddings);
  EXPECT_EQ(config->bos_token_id, 1);
  EXPECT_EQ(config->eos_token_ids, std::vector<int32_t>{2});
}

TEST(ModelConfigTest, LlamaAttentionBiasCoversQkvAndO) {
  Json json = LlamaJson();
  json["attention_bias"] = true;
  json["mlp_bias"] = true;
  json["head_dim"] = 16;  // given explicitly, not hidden / heads
  json["rope_theta"] = 500000;  // an integer where a float is expected is fine
  StatusOr<ModelConfig> config = Parse(json);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->qkv_bias);
  EXPECT_TRUE(config->o_bias);
  EXPECT_TRUE(config->mlp_bias);
  EXPECT_EQ(config->head_dim, 16);
  EXPECT_DOUBLE_EQ(config->rope_theta, 500000.0);
}

TEST(ModelConfigTest, Qwen2Defaults) {
  Json json = LlamaJson();
  json["model_type"] = "qwen2";
  json["architectures"] = {"Qwen2ForCausalLM"};
  json["num_key_value_heads"] = 2;
  json["eos_token_id"] = {151643, 151645};
  json["bos_token_id"] = nullptr;
  json["use_sliding_window"] = false;
  StatusOr<ModelConfig> config = Parse(json);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->architecture, Architecture::kQwen2);
  EXPECT_TRUE(config->qkv_bias);
  EXPECT_FALSE(config->o_bias);
  EXPECT_FALSE(config->mlp_bias);
  EXPECT_FALSE(config->tie_word_embeddings);
  EXPECT_EQ(config->max_position_embeddings, 32768);
  EXPECT_EQ(config->num_kv_heads, 2);
  EXPECT_EQ(config->bos_token_id, -1);
  EXPECT_EQ(config->eos_token_ids, (std::vector<int32_t>{151643, 151645}));
}

// Qwen3Config: q/k norms always, biases only under attention_bias (q, k, v and o; never
// the MLP), head_dim 128 unless given, and the Qwen defaults otherwise.
TEST(ModelConfigTest, Qwen3) {
  Json json = LlamaJson();
  json["model_type"] = "qwen3";
  json["architectures"] = {"Qwen3ForCausalLM"};
  json["num_key_value_heads"] = 2;
  json["head_dim"] = 32;  // wider than hidden_size / num_attention_heads = 8
  json["tie_word_embeddings"] = true;
  json["mlp_bias"] = true;  // not a Qwen3 key: unread, no MLP bias
  StatusOr<ModelConfig> config = Parse(json);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->architecture, Architecture::kQwen3);
  EXPECT_EQ(config->model_type, "qwen3");
  EXPECT_TRUE(config->qk_norm);
  EXPECT_FALSE(config->qkv_bias);
  EXPECT_FALSE(config->o_bias);
  EXPECT_FALSE(config->mlp_bias);
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_EQ(config->head_dim, 32);
  EXPECT_EQ(config->max_position_embeddings, 32768);
  EXPECT_EQ(config->bos_token_id, -1);

  json["attention_bias"] = true;
  json.erase("head_dim");
  StatusOr<ModelConfig> biased = Parse(json);
  ASSERT_TRUE(biased.ok()) << biased.status().ToString();
  EXPECT_TRUE(biased->qkv_bias);
  EXPECT_TRUE(biased->o_bias);
  EXPECT_EQ(biased->head_dim, 128);  // Qwen3Config's default

  json["use_sliding_window"] = true;
  ExpectError(Parse(json), StatusCode::kUnimplemented, "use_sliding_window");
  json["use_sliding_window"] = false;
  json["architectures"] = {"Qwen2ForCausalLM"};
  ExpectError(Parse(json), StatusCode::kUnimplemented, "supported: Qwen3ForCausalLM");
  EXPECT_FALSE(Parse(LlamaJson())->qk_norm);
}

TEST(ModelConfigTest, RopeScalingVariants) {
  Json json = LlamaJson();
  json["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
  StatusOr<ModelConfig> linear = Parse(json);
  ASSERT_TRUE(linear.ok()) << linear.status().ToString();
  EXPECT_EQ(linear->rope_scaling.type, RopeScaling::Type::kLinear);
  EXPECT_DOUBLE_EQ(linear->rope_scaling.factor, 4.0);

  json["rope_scaling"] = {{"rope_type", "llama3"},
                          {"factor", 8.0},
                          {"low_freq_factor", 1.0},
                          {"high_freq_factor", 4.0},
                          {"original_max_position_embeddings", 8192}};
  StatusOr<ModelConfig> llama3 = Parse(json);
  ASSERT_TRUE(llama3.ok()) << llama3.status().ToString();
  EXPECT_EQ(llama3->rope_scaling.type, RopeScaling::Type::kLlama3);
  EXPECT_DOUBLE_EQ(llama3->rope_scaling.factor, 8.0);
  EXPECT_EQ(llama3->rope_scaling.original_max_position_embeddings, 8192);

  json["rope_scaling"] = {{"rope_type", "default"}};
  StatusOr<ModelConfig> plain = Parse(json);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->rope_scaling.type, RopeScaling::Type::kNone);
}

TEST(ModelConfigTest, RejectsUnsupportedRopeScaling) {
  Json json = LlamaJson();
  json["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  ExpectError(Parse(json), StatusCode::kUnimplemented, "unsupported rope_scaling type 'yarn'");
  json["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  ExpectError(Parse(json), StatusCode::kUnimplemented, "'dynamic'");
  json["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  ExpectError(Parse(json), StatusCode::kInvalidArgument,
              "missing key 'rope_scaling.low_freq_factor'");
  json["rope_scaling"] = {{"factor", 8.0}};
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "missing key 'rope_scaling.type'");
  json["rope_scaling"] = {{"type", "linear"}, {"factor", -1}};
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "'rope_scaling.factor' must be > 0");
}

TEST(ModelConfigTest, MissingKey) {
  Json json = LlamaJson();
  json.erase("hidden_size");
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "missing key 'hidden_size'");
}

TEST(ModelConfigTest, UnsupportedModelType) {
  Json json = LlamaJson();
  json["model_type"] = "gpt2";
  ExpectError(Parse(json), StatusCode::kUnimplemented,
              "unsupported model_type 'gpt2' (supported: llama, qwen2, qwen3, deepseek_v2, deepseek_v3)");
}

TEST(ModelConfigTest, UnsupportedArchitectureClass) {
  Json json = LlamaJson();
  json["architectures"] = {"LlamaForSequenceClassification"};
  ExpectError(Parse(json), StatusCode::kUnimplemented, "LlamaForSequenceClassification");
}

TEST(ModelConfigTest, WrongTypes) {
  Json json = LlamaJson();
  json["hidden_size"] = "64";
  ExpectError(Parse(json), StatusCode::kInvalidArgument,
              "key 'hidden_size' must be an integer, got string");
  json = LlamaJson();
  json["num_attention_heads"] = 8.5;
  ExpectError(Parse(json), StatusCode::kInvalidArgument,
              "'num_attention_heads' must be an integer");
  json = LlamaJson();
  json["tie_word_embeddings"] = 1;
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "'tie_word_embeddings' must be a boolean");
  json = LlamaJson();
  json["eos_token_id"] = "2";
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "'eos_token_id'");
}

TEST(ModelConfigTest, RejectsBadValues) {
  Json json = LlamaJson();
  json["hidden_size"] = 0;
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "'hidden_size' must be in [1,");
  json = LlamaJson();
  json["num_key_value_heads"] = 3;
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "not a multiple of num_key_value_heads");
  json = LlamaJson();
  json["num_attention_heads"] = 6;
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "hidden_size (64) is not a multiple");
  json = LlamaJson();
  json["rms_norm_eps"] = -1e-5;
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "'rms_norm_eps' must be > 0");
  json = LlamaJson();
  json["hidden_act"] = "gelu";
  ExpectError(Parse(json), StatusCode::kUnimplemented, "unsupported hidden_act 'gelu'");
  json = LlamaJson();
  json["vocab_size"] = 1ULL << 40;
  ExpectError(Parse(json), StatusCode::kInvalidArgument, "'vocab_size' must be in");
}

TEST(ModelConfigTest, MalformedJson) {
  ExpectError(ParseModelConfig("{\"model_type\": \"llama\",", kPath), StatusCode::kInvalidArgument,
              "malformed JSON");
  ExpectError(ParseModelConfig("[1, 2]", kPath), StatusCode::kInvalidArgument,
              "not a JSON object");
}

TEST(ModelConfigTest, MissingFileNamesPath) {
  StatusOr<ModelConfig> config = LoadModelConfig("/nonexistent/model");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr("/nonexistent/model/config.json"));
}

}  // namespace
}  // namespace surge
