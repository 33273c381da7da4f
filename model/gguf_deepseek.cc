#include "model/gguf_deepseek.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/gguf_weights.h"

namespace surge {
namespace {

constexpr const char* kArch = "deepseek2.";
constexpr int64_t kMaxSize = int64_t{1} << 24;  // bounds sizes before anything is sized by them

// llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_*.
constexpr int64_t kGatingSoftmax = 1;
constexpr int64_t kGatingSigmoid = 2;

std::string Key(const std::string& name) { return kArch + name; }
std::string Str(int64_t v) { return std::to_string(v); }

Status Invalid(const GgufFile& f, const std::string& message) {
  return InvalidArgumentError(f.path() + ": " + message);
}

// A required size key in [min, 2^24].
StatusOr<int64_t> Size(const GgufFile& f, const std::string& name, int64_t min = 1) {
  ASSIGN_OR_RETURN(int64_t v, f.GetInt(Key(name)));
  if (v < min || v > kMaxSize) return Invalid(f, Key(name) + " = " + Str(v) + " is out of range");
  return v;
}
StatusOr<int64_t> SizeOr(const GgufFile& f, const std::string& name, int64_t fallback,
                         int64_t min = 0) {
  if (!f.Has(Key(name))) return fallback;
  return Size(f, name, min);
}

// MLA widths: key_length_mla/value_length_mla (split attn_k_b/attn_v_b files) or the
// legacy key_length/value_length (attn_kv_b files).
Status ReadMla(const GgufFile& f, ModelConfig* c) {
  MlaConfig m;
  ASSIGN_OR_RETURN(m.q_lora_rank, SizeOr(f, "attention.q_lora_rank", 0));
  ASSIGN_OR_RETURN(m.kv_lora_rank, Size(f, "attention.kv_lora_rank"));
  ASSIGN_OR_RETURN(m.qk_rope_head_dim, Size(f, "rope.dimension_count"));
  if (m.qk_rope_head_dim % 2 != 0) {
    return Invalid(f, Key("rope.dimension_count") + " = " + Str(m.qk_rope_head_dim) +
                          " is odd; rotary embeddings rotate pairs");
  }
  const bool split = f.Has(Key("attention.key_length_mla"));
  const std::string k = split ? "attention.key_length_mla" : "attention.key_length";
  const std::string v = split ? "attention.value_length_mla" : "attention.value_length";
  ASSIGN_OR_RETURN(const int64_t q_head_dim, Size(f, k));
  ASSIGN_OR_RETURN(m.v_head_dim, Size(f, v));
  m.qk_nope_head_dim = q_head_dim - m.qk_rope_head_dim;
  if (m.qk_nope_head_dim < 1) {
    return Invalid(f, Key(k) + " = " + Str(q_head_dim) + " leaves no non-rope dimensions (" +
                          Key("rope.dimension_count") + " = " + Str(m.qk_rope_head_dim) + ")");
  }
  if (split) {  // the MQA view of the latent, as llama.cpp's converter writes it
    const std::pair<const char*, int64_t> latent[] = {
        {"attention.key_length", m.kv_lora_rank + m.qk_rope_head_dim},
        {"attention.value_length", m.kv_lora_rank}};
    for (const auto& [name, want] : latent) {
      ASSIGN_OR_RETURN(int64_t got, GgufIntOr(f, Key(name), want));
      if (got != want) {
        return Invalid(f, Key(name) + " = " + Str(got) + ", expected " + Str(want) +
                              " (kv_lora_rank" + (want > m.kv_lora_rank ? " + rope)" : ")"));
      }
    }
  }
  c->mla = m;
  c->head_dim = q_head_dim;
  return OkStatus();
}

Status ReadYarn(const GgufFile& f, RopeScaling* s) {
  s->type = RopeScaling::Type::kYarn;
  ASSIGN_OR_RETURN(s->factor, f.GetFloat(Key("rope.scaling.factor")));
  if (!(s->factor >= 1.0)) {
    return Invalid(f, Key("rope.scaling.factor") + " must be >= 1 for yarn, got " +
                          std::to_string(s->factor));
  }
  ASSIGN_OR_RETURN(s->original_max_position_embeddings,
                   SizeOr(f, "rope.scaling.original_context_length",
                          s->original_max_position_embeddings, 1));
  ASSIGN_OR_RETURN(s->beta_fast, GgufFloatOr(f, Key("rope.scaling.yarn_beta_fast"), 32.0));
  ASSIGN_OR_RETURN(s->beta_slow, GgufFloatOr(f, Key("rope.scaling.yarn_beta_slow"), 1.0));
  for (const char* name : {"rope.scaling.yarn_ext_factor", "rope.scaling.attn_factor"}) {
    ASSIGN_OR_RETURN(double value, GgufFloatOr(f, Key(name), 1.0));
    if (value != 1.0) {
      return UnimplementedError(f.path() + ": " + Key(name) + " = " + std::to_string(value) +
                                " is not supported (1 only)");
    }
  }
  const std::string log_mul = Key("rope.scaling.yarn_log_multiplier");
  if (!f.Has(log_mul)) {
    return UnimplementedError(f.path() + ": yarn without " + log_mul +
                              " (DeepSeek's mscale_all_dim) is not supported");
  }
  ASSIGN_OR_RETURN(double value, f.GetFloat(log_mul));
  if (!std::isfinite(value)) return Invalid(f, log_mul + " is not finite");
  // 0.1 * mscale_all_dim (convert_hf_to_gguf.py, TAG_DEEPSEEK2_YARN_LOG_MUL_FIX); llama.cpp
  // leaves the rotation unscaled, which is DeepSeek's with mscale == mscale_all_dim.
  s->mscale_all_dim = s->mscale = value / 0.1;
  return OkStatus();
}

Status ReadRope(const GgufFile& f, ModelConfig* c) {
  ASSIGN_OR_RETURN(c->rope_theta, GgufFloatOr(f, Key("rope.freq_base"), 10000.0));
  const std::string key = Key("rope.scaling.type");
  std::string type = "none";
  if (f.Has(key)) {
    ASSIGN_OR_RETURN(type, f.GetString(key));
  }
  if (type == "none") return OkStatus();
  if (type == "yarn") return ReadYarn(f, &c->rope_scaling);
  if (type != "linear") {
    return UnimplementedError(f.path() + ": " + key + " '" + type +
                              "' is not supported (none, linear, yarn)");
  }
  c->rope_scaling.type = RopeScaling::Type::kLinear;
  ASSIGN_OR_RETURN(c->rope_scaling.factor, f.GetFloat(Key("rope.scaling.factor")));
  return OkStatus();
}

Status ValidateGroups(const GgufFile& f, const MoeConfig& m) {
  if (m.n_routed_experts % m.n_group != 0) {
    return Invalid(f, Key("expert_count") + " = " + Str(m.n_routed_experts) +
                          " is not divisible by " + Key("expert_group_count") + " = " +
                          Str(m.n_group));
  }
  const int64_t per_group = m.n_routed_experts / m.n_group;
  if (m.topk_group < 1 || m.topk_group > m.n_group) {
    return Invalid(f, Key("expert_group_used_count") + " = " + Str(m.topk_group) +
                          " must be in [1, " + Key("expert_group_count") + " = " +
                          Str(m.n_group) + "]");
  }
  if (m.num_experts_per_tok > m.topk_group * per_group) {
    return Invalid(f, Key("expert_used_count") + " = " + Str(m.num_experts_per_tok) +
                          " exceeds the experts of the used groups (" + Str(m.topk_group) +
                          " x " + Str(per_group) + ")");
  }
  if (per_group < 2) {  // groups are scored by their best two
    return Invalid(f, "group-limited routing needs 2 experts per group, " + Key("expert_count") +
                          " / " + Key("expert_group_count") + " = " + Str(per_group));
  }
  return OkStatus();
}

// The gate: scoring function, normalization and scale of the top-k weights, groups.
Status ReadGate(const GgufFile& f, MoeConfig* m) {
  ASSIGN_OR_RETURN(int64_t gating, GgufIntOr(f, Key("expert_gating_func"), kGatingSoftmax));
  if (gating != 0 && gating != kGatingSoftmax && gating != kGatingSigmoid) {
    return UnimplementedError(f.path() + ": " + Key("expert_gating_func") + " = " + Str(gating) +
                              " is not supported (1 softmax, 2 sigmoid)");
  }
  m->scoring_func = gating == kGatingSigmoid ? MoeConfig::Scoring::kSigmoid
                                             : MoeConfig::Scoring::kSoftmax;
  if (f.Has(Key("expert_weights_norm"))) {
    ASSIGN_OR_RETURN(m->norm_topk_prob, f.GetBool(Key("expert_weights_norm")));
  }
  ASSIGN_OR_RETURN(m->routed_scaling_factor, GgufFloatOr(f, Key("expert_weights_scale"), 0.0));
  if (!std::isfinite(m->routed_scaling_factor) || m->routed_scaling_factor < 0) {
    return Invalid(f, Key("expert_weights_scale") + " must be finite and >= 0");
  }
  if (m->routed_scaling_factor == 0) m->routed_scaling_factor = 1.0;  // llama.cpp: no scaling
  ASSIGN_OR_RETURN(m->n_group, SizeOr(f, "expert_group_count", 1, 1));
  ASSIGN_OR_RETURN(m->topk_group, SizeOr(f, "expert_group_used_count", m->n_group, 0));
  return OkStatus();
}

Status ReadMoe(const GgufFile& f, ModelConfig* c) {
  ASSIGN_OR_RETURN(const int64_t experts, SizeOr(f, "expert_count", 0));
  if (experts == 0) return OkStatus();  // every layer dense
  MoeConfig m;
  m.n_routed_experts = experts;
  if (experts > kMaxRoutedExperts) {
    return Invalid(f, Key("expert_count") + " = " + Str(experts) + " exceeds " +
                          Str(kMaxRoutedExperts));
  }
  ASSIGN_OR_RETURN(m.num_experts_per_tok, Size(f, "expert_used_count"));
  if (m.num_experts_per_tok > experts) {
    return Invalid(f, Key("expert_used_count") + " = " + Str(m.num_experts_per_tok) +
                          " exceeds " + Key("expert_count") + " = " + Str(experts));
  }
  ASSIGN_OR_RETURN(m.moe_intermediate_size, Size(f, "expert_feed_forward_length"));
  ASSIGN_OR_RETURN(m.n_shared_experts, SizeOr(f, "expert_shared_count", 0));
  ASSIGN_OR_RETURN(m.first_k_dense_replace, SizeOr(f, "leading_dense_block_count", 0));
  if (m.first_k_dense_replace > c->num_layers) {
    return Invalid(f, Key("leading_dense_block_count") + " = " + Str(m.first_k_dense_replace) +
                          " exceeds the " + Str(c->num_layers) + " decoder layers");
  }
  RETURN_IF_ERROR(ReadGate(f, &m));
  const std::string bias = "blk." + Str(std::min(m.first_k_dense_replace, c->num_layers - 1)) +
                           ".exp_probs_b.bias";
  m.score_correction_bias = f.FindTensor(bias) != nullptr;
  if (m.n_group > 1 || m.score_correction_bias) {
    m.topk_method = MoeConfig::TopkMethod::kNoauxTc;
    RETURN_IF_ERROR(ValidateGroups(f, m));
  } else {
    m.n_group = m.topk_group = 1;
  }
  c->moe = m;
  return OkStatus();
}

}  // namespace

Status ReadDeepseek2Config(const GgufFile& f, ModelConfig* c) {
  ASSIGN_OR_RETURN(c->hidden_size, Size(f, "embedding_length"));
  ASSIGN_OR_RETURN(const int64_t blocks, Size(f, "block_count"));
  ASSIGN_OR_RETURN(c->num_nextn_predict_layers, SizeOr(f, "nextn_predict_layers", 0));
  if (c->num_nextn_predict_layers >= blocks) {
    return Invalid(f, Key("nextn_predict_layers") + " = " + Str(c->num_nextn_predict_layers) +
                          " leaves no decoder layers of " + Key("block_count") + " = " +
                          Str(blocks));
  }
  c->num_layers = blocks - c->num_nextn_predict_layers;  // MTP layers come last
  ASSIGN_OR_RETURN(c->intermediate_size, Size(f, "feed_forward_length"));
  ASSIGN_OR_RETURN(c->num_heads, Size(f, "attention.head_count"));
  c->num_kv_heads = c->num_heads;  // as config.json has it; the cache holds the latent
  ASSIGN_OR_RETURN(c->max_position_embeddings, Size(f, "context_length"));
  ASSIGN_OR_RETURN(c->rms_norm_eps, f.GetFloat(Key("attention.layer_norm_rms_epsilon")));
  RETURN_IF_ERROR(ReadMla(f, c));
  c->rope_scaling.original_max_position_embeddings = c->max_position_embeddings;
  RETURN_IF_ERROR(ReadRope(f, c));
  RETURN_IF_ERROR(ReadMoe(f, c));
  // V2 and V3 route alike but for V3's scaling of normalized weights, which llama.cpp
  // always applies: V3 whenever that differs (or the gate is V3's sigmoid).
  const bool v3 = c->moe && (c->moe->scoring_func == MoeConfig::Scoring::kSigmoid ||
                             (c->moe->norm_topk_prob && c->moe->routed_scaling_factor != 1.0));
  c->architecture = v3 ? Architecture::kDeepseekV3 : Architecture::kDeepseekV2;
  const std::string last = "blk." + Str(c->num_layers - 1) + ".attn_norm.weight";
  if (f.FindTensor(last) == nullptr) {
    return NotFoundError(f.path() + ": " + Key("block_count") + " gives " + Str(c->num_layers) +
                         " decoder layers but tensor '" + last + "' is missing");
  }
  return OkStatus();
}

namespace {

void SetU32(GgufWriter& w, const std::string& name, int64_t v) {
  w.SetU32(Key(name), static_cast<uint32_t>(v));
}

Status CheckExpressible(const ModelConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  auto unimplemented = [&c](const std::string& what) {
    return UnimplementedError("GGUF deepseek2 cannot express " + c.model_type + " with " + what);
  };
  if (c.moe && c.moe->moe_layer_freq != 1) return unimplemented("moe_layer_freq != 1");
  if (s.type == RopeScaling::Type::kYarn && s.mscale != s.mscale_all_dim) {
    return unimplemented("YaRN mscale != mscale_all_dim (llama.cpp does not scale the rotation)");
  }
  if (s.type == RopeScaling::Type::kLlama3) return unimplemented("llama3 rope scaling");
  if (c.moe && c.moe->topk_method == MoeConfig::TopkMethod::kGroupLimitedGreedy &&
      c.moe->topk_group < c.moe->n_group) {
    return unimplemented("group_limited_greedy (llama.cpp scores groups by their top-2 sum)");
  }
  return OkStatus();
}

void WriteMoe(const ModelConfig& c, GgufWriter& w) {
  if (!c.moe) {
    SetU32(w, "leading_dense_block_count", c.num_layers);
    SetU32(w, "expert_feed_forward_length", c.intermediate_size);  // llama.cpp requires it
    SetU32(w, "expert_shared_count", 0);
    return;
  }
  const MoeConfig& e = *c.moe;
  SetU32(w, "leading_dense_block_count", e.first_k_dense_replace);
  SetU32(w, "expert_count", e.n_routed_experts);
  SetU32(w, "expert_used_count", e.num_experts_per_tok);
  SetU32(w, "expert_group_count", e.n_group);
  SetU32(w, "expert_group_used_count", e.topk_group);
  SetU32(w, "expert_gating_func",
         e.scoring_func == MoeConfig::Scoring::kSigmoid ? kGatingSigmoid : kGatingSoftmax);
  SetU32(w, "expert_feed_forward_length", e.moe_intermediate_size);
  SetU32(w, "expert_shared_count", e.n_shared_experts);
  const bool v2_normalized = c.architecture == Architecture::kDeepseekV2 && e.norm_topk_prob &&
                             e.num_experts_per_tok > 1;
  w.SetF32(Key("expert_weights_scale"),
           static_cast<float>(v2_normalized ? 1.0 : e.routed_scaling_factor));
  if (e.norm_topk_prob) w.SetBool(Key("expert_weights_norm"), true);
}

void WriteRopeScaling(const RopeScaling& s, GgufWriter& w) {
  if (s.type == RopeScaling::Type::kLinear) {
    w.SetString(Key("rope.scaling.type"), "linear");
    w.SetF32(Key("rope.scaling.factor"), static_cast<float>(s.factor));
  } else if (s.type == RopeScaling::Type::kYarn) {
    w.SetString(Key("rope.scaling.type"), "yarn");
    w.SetF32(Key("rope.scaling.factor"), static_cast<float>(s.factor));
    SetU32(w, "rope.scaling.original_context_length", s.original_max_position_embeddings);
    w.SetF32(Key("rope.scaling.yarn_beta_fast"), static_cast<float>(s.beta_fast));
    w.SetF32(Key("rope.scaling.yarn_beta_slow"), static_cast<float>(s.beta_slow));
    w.SetF32(Key("rope.scaling.yarn_log_multiplier"), static_cast<float>(0.1 * s.mscale_all_dim));
  }
}

}  // namespace

Status WriteDeepseek2Metadata(const ModelConfig& c, GgufWriter& w) {
  RETURN_IF_ERROR(CheckExpressible(c));
  const MlaConfig& m = *c.mla;
  SetU32(w, "context_length", c.max_position_embeddings);
  SetU32(w, "embedding_length", c.hidden_size);
  SetU32(w, "feed_forward_length", c.intermediate_size);
  SetU32(w, "attention.head_count", c.num_heads);
  SetU32(w, "attention.head_count_kv", 1);  // MLA as MQA over the latent
  w.SetF32(Key("rope.freq_base"), static_cast<float>(c.rope_theta));
  w.SetF32(Key("attention.layer_norm_rms_epsilon"), static_cast<float>(c.rms_norm_eps));
  SetU32(w, "block_count", c.num_layers);  // MTP layers are not written
  SetU32(w, "vocab_size", c.vocab_size);
  SetU32(w, "attention.q_lora_rank", m.q_lora_rank);  // 0: null
  SetU32(w, "attention.kv_lora_rank", m.kv_lora_rank);
  SetU32(w, "attention.key_length", m.kv_lora_rank + m.qk_rope_head_dim);
  SetU32(w, "attention.value_length", m.kv_lora_rank);
  SetU32(w, "attention.key_length_mla", m.q_head_dim());
  SetU32(w, "attention.value_length_mla", m.v_head_dim);
  SetU32(w, "rope.dimension_count", m.qk_rope_head_dim);
  WriteMoe(c, w);
  WriteRopeScaling(c.rope_scaling, w);
  return OkStatus();
}

}  // namespace surge
