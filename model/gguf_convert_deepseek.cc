// AddDeepseek2Tensors: a DeepSeek V2/V3 checkpoint's tensors as llama.cpp's converter
// (convert_hf_to_gguf.py, DeepseekV2Model.modify_tensors) writes them.
#include <algorithm>
#include <utility>
#include <string>
#include <vector>

#include "base/check.h"
#include "model/gguf_deepseek.h"
#include "model/gguf_names.h"

namespace surge {
namespace {

using Shape = std::vector<int64_t>;

// The tensor as f32; matrices through LoadLinearWeight, which applies an FP8
// checkpoint's block scales.
StatusOr<std::vector<float>> Load(const WeightSource& store, const std::string& hf_name,
                                  const Shape& shape) {
  const std::string weight = ".weight";
  if (shape.size() != 2 || hf_name.size() <= weight.size() ||
      hf_name.compare(hf_name.size() - weight.size(), weight.size(), weight) != 0) {
    return store.LoadF32(hf_name, shape);
  }
  ASSIGN_OR_RETURN(LinearWeightData data,
                   store.LoadLinearWeight(hf_name.substr(0, hf_name.size() - weight.size()),
                                          shape[0], shape[1]));
  CHECK(!data.is_int4()) << hf_name;  // only GGUF sources hold int4 groups
  return std::move(data.f32);
}

// The tensor unchanged, under its GGUF name.
Status AddAsIs(const WeightSource& store, const std::string& hf_name, const Shape& shape,
               const GgufTensorAdder& add) {
  ASSIGN_OR_RETURN(std::vector<float> values, Load(store, hf_name, shape));
  return add(*GgufTensorNameForHf(hf_name), shape, values);
}

// kv_b_proj [heads * (nope + v), latent] -> attn_k_b [heads, latent, nope] (each head's
// K rows transposed, for absorbing W_UK into the query) and attn_v_b [heads, v, latent].
Status AddSplitKvB(const WeightSource& store, const ModelConfig& c, const std::string& a,
                   const GgufTensorAdder& add) {
  const MlaConfig& m = *c.mla;
  const int64_t heads = c.num_heads, nope = m.qk_nope_head_dim, v = m.v_head_dim;
  const int64_t latent = m.kv_lora_rank;
  ASSIGN_OR_RETURN(std::vector<float> kv_b,
                   Load(store, a + "kv_b_proj.weight", {heads * (nope + v), latent}));
  std::vector<float> k_b(heads * latent * nope), v_b(heads * v * latent);
  for (int64_t h = 0; h < heads; ++h) {
    const float* head = &kv_b[h * (nope + v) * latent];
    for (int64_t i = 0; i < nope; ++i) {
      for (int64_t j = 0; j < latent; ++j) k_b[(h * latent + j) * nope + i] = head[i * latent + j];
    }
    std::copy_n(head + nope * latent, v * latent, &v_b[h * v * latent]);
  }
  RETURN_IF_ERROR(add(*GgufTensorNameForHf(a + "k_b_proj.weight"), {heads, latent, nope}, k_b));
  return add(*GgufTensorNameForHf(a + "v_b_proj.weight"), {heads, v, latent}, v_b);
}

Status AddAttention(const WeightSource& store, const ModelConfig& c, const std::string& a,
                    const GgufTensorAdder& add) {
  const MlaConfig& m = *c.mla;
  const int64_t hidden = c.hidden_size, q = c.num_heads * m.q_head_dim();
  if (m.q_lora_rank == 0) {
    RETURN_IF_ERROR(AddAsIs(store, a + "q_proj.weight", {q, hidden}, add));
  } else {
    RETURN_IF_ERROR(AddAsIs(store, a + "q_a_proj.weight", {m.q_lora_rank, hidden}, add));
    RETURN_IF_ERROR(AddAsIs(store, a + "q_a_layernorm.weight", {m.q_lora_rank}, add));
    RETURN_IF_ERROR(AddAsIs(store, a + "q_b_proj.weight", {q, m.q_lora_rank}, add));
  }
  RETURN_IF_ERROR(AddAsIs(store, a + "kv_a_proj_with_mqa.weight",
                          {m.kv_lora_rank + m.qk_rope_head_dim, hidden}, add));
  RETURN_IF_ERROR(AddAsIs(store, a + "kv_a_layernorm.weight", {m.kv_lora_rank}, add));
  RETURN_IF_ERROR(AddSplitKvB(store, c, a, add));
  return AddAsIs(store, a + "o_proj.weight", {hidden, c.num_heads * m.v_head_dim}, add);
}

Status AddMlp(const WeightSource& store, const std::string& p, int64_t hidden, int64_t inter,
              const GgufTensorAdder& add) {
  RETURN_IF_ERROR(AddAsIs(store, p + "gate_proj.weight", {inter, hidden}, add));
  RETURN_IF_ERROR(AddAsIs(store, p + "up_proj.weight", {inter, hidden}, add));
  return AddAsIs(store, p + "down_proj.weight", {hidden, inter}, add);
}

// Router, selection bias, the routed experts stacked per projection, shared experts.
Status AddMoe(const WeightSource& store, const ModelConfig& c, const std::string& p,
              const GgufTensorAdder& add) {
  const MoeConfig& e = *c.moe;
  const int64_t hidden = c.hidden_size, inter = e.moe_intermediate_size;
  const int64_t n = e.n_routed_experts;
  RETURN_IF_ERROR(AddAsIs(store, p + "gate.weight", {n, hidden}, add));
  if (e.score_correction_bias) {
    RETURN_IF_ERROR(AddAsIs(store, p + "gate.e_score_correction_bias", {n}, add));
  }
  const std::pair<const char*, Shape> projections[] = {
      {"down_proj", {hidden, inter}}, {"gate_proj", {inter, hidden}}, {"up_proj", {inter, hidden}}};
  for (const auto& [proj, shape] : projections) {
    std::vector<float> stacked;  // [n, rows, cols]
    stacked.reserve(n * shape[0] * shape[1]);
    for (int64_t x = 0; x < n; ++x) {
      const std::string name = p + "experts." + std::to_string(x) + "." + proj + ".weight";
      ASSIGN_OR_RETURN(std::vector<float> values, Load(store, name, shape));
      stacked.insert(stacked.end(), values.begin(), values.end());
    }
    const std::string name = GgufTensorRefForHf(p + "experts.0." + proj + ".weight")->name;
    RETURN_IF_ERROR(add(name, {n, shape[0], shape[1]}, stacked));
  }
  if (e.n_shared_experts == 0) return OkStatus();
  return AddMlp(store, p + "shared_experts.", hidden, inter * e.n_shared_experts, add);
}

}  // namespace

Status AddDeepseek2Tensors(const WeightSource& store, const ModelConfig& c,
                           const GgufTensorAdder& add) {
  const int64_t hidden = c.hidden_size;
  RETURN_IF_ERROR(AddAsIs(store, "model.embed_tokens.weight", {c.vocab_size, hidden}, add));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    RETURN_IF_ERROR(AddAsIs(store, p + "input_layernorm.weight", {hidden}, add));
    RETURN_IF_ERROR(AddAttention(store, c, p + "self_attn.", add));
    RETURN_IF_ERROR(AddAsIs(store, p + "post_attention_layernorm.weight", {hidden}, add));
    if (IsMoeLayer(c, i)) {
      RETURN_IF_ERROR(AddMoe(store, c, p + "mlp.", add));
    } else {
      RETURN_IF_ERROR(AddMlp(store, p + "mlp.", hidden, c.intermediate_size, add));
    }
  }
  RETURN_IF_ERROR(AddAsIs(store, "model.norm.weight", {hidden}, add));
  if (c.tie_word_embeddings) return OkStatus();
  return AddAsIs(store, "lm_head.weight", {c.vocab_size, hidden}, add);
}

}  // namespace surge
