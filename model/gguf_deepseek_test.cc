// DeepSeek V2/V3 as llama.cpp's `deepseek2` GGUF: the tiny HF models the project's tool
// writes, converted, load to the HF logits (F32: within 1e-5; legacy attn_kv_b files
// too; quantized: close to F32 within a stated multiple of surge's own quantization),
// and malformed deepseek2 metadata and tensors get errors naming the key or tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/gguf_convert.h"
#include "model/gguf_names.h"
#include "model/model.h"
#include "model/model_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;

std::string Temp(const std::string& name) {
  return testing::TempDir() + "/gguf_deepseek_test_" + name;
}

std::string MakeTiny(const std::string& name, const std::string& flags) {
  return MakeTinyModel(Temp(name), flags);
}

std::string Convert(const std::string& hf_dir, GgufFileType type) {
  const std::string out = hf_dir + "." + GgufFileTypeName(type) + ".gguf";
  Status status = ConvertHfToGguf(hf_dir, out, type);
  CHECK(status.ok()) << status.ToString();
  return out;
}

// A copy of `file` without `drop_keys` / `drop_tensors`, ready for further Set* edits.
GgufWriter CopyOf(const GgufFile& file, const std::set<std::string>& drop_keys = {},
                  const std::set<std::string>& drop_tensors = {}) {
  GgufWriter w;
  for (const std::string& key : file.keys()) {
    if (drop_keys.count(key)) continue;
    const GgufValue* v = file.Find(key);
    if (v->type == GgufValueType::kU32) w.SetU32(key, static_cast<uint32_t>(v->u64));
    if (v->type == GgufValueType::kF32) w.SetF32(key, static_cast<float>(v->f64));
    if (v->type == GgufValueType::kBool) w.SetBool(key, v->u64 != 0);
    if (v->type == GgufValueType::kString) w.SetString(key, std::string(v->str));
  }
  for (const GgufTensorInfo& t : file.tensors()) {
    if (drop_tensors.count(t.name)) continue;
    CHECK(w.AddTensor(t.name, t.dims, t.type, {t.bytes.begin(), t.bytes.end()}).ok());
  }
  return w;
}

std::vector<float> F32Of(const GgufTensorInfo& t) {
  CHECK(t.type == GgmlType::kF32) << t.name;
  std::vector<float> v(t.num_elements());
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

// The same model as a pre-MLA llama.cpp file: attn_kv_b [heads * (nope + v), latent]
// rebuilt from attn_k_b/attn_v_b, key/value_length the per-head widths, no *_mla keys.
std::string LegacyKvBFile(const GgufFile& file, const ModelConfig& c) {
  const MlaConfig& m = *c.mla;
  const int64_t heads = c.num_heads, nope = m.qk_nope_head_dim, v = m.v_head_dim;
  const int64_t latent = m.kv_lora_rank;
  std::set<std::string> split;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    split.insert("blk." + std::to_string(i) + ".attn_k_b.weight");
    split.insert("blk." + std::to_string(i) + ".attn_v_b.weight");
  }
  const std::string a = "deepseek2.attention.";
  GgufWriter out = CopyOf(file, {a + "key_length_mla", a + "value_length_mla"}, split);
  out.SetU32(a + "key_length", static_cast<uint32_t>(m.q_head_dim()));
  out.SetU32(a + "value_length", static_cast<uint32_t>(v));
  out.SetU32(a + "head_count_kv", static_cast<uint32_t>(heads));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const std::vector<float> k_b = F32Of(*file.FindTensor(p + "attn_k_b.weight"));
    const std::vector<float> v_b = F32Of(*file.FindTensor(p + "attn_v_b.weight"));
    std::vector<float> kv_b(heads * (nope + v) * latent);
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t r = 0; r < nope; ++r) {
        for (int64_t j = 0; j < latent; ++j) {
          kv_b[(h * (nope + v) + r) * latent + j] = k_b[(h * latent + j) * nope + r];
        }
      }
      std::memcpy(&kv_b[(h * (nope + v) + nope) * latent], &v_b[h * v * latent],
                  v * latent * sizeof(float));
    }
    std::vector<uint8_t> bytes(kv_b.size() * sizeof(float));
    std::memcpy(bytes.data(), kv_b.data(), bytes.size());
    CHECK(out.AddTensor(p + "attn_kv_b.weight", {latent, heads * (nope + v)}, GgmlType::kF32,
                        bytes).ok());
  }
  const std::string path = file.path() + ".legacy.gguf";
  CHECK(out.WriteFile(path).ok());
  return path;
}

const char* const kPresets[] = {"deepseek-v2-lite-tiny", "deepseek-v3-tiny"};

// F32 files carry the HF weights bit for bit; only the metadata's f32 rounding (rms eps,
// YaRN's 0.1 * mscale_all_dim) could separate the logits. Measured: identical (0).
TEST(GgufDeepseekTest, F32FilesGiveTheHfLogits) {
  ThreadPool pool(2);
  for (const char* preset : kPresets) {
    const std::string hf =
        MakeTiny(std::string("f32_") + preset, std::string("--preset ") + preset);
    const std::string gguf = Convert(hf, GgufFileType::kF32);
    std::unique_ptr<Model> want = LoadModelOrDie(hf, &pool), got = LoadModelOrDie(gguf, &pool);
    const ModelConfig& w = want->config();
    const ModelConfig& g = got->config();
    EXPECT_EQ(g.model_type, "deepseek2");
    EXPECT_EQ(g.architecture, w.architecture) << preset;
    EXPECT_EQ(g.mla->q_lora_rank, w.mla->q_lora_rank);
    EXPECT_EQ(g.mla->qk_nope_head_dim, w.mla->qk_nope_head_dim);
    EXPECT_EQ(g.moe->topk_method, w.moe->topk_method);
    EXPECT_EQ(g.moe->n_group, w.moe->n_group);
    EXPECT_EQ(g.moe->first_k_dense_replace, w.moe->first_k_dense_replace);
    EXPECT_EQ(g.rope_scaling.type, RopeScaling::Type::kYarn);
    EXPECT_NEAR(g.rope_scaling.mscale_all_dim, w.rope_scaling.mscale_all_dim, 1e-6);
    EXPECT_EQ(g.num_nextn_predict_layers, 0);  // MTP layers are not converted
    const std::vector<int32_t> ids = SomeIds(w.vocab_size, 40);
    const std::vector<float> hf_logits = AllLogits(*want, ids);
    const LogitError e = CompareLogits(hf_logits, AllLogits(*got, ids));
    std::printf("%-22s f32 gguf vs hf: max rel %.2g\n", preset, e.max_relative);
    EXPECT_LE(e.max_relative, 1e-5) << preset;
    // The legacy single attn_kv_b form loads to the same model.
    auto file = GgufFile::Open(gguf);
    ASSERT_TRUE(file.ok());
    std::unique_ptr<Model> legacy = LoadModelOrDie(LegacyKvBFile(**file, g), &pool);
    EXPECT_LE(CompareLogits(hf_logits, AllLogits(*legacy, ids)).max_relative, 1e-5) << preset;
  }
}

// An FP8 checkpoint converts to the same model its FP8 weights define.
TEST(GgufDeepseekTest, Fp8CheckpointConvertsDequantized) {
  ThreadPool pool(2);
  const std::string hf = MakeTiny("fp8", "--preset deepseek-v3-tiny --dtype bf16 --fp8");
  std::unique_ptr<Model> want = LoadModelOrDie(hf, &pool);
  std::unique_ptr<Model> got = LoadModelOrDie(Convert(hf, GgufFileType::kF32), &pool);
  const std::vector<int32_t> ids = SomeIds(want->config().vocab_size, 24);
  EXPECT_LE(CompareLogits(AllLogits(*want, ids), AllLogits(*got, ids)).max_relative, 1e-5);
}

// Rows of whole 32-blocks (hidden 128, latent 64, nope 32, ...), so every matrix takes
// the file's type (k-quants need 256 and fall back to Q4_0, so Q4_K_M is left out).
// Yardstick as for llama/qwen2 (gguf_model_test.cc): surge's own int8 / int4-g32
// quantization of the HF weights. Routers stay F32 on both sides; kv_b_proj, split per
// head at load for MLA, takes the file's format as every other linear (Q8_0 -> int8). With
// MoE the error is dominated by tokens whose top-k experts flip under either rounding,
// so the ratios scatter more than for dense models. Measured rms ratios (V2-Lite, V3):
// f16 0.014, 0.008; q8_0 -> int8 1.04, 1.25; q8_0 -> bf16 0.94, 0.74; q4_0 1.43, 1.24
// (int8 was 0.80, 1.15 with kv_b_proj kept f32).
std::string QuantFlags(const char* preset) {
  return std::string("--preset ") + preset +
         " --config '{\"hidden_size\": 128, \"intermediate_size\": 256, \"kv_lora_rank\": 64,"
         " \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16, \"v_head_dim\": 32,"
         " \"moe_intermediate_size\": 64" +
         (std::string(preset).find("v3") != std::string::npos ? ", \"q_lora_rank\": 64}'" : "}'");
}

TEST(GgufDeepseekTest, QuantizedFilesCloseToF32) {
  ThreadPool pool(2);
  for (const char* preset : kPresets) {
    const std::string hf = MakeTiny(std::string("q_") + preset, QuantFlags(preset));
    std::unique_ptr<Model> f32 = LoadModelOrDie(hf, &pool);
    const std::vector<int32_t> ids = SomeIds(f32->config().vocab_size, 48);
    const std::vector<float> want = AllLogits(*f32, ids);
    auto error_of = [&](const std::string& path, LoadOptions options, const std::string& label) {
      std::unique_ptr<Model> model = LoadModelOrDie(path, &pool, options);
      const LogitError e = CompareLogits(want, AllLogits(*model, ids));
      std::printf("%-22s %-18s max rel %.4f  rms %.4f\n", preset, label.c_str(), e.max_relative,
                  e.rms_relative);
      return e;
    };
    const LogitError int8 = error_of(hf, {WeightDType::kF32, Quantization::kInt8}, "hf int8");
    const LogitError int4 =
        error_of(hf, {WeightDType::kF32, Quantization::kInt4, 32}, "hf int4-g32");
    LoadOptions wide_bf16;
    wide_bf16.gguf_wide_quant_dtype = WeightDType::kBF16;
    const std::string q8 = Convert(hf, GgufFileType::kQ8_0);
    const struct {
      std::string path;
      LoadOptions options;
      const char* label;
      const LogitError& yardstick;
      double factor;
    } cases[] = {
        {Convert(hf, GgufFileType::kF16), {}, "f16", int8, 0.05},
        {q8, {}, "q8_0 -> int8", int8, 1.4},
        {q8, wide_bf16, "q8_0 -> bf16", int8, 1.1},
        {Convert(hf, GgufFileType::kQ4_0), {}, "q4_0 -> int4-g32", int4, 2.0},
    };
    for (const auto& c : cases) {
      const LogitError e = error_of(c.path, c.options, c.label);
      EXPECT_LT(e.rms_relative, c.factor * c.yardstick.rms_relative) << preset << " " << c.label;
    }
    // Every linear of a Q8_0 file loads as int8, MLA's per-head kv_b_proj pieces included
    // (they were f32: 4x the bytes a decode step streams for them).
    EXPECT_EQ(LoadModelOrDie(q8, &pool)->linear_weight_bytes(),
              LoadModelOrDie(hf, &pool, {WeightDType::kF32, Quantization::kInt8})->linear_weight_bytes())
        << preset;
  }
}

// One edit of a valid V3 file per case: the error names the key or tensor at fault.
TEST(GgufDeepseekTest, MalformedFilesGetClearErrors) {
  const std::string hf = MakeTiny("broken", "--preset deepseek-v3-tiny");
  auto file = GgufFile::Open(Convert(hf, GgufFileType::kF32));
  ASSERT_TRUE(file.ok());
  const std::string d = "deepseek2.";
  struct Case {
    const char* name;
    std::set<std::string> drop_keys, drop_tensors;
    std::function<void(GgufWriter&)> edit;
    StatusCode code;
    std::string message;
  };
  auto u32 = [](const std::string& key, uint32_t v) {
    return [key, v](GgufWriter& w) { w.SetU32(key, v); };
  };
  auto none = [](GgufWriter&) {};
  const Case cases[] = {
      {"no_kv_lora", {d + "attention.kv_lora_rank"}, {}, none, StatusCode::kNotFound,
       "metadata key 'deepseek2.attention.kv_lora_rank' is missing"},
      {"no_experts_tensor", {}, {"blk.2.ffn_up_exps.weight"}, none, StatusCode::kNotFound,
       "tensor 'blk.2.ffn_up_exps.weight' is missing"},
      {"no_k_b", {}, {"blk.1.attn_k_b.weight", "blk.1.attn_v_b.weight"}, none,
       StatusCode::kNotFound,
       "neither tensor 'blk.1.attn_kv_b.weight' nor 'blk.1.attn_k_b.weight'"},
      {"few_experts", {}, {}, u32(d + "expert_count", 15), StatusCode::kInvalidArgument,
       "deepseek2.expert_count = 15 is not divisible by deepseek2.expert_group_count = 4"},
      {"expert_shape", {}, {}, u32(d + "expert_count", 8), StatusCode::kInvalidArgument,
       "tensor 'blk.1.ffn_gate_inp.weight' has shape [64, 16]"},
      {"too_many_used", {}, {}, u32(d + "expert_used_count", 17), StatusCode::kInvalidArgument,
       "deepseek2.expert_used_count = 17 exceeds deepseek2.expert_count = 16"},
      {"group_used", {}, {}, u32(d + "expert_group_used_count", 5), StatusCode::kInvalidArgument,
       "deepseek2.expert_group_used_count = 5 must be in [1, deepseek2.expert_group_count = 4]"},
      {"gating", {}, {}, u32(d + "expert_gating_func", 3), StatusCode::kUnimplemented,
       "deepseek2.expert_gating_func = 3 is not supported"},
      {"key_length", {}, {}, u32(d + "attention.key_length", 48), StatusCode::kInvalidArgument,
       "deepseek2.attention.key_length = 48, expected 40 (kv_lora_rank + rope)"},
      {"odd_rope", {}, {}, u32(d + "rope.dimension_count", 7), StatusCode::kInvalidArgument,
       "deepseek2.rope.dimension_count = 7 is odd"},
      {"dense_lead", {}, {}, u32(d + "leading_dense_block_count", 9), StatusCode::kInvalidArgument,
       "deepseek2.leading_dense_block_count = 9 exceeds the 3 decoder layers"},
      {"no_log_mul", {d + "rope.scaling.yarn_log_multiplier"}, {}, none, StatusCode::kUnimplemented,
       "yarn without deepseek2.rope.scaling.yarn_log_multiplier"},
      {"scaling", {}, {}, [&](GgufWriter& w) { w.SetString(d + "rope.scaling.type", "longrope"); },
       StatusCode::kUnimplemented, "deepseek2.rope.scaling.type 'longrope' is not supported"},
      {"blocks", {}, {}, u32(d + "block_count", 4), StatusCode::kNotFound,
       "tensor 'blk.3.attn_norm.weight' is missing"},
      {"huge", {}, {}, u32(d + "attention.head_count", 1u << 30), StatusCode::kInvalidArgument,
       "deepseek2.attention.head_count = 1073741824 is out of range"},
  };
  for (const Case& c : cases) {
    GgufWriter w = CopyOf(**file, c.drop_keys, c.drop_tensors);
    c.edit(w);
    const std::string path = Temp(std::string(c.name) + ".gguf");
    ASSERT_TRUE(w.WriteFile(path).ok());
    const Status status = Model::Load(path, nullptr).status();
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << status.ToString();
    EXPECT_THAT(status.message(), HasSubstr(c.message)) << c.name;
    EXPECT_THAT(status.message(), HasSubstr(path)) << c.name;
  }
}

// What llama.cpp's deepseek2 cannot express is refused at conversion, by name.
TEST(GgufDeepseekTest, ConverterRefusesWhatDeepseek2CannotExpress) {
  const struct {
    const char* name;
    const char* config;
    const char* message;
  } cases[] = {
      {"freq", R"({"moe_layer_freq": 2})", "moe_layer_freq != 1"},
      {"mscale", R"({"rope_scaling": {"type": "yarn", "factor": 4.0,)"
                 R"( "original_max_position_embeddings": 128,)"
                 R"( "mscale": 1.0, "mscale_all_dim": 0.5}})",
       "YaRN mscale != mscale_all_dim"},
      {"groups", R"({"topk_method": "group_limited_greedy", "n_group": 4, "topk_group": 2})",
       "group_limited_greedy"},
  };
  for (const auto& c : cases) {
    const std::string hf = MakeTiny(std::string("refuse_") + c.name,
                                    std::string("--preset deepseek-v2-lite-tiny --config '") +
                                        c.config + "'");
    const Status status = ConvertHfToGguf(hf, hf + ".gguf", GgufFileType::kF32);
    EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << c.name;
    EXPECT_THAT(status.message(), HasSubstr(c.message)) << c.name;
  }
}

TEST(GgufDeepseekTest, TensorNamesMapLikeLlamaCpp) {
  const std::pair<const char*, const char*> names[] = {
      {"model.layers.0.self_attn.q_a_proj.weight", "blk.0.attn_q_a.weight"},
      {"model.layers.0.self_attn.q_a_layernorm.weight", "blk.0.attn_q_a_norm.weight"},
      {"model.layers.0.self_attn.q_b_proj.weight", "blk.0.attn_q_b.weight"},
      {"model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "blk.0.attn_kv_a_mqa.weight"},
      {"model.layers.0.self_attn.kv_a_layernorm.weight", "blk.0.attn_kv_a_norm.weight"},
      {"model.layers.0.self_attn.kv_b_proj.weight", "blk.0.attn_kv_b.weight"},
      {"model.layers.0.self_attn.k_b_proj.weight", "blk.0.attn_k_b.weight"},
      {"model.layers.0.self_attn.v_b_proj.weight", "blk.0.attn_v_b.weight"},
      {"model.layers.4.mlp.gate.weight", "blk.4.ffn_gate_inp.weight"},
      {"model.layers.4.mlp.gate.e_score_correction_bias", "blk.4.exp_probs_b.bias"},
      {"model.layers.4.mlp.shared_experts.down_proj.weight", "blk.4.ffn_down_shexp.weight"},
  };
  for (const auto& [hf, gguf] : names) EXPECT_EQ(*GgufTensorNameForHf(hf), gguf) << hf;
  const std::optional<GgufTensorRef> expert =
      GgufTensorRefForHf("model.layers.4.mlp.experts.17.up_proj.weight");
  ASSERT_TRUE(expert);
  EXPECT_EQ(expert->name, "blk.4.ffn_up_exps.weight");
  EXPECT_EQ(expert->expert, 17);
  EXPECT_FALSE(GgufTensorNameForHf("model.layers.4.mlp.experts.17.up_proj.weight"));
  EXPECT_FALSE(GgufTensorRefForHf("model.layers.4.mlp.experts.x.up_proj.weight"));
}

}  // namespace
}  // namespace surge
