// The DeepSeek V2/V3 (and R1) part of config.json: MLA and MoE hyper-parameters, YaRN
// and FP8 quantization_config. Semantics as in tests/reference/deepseek_reference.py
// (written from DeepSeek's modeling_deepseek.py and inference/model.py).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "model/config.h"
#include "model/config_reader.h"

namespace surge::config_internal {
namespace {

void ReadMla(ConfigReader& reader, MlaConfig* mla) {
  // q_lora_rank null (V2-Lite): queries come from one q_proj. Absent reads as null too,
  // as in the reference.
  reader.Int("q_lora_rank", &mla->q_lora_rank);
  const std::pair<const char*, int64_t*> required[] = {
      {"kv_lora_rank", &mla->kv_lora_rank},
      {"qk_nope_head_dim", &mla->qk_nope_head_dim},
      {"qk_rope_head_dim", &mla->qk_rope_head_dim},
      {"v_head_dim", &mla->v_head_dim}};
  for (auto [key, out] : required) {
    if (reader.Require(key)) reader.Int(key, out);
  }
}

template <typename Enum>
void ReadName(ConfigReader& reader, const std::string& key,
              std::initializer_list<std::pair<const char*, Enum>> names, Enum* out) {
  if (!reader.Has(key)) return;
  std::string value;
  reader.String(key, &value);
  if (!reader.ok()) return;
  std::string supported;
  for (const auto& [name, e] : names) {
    if (value == name) {
      *out = e;
      return;
    }
    supported += (supported.empty() ? "" : ", ") + std::string(name);
  }
  reader.Fail(StatusCode::kUnimplemented, "unsupported " + reader.Name(key) + " '" + value +
                                              "' (supported: " + supported + ")");
}

// Routed experts null (or absent): every layer has a dense MLP and no MoE is recorded.
void ReadMoe(ConfigReader& reader, ModelConfig* config) {
  reader.Int("num_nextn_predict_layers", &config->num_nextn_predict_layers, 0);
  if (!reader.Has("n_routed_experts")) return;
  MoeConfig moe;
  reader.Int("n_routed_experts", &moe.n_routed_experts);
  reader.Int("n_shared_experts", &moe.n_shared_experts, 0);
  if (reader.Require("num_experts_per_tok")) {
    reader.Int("num_experts_per_tok", &moe.num_experts_per_tok);
  }
  if (reader.Require("moe_intermediate_size")) {
    reader.Int("moe_intermediate_size", &moe.moe_intermediate_size);
  }
  reader.Int("first_k_dense_replace", &moe.first_k_dense_replace, 0);
  reader.Int("moe_layer_freq", &moe.moe_layer_freq);
  using S = MoeConfig::Scoring;
  using T = MoeConfig::TopkMethod;
  ReadName(reader, "scoring_func", {{"softmax", S::kSoftmax}, {"sigmoid", S::kSigmoid}},
           &moe.scoring_func);
  ReadName(reader, "topk_method",
           {{"greedy", T::kGreedy},
            {"group_limited_greedy", T::kGroupLimitedGreedy},
            {"noaux_tc", T::kNoauxTc}},
           &moe.topk_method);
  moe.score_correction_bias = moe.topk_method == T::kNoauxTc;
  // The groups matter only to the group-limited methods, which need both numbers.
  if (moe.topk_method != T::kGreedy) {
    if (reader.Require("n_group")) reader.Int("n_group", &moe.n_group);
    if (reader.Require("topk_group")) reader.Int("topk_group", &moe.topk_group);
  } else {
    reader.Int("n_group", &moe.n_group);
    reader.Int("topk_group", &moe.topk_group);
  }
  reader.Bool("norm_topk_prob", &moe.norm_topk_prob);
  reader.Positive("routed_scaling_factor", &moe.routed_scaling_factor);
  config->moe = moe;
}

Status Invalid(const std::string& path, const std::string& message) {
  return InvalidArgumentError(path + ": " + message);
}

std::string Str(int64_t v) { return std::to_string(v); }

Status ValidateMoe(const MoeConfig& m, const std::string& path) {
  if (m.n_routed_experts > kMaxRoutedExperts) {  // the router's fixed scratch (moe_router.cc)
    return Invalid(path, "'n_routed_experts' (" + Str(m.n_routed_experts) + ") exceeds " +
                             Str(kMaxRoutedExperts));
  }
  if (m.num_experts_per_tok > m.n_routed_experts) {
    return Invalid(path, "'num_experts_per_tok' (" + Str(m.num_experts_per_tok) +
                             ") exceeds 'n_routed_experts' (" + Str(m.n_routed_experts) + ")");
  }
  if (m.topk_method == MoeConfig::TopkMethod::kGreedy) return OkStatus();
  if (m.n_routed_experts % m.n_group != 0) {
    return Invalid(path, "'n_routed_experts' (" + Str(m.n_routed_experts) +
                             ") is not divisible by 'n_group' (" + Str(m.n_group) + ")");
  }
  if (m.topk_group > m.n_group) {
    return Invalid(path, "'topk_group' (" + Str(m.topk_group) + ") exceeds 'n_group' (" +
                             Str(m.n_group) + ")");
  }
  const int64_t per_group = m.n_routed_experts / m.n_group;
  if (m.num_experts_per_tok > m.topk_group * per_group) {
    return Invalid(path, "'num_experts_per_tok' (" + Str(m.num_experts_per_tok) +
                             ") exceeds the experts of 'topk_group' groups (" +
                             Str(m.topk_group) + " x " + Str(per_group) + ")");
  }
  // noaux_tc scores a group by the sum of its top 2 experts (topk(2) in DeepSeek's code).
  if (m.topk_method == MoeConfig::TopkMethod::kNoauxTc && per_group < 2) {
    return Invalid(path, "'topk_method' noaux_tc needs at least 2 experts per group, got "
                         "'n_routed_experts' / 'n_group' = " + Str(per_group));
  }
  return OkStatus();
}

}  // namespace

void ReadDeepseekFields(ConfigReader& reader, ModelConfig* config) {
  MlaConfig mla;
  ReadMla(reader, &mla);
  config->mla = mla;
  ReadMoe(reader, config);
}

void ReadYarnRopeScaling(ConfigReader& reader, RopeScaling* rope) {
  rope->type = RopeScaling::Type::kYarn;
  if (reader.Require("factor")) reader.Positive("factor", &rope->factor);
  if (reader.Require("original_max_position_embeddings")) {
    reader.Int("original_max_position_embeddings", &rope->original_max_position_embeddings);
  }
  reader.Positive("beta_fast", &rope->beta_fast);
  reader.Positive("beta_slow", &rope->beta_slow);
  reader.Finite("mscale", &rope->mscale);
  reader.Finite("mscale_all_dim", &rope->mscale_all_dim);
  // factor < 1 would turn interpolation into extrapolation; YaRN is defined for >= 1.
  if (reader.ok() && rope->factor < 1.0) {
    reader.Fail(StatusCode::kInvalidArgument, "'rope_scaling.factor' must be >= 1 for yarn, got " +
                                                  std::to_string(rope->factor));
  }
}

// FP8 as DeepSeek-V3/R1 ship it is recorded; any other method (GPTQ, AWQ, bitsandbytes,
// per-tensor fp8...) stores weights surge would misread, so it is refused by name.
void ReadQuantizationConfig(ConfigReader& outer, const std::string& path, Status* status,
                            ModelConfig* config) {
  if (!outer.Has("quantization_config")) return;
  const Json& object = outer.At("quantization_config");
  if (!object.is_object()) return outer.WrongType("quantization_config", "an object", object);
  ConfigReader reader(object, path, status, "quantization_config.");
  std::string method, fmt = "e4m3";
  if (reader.Require("quant_method")) reader.String("quant_method", &method);
  reader.String("fmt", &fmt);
  if (!reader.ok()) return;
  if (method != "fp8" || fmt != "e4m3") {
    return reader.Fail(StatusCode::kUnimplemented,
                       "unsupported quantization_config (quant_method '" + method + "', fmt '" +
                           fmt + "'; supported: fp8 e4m3 with weight_block_size)");
  }
  Fp8Quantization fp8;
  reader.String("activation_scheme", &fp8.activation_scheme);
  if (!reader.Require("weight_block_size")) return;
  const Json& block = reader.At("weight_block_size");
  if (!block.is_array() || block.size() != 2 || !block[0].is_number_integer() ||
      !block[1].is_number_integer() || block[0].get<int64_t>() <= 0 ||
      block[1].get<int64_t>() <= 0) {
    return reader.Fail(StatusCode::kInvalidArgument,
                       "key 'quantization_config.weight_block_size' must be two positive "
                       "integers, got " + block.dump());
  }
  fp8.block_rows = block[0].get<int64_t>();
  fp8.block_cols = block[1].get<int64_t>();
  config->fp8 = fp8;
}

Status ValidateDeepseek(const ModelConfig& c, const std::string& path) {
  if (c.mla && c.mla->qk_rope_head_dim % 2 != 0) {
    return Invalid(path, "'qk_rope_head_dim' " + Str(c.mla->qk_rope_head_dim) +
                             " is odd; rotary embeddings rotate pairs");
  }
  if (c.moe) RETURN_IF_ERROR(ValidateMoe(*c.moe, path));
  return OkStatus();
}

}  // namespace surge::config_internal
