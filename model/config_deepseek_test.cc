// ParseModelConfig on DeepSeek V2/V3 configs: every field, DeepSeek's defaults, and one
// test per validation error (each naming its field).
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/config.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr const char* kPath = "/models/v3/config.json";

// The deepseek-v3-tiny preset's config.json (tools/tiny_deepseek.py), written out here.
Json V3Json() {
  return Json::parse(R"({
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
    "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 256,
    "max_position_embeddings": 512, "q_lora_rank": 48, "kv_lora_rank": 32,
    "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16,
    "moe_intermediate_size": 32, "n_routed_experts": 16, "n_shared_experts": 1,
    "num_experts_per_tok": 4, "first_k_dense_replace": 1, "moe_layer_freq": 1,
    "scoring_func": "sigmoid", "topk_method": "noaux_tc", "n_group": 4, "topk_group": 2,
    "norm_topk_prob": true, "routed_scaling_factor": 2.5, "num_nextn_predict_layers": 1,
    "rope_scaling": {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64,
                     "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0},
    "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
    "tie_word_embeddings": false, "attention_bias": false, "bos_token_id": 0,
    "eos_token_id": 1})");
}

StatusOr<ModelConfig> Parse(const Json& json) { return ParseModelConfig(json.dump(), kPath); }

void ExpectError(const Json& json, StatusCode code, const std::string& text) {
  StatusOr<ModelConfig> result = Parse(json);
  ASSERT_FALSE(result.ok()) << json.dump();
  EXPECT_EQ(result.status().code(), code) << result.status().ToString();
  EXPECT_THAT(result.status().message(), HasSubstr(kPath));
  EXPECT_THAT(result.status().message(), HasSubstr(text));
}

TEST(DeepseekConfigTest, V3EveryField) {
  StatusOr<ModelConfig> c = Parse(V3Json());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->architecture, Architecture::kDeepseekV3);
  EXPECT_TRUE(IsDeepseek(*c));
  ASSERT_TRUE(c->mla.has_value());
  EXPECT_EQ(c->mla->q_lora_rank, 48);
  EXPECT_EQ(c->mla->kv_lora_rank, 32);
  EXPECT_EQ(c->mla->qk_nope_head_dim, 16);
  EXPECT_EQ(c->mla->qk_rope_head_dim, 8);
  EXPECT_EQ(c->mla->v_head_dim, 16);
  EXPECT_EQ(c->head_dim, 24);  // q_head_dim
  ASSERT_TRUE(c->moe.has_value());
  const MoeConfig& m = *c->moe;
  EXPECT_EQ(m.n_routed_experts, 16);
  EXPECT_EQ(m.n_shared_experts, 1);
  EXPECT_EQ(m.num_experts_per_tok, 4);
  EXPECT_EQ(m.moe_intermediate_size, 32);
  EXPECT_EQ(m.first_k_dense_replace, 1);
  EXPECT_EQ(m.moe_layer_freq, 1);
  EXPECT_EQ(m.scoring_func, MoeConfig::Scoring::kSigmoid);
  EXPECT_EQ(m.topk_method, MoeConfig::TopkMethod::kNoauxTc);
  EXPECT_EQ(m.n_group, 4);
  EXPECT_EQ(m.topk_group, 2);
  EXPECT_TRUE(m.norm_topk_prob);
  EXPECT_DOUBLE_EQ(m.routed_scaling_factor, 2.5);
  EXPECT_EQ(c->num_nextn_predict_layers, 1);
  EXPECT_EQ(c->rope_scaling.type, RopeScaling::Type::kYarn);
  EXPECT_DOUBLE_EQ(c->rope_scaling.factor, 8.0);
  EXPECT_EQ(c->rope_scaling.original_max_position_embeddings, 64);
  EXPECT_DOUBLE_EQ(c->rope_scaling.mscale_all_dim, 1.0);
  EXPECT_FALSE(c->fp8.has_value());
  EXPECT_FALSE(IsMoeLayer(*c, 0));
  EXPECT_TRUE(IsMoeLayer(*c, 1));
  EXPECT_TRUE(IsMoeLayer(*c, 2));
  const RopeParams rope = RopeParamsFor(*c);
  EXPECT_EQ(rope.kind, RopeKind::kYarn);
  EXPECT_EQ(rope.head_dim, 8);  // the rope part only
}

// V2-Lite: q_lora_rank null, softmax + greedy without groups; "rope_type" spelling.
TEST(DeepseekConfigTest, V2LiteShapeAndDefaults) {
  Json json = V3Json();
  json["model_type"] = "deepseek_v2";
  json["architectures"] = {"DeepseekV2ForCausalLM"};
  json["q_lora_rank"] = nullptr;
  for (const char* key : {"scoring_func", "topk_method", "n_group", "topk_group",
                          "norm_topk_prob", "routed_scaling_factor", "bos_token_id",
                          "eos_token_id", "max_position_embeddings", "n_shared_experts"}) {
    json.erase(key);
  }
  json["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 40},
                          {"original_max_position_embeddings", 4096}};
  StatusOr<ModelConfig> c = Parse(json);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->architecture, Architecture::kDeepseekV2);
  EXPECT_EQ(c->mla->q_lora_rank, 0);
  EXPECT_EQ(c->moe->scoring_func, MoeConfig::Scoring::kSoftmax);
  EXPECT_EQ(c->moe->topk_method, MoeConfig::TopkMethod::kGreedy);
  EXPECT_FALSE(c->moe->norm_topk_prob);
  EXPECT_DOUBLE_EQ(c->moe->routed_scaling_factor, 1.0);
  EXPECT_EQ(c->moe->n_shared_experts, 0);
  EXPECT_EQ(c->bos_token_id, 100000);
  EXPECT_EQ(c->eos_token_ids, std::vector<int32_t>{100001});
  EXPECT_EQ(c->max_position_embeddings, 2048);
  EXPECT_DOUBLE_EQ(c->rope_scaling.beta_fast, 32);
  EXPECT_DOUBLE_EQ(c->rope_scaling.beta_slow, 1);
  EXPECT_DOUBLE_EQ(c->rope_scaling.mscale, 1);
  EXPECT_DOUBLE_EQ(c->rope_scaling.mscale_all_dim, 0);
  // mscale_all_dim unset: the softmax scale is q_head_dim^-0.5 alone.
  EXPECT_DOUBLE_EQ(AttentionSoftmaxScale(*c), 1.0 / std::sqrt(24.0));
}

// Only the rope part rotates pairs; q_head_dim may be odd, and num_key_value_heads (which
// MLA does not use) need not divide anything.
TEST(DeepseekConfigTest, DenseShapeRulesDoNotApplyToMla) {
  Json json = V3Json();
  json["qk_nope_head_dim"] = 15;
  json["num_key_value_heads"] = 3;
  json["hidden_size"] = 66;  // not a multiple of the 4 heads
  StatusOr<ModelConfig> c = Parse(json);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->head_dim, 23);
}

TEST(DeepseekConfigTest, NoRoutedExpertsMeansDenseEverywhere) {
  Json json = V3Json();
  json["n_routed_experts"] = nullptr;
  StatusOr<ModelConfig> c = Parse(json);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->moe.has_value());
  for (int64_t i = 0; i < 3; ++i) EXPECT_FALSE(IsMoeLayer(*c, i));
}

TEST(DeepseekConfigTest, MoeLayerRule) {
  Json json = V3Json();
  json["num_hidden_layers"] = 8;
  json["first_k_dense_replace"] = 3;
  json["moe_layer_freq"] = 2;
  StatusOr<ModelConfig> c = Parse(json);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<int64_t> moe_layers;
  for (int64_t i = 0; i < 8; ++i) {
    if (IsMoeLayer(*c, i)) moe_layers.push_back(i);
  }
  EXPECT_EQ(moe_layers, (std::vector<int64_t>{4, 6}));
}

TEST(DeepseekConfigTest, Fp8QuantizationConfigIsRecorded) {
  Json json = V3Json();
  json["quantization_config"] = {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"},
                                 {"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  StatusOr<ModelConfig> c = Parse(json);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->fp8.has_value());
  EXPECT_EQ(c->fp8->block_rows, 128);
  EXPECT_EQ(c->fp8->block_cols, 128);
  EXPECT_EQ(c->fp8->activation_scheme, "dynamic");
}

struct BrokenCase {
  const char* what;
  Json patch;  // merged into V3Json() (RFC 7396: null erases a key, objects merge)
  StatusCode code;
  const char* message;
};

TEST(DeepseekConfigTest, ValidationErrorsNameTheField) {
  constexpr StatusCode kBad = StatusCode::kInvalidArgument;
  constexpr StatusCode kUnimpl = StatusCode::kUnimplemented;
  const BrokenCase cases[] = {
      {"rank 0", {{"kv_lora_rank", 0}}, kBad, "'kv_lora_rank' must be in [1"},
      {"q rank 0", {{"q_lora_rank", 0}}, kBad, "'q_lora_rank' must be in [1"},
      {"nope < 0", {{"qk_nope_head_dim", -1}}, kBad, "'qk_nope_head_dim' must be in [1"},
      {"v dim", {{"v_head_dim", "16"}}, kBad, "'v_head_dim' must be an integer"},
      {"missing rope dim", {{"qk_rope_head_dim", nullptr}}, kBad,
       "missing key 'qk_rope_head_dim'"},
      {"odd rope dim", {{"qk_rope_head_dim", 7}}, kBad, "'qk_rope_head_dim' 7 is odd"},
      {"experts 0", {{"n_routed_experts", 0}}, kBad, "'n_routed_experts' must be in [1"},
      {"top-k missing", {{"num_experts_per_tok", nullptr}}, kBad,
       "missing key 'num_experts_per_tok'"},
      {"moe size missing", {{"moe_intermediate_size", nullptr}}, kBad,
       "missing key 'moe_intermediate_size'"},
      {"freq 0", {{"moe_layer_freq", 0}}, kBad, "'moe_layer_freq' must be in [1"},
      {"dense -1", {{"first_k_dense_replace", -1}}, kBad, "'first_k_dense_replace' must be in [0"},
      {"shared -1", {{"n_shared_experts", -1}}, kBad, "'n_shared_experts' must be in [0"},
      {"mtp -1", {{"num_nextn_predict_layers", -1}}, kBad,
       "'num_nextn_predict_layers' must be in [0"},
      {"scaling 0", {{"routed_scaling_factor", 0}}, kBad, "'routed_scaling_factor' must be > 0"},
      {"top_k > experts", {{"num_experts_per_tok", 17}, {"topk_method", "greedy"}}, kBad,
       "'num_experts_per_tok' (17) exceeds 'n_routed_experts' (16)"},
      {"topk_group > n_group", {{"topk_group", 5}}, kBad, "'topk_group' (5) exceeds 'n_group' (4)"},
      {"indivisible", {{"n_group", 3}, {"topk_group", 1}}, kBad,
       "'n_routed_experts' (16) is not divisible by 'n_group' (3)"},
      {"top_k > groups' experts", {{"num_experts_per_tok", 9}}, kBad,
       "'num_experts_per_tok' (9) exceeds the experts of 'topk_group' groups (2 x 4)"},
      {"noaux_tc groups of 1", {{"n_group", 16}, {"num_experts_per_tok", 2}}, kBad,
       "noaux_tc needs at least 2 experts per group"},
      {"n_group missing", {{"n_group", nullptr}}, kBad, "missing key 'n_group'"},
      {"topk_group missing", {{"topk_group", nullptr}, {"topk_method", "group_limited_greedy"}},
       kBad, "missing key 'topk_group'"},
      {"scoring", {{"scoring_func", "tanh"}}, kUnimpl,
       "unsupported 'scoring_func' 'tanh' (supported: softmax, sigmoid)"},
      {"topk method", {{"topk_method", "gready"}}, kUnimpl,
       "unsupported 'topk_method' 'gready' (supported: greedy, group_limited_greedy, noaux_tc)"},
      {"class", {{"architectures", {"LlamaForCausalLM"}}}, kUnimpl, "DeepseekV3ForCausalLM"},
      {"yarn factor < 1", {{"rope_scaling", {{"type", "yarn"}, {"factor", 0.5},
                                             {"original_max_position_embeddings", 64}}}},
       kBad, "'rope_scaling.factor' must be >= 1 for yarn"},
      {"yarn original", {{"rope_scaling", {{"original_max_position_embeddings", nullptr}}}}, kBad,
       "missing key 'rope_scaling.original_max_position_embeddings'"},
      {"yarn mscale", {{"rope_scaling", {{"type", "yarn"}, {"factor", 4}, {"mscale", "1"},
                                         {"original_max_position_embeddings", 64}}}},
       kBad, "'rope_scaling.mscale' must be a number"},
      {"yarn beta", {{"rope_scaling", {{"type", "yarn"}, {"factor", 4}, {"beta_fast", 0},
                                       {"original_max_position_embeddings", 64}}}},
       kBad, "'rope_scaling.beta_fast' must be > 0"},
      {"rope type", {{"rope_scaling", {{"type", "longrope"}}}}, kUnimpl,
       "unsupported rope_scaling type 'longrope' (supported: default, linear, llama3, yarn)"},
      {"quant method", {{"quantization_config", {{"quant_method", "gptq"}}}}, kUnimpl,
       "unsupported quantization_config (quant_method 'gptq'"},
      {"fp8 fmt", {{"quantization_config", {{"quant_method", "fp8"}, {"fmt", "e5m2"}}}}, kUnimpl,
       "fmt 'e5m2'"},
      {"fp8 block", {{"quantization_config", {{"quant_method", "fp8"},
                                              {"weight_block_size", {128}}}}},
       kBad, "'quantization_config.weight_block_size' must be two positive integers"},
      {"fp8 no block", {{"quantization_config", {{"quant_method", "fp8"}}}}, kBad,
       "missing key 'quantization_config.weight_block_size'"},
  };
  for (const BrokenCase& c : cases) {
    SCOPED_TRACE(c.what);
    Json json = V3Json();
    json.merge_patch(c.patch);
    ExpectError(json, c.code, c.message);
  }
}

// YaRN stays refused for the dense models, whose attention does not apply its scales.
TEST(DeepseekConfigTest, YarnOnlyForDeepseek) {
  Json json = {{"model_type", "llama"}, {"hidden_size", 64}, {"intermediate_size", 128},
               {"num_hidden_layers", 2}, {"num_attention_heads", 8}, {"vocab_size", 256},
               {"rope_scaling", {{"type", "yarn"}, {"factor", 4},
                                 {"original_max_position_embeddings", 64}}}};
  ExpectError(json, StatusCode::kUnimplemented, "yarn for deepseek_v2/v3 only");
}

}  // namespace
}  // namespace surge
