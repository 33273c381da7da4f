// WeightLoader::LoadMlaAttention / LoadMoe: DeepSeek V2/V3 layers -- MLA's projections (rope
// rows de-interleaved, kv_b_proj split per head for weight absorption) and the routed
// and shared experts of an MoE MLP.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "model/weight_loader.h"
#include "model/weight_source.h"

namespace surge {
namespace {

// Row order that de-interleaves the rope part of `num_groups` groups of `group_rows`
// rows whose last `rope` rows are (x0, x1, x2, ...) pairs: (x0, x2, ..., x1, x3, ...),
// as DeepSeek's apply_rotary_pos_emb reorders q_pe and k_pe before rotating halves.
std::vector<int32_t> DeinterleaveRope(int64_t num_groups, int64_t group_rows, int64_t rope) {
  std::vector<int32_t> rows(num_groups * group_rows);
  std::iota(rows.begin(), rows.end(), 0);
  for (int64_t g = 0; g < num_groups; ++g) {
    const int64_t base = g * group_rows + group_rows - rope;
    for (int64_t i = 0; i < rope / 2; ++i) {
      rows[base + i] = static_cast<int32_t>(base + 2 * i);
      rows[base + rope / 2 + i] = static_cast<int32_t>(base + 2 * i + 1);
    }
  }
  return rows;
}

// The per-head matrices cut from kv_b_proj (absorbed W_UK^T / W_UV, or expanded) take the
// stored tensor's format, as every other linear of a GGUF file does (Q8_0 -> int8 per
// row), so a quantized file's absorption streams int8 rather than f32 (4x the bytes:
// 40% of a DeepSeek-V3-bench decode step of one, docs/DECODE_PROFILE.md). int4 groups do
// not survive the transpose, so int4 data takes the format GGUF gives Q8_0 instead.
// Float data takes the load options' format.
WeightFormat KvBFormat(const LinearWeightData& data, WeightFormat float_format, WeightDType gguf_wide) {
  if (!data.native) return float_format;
  if (data.native->dtype == WeightDType::kInt4) return {gguf_wide};
  return *data.native;
}

}  // namespace

Status WeightLoader::LoadMlaAttention(const WeightSource& store, const std::string& a, LayerWeights& layer) {
  const MlaConfig& m = *config_.mla;
  const int64_t hidden = config_.hidden_size, heads = config_.num_heads;
  const int64_t latent = m.kv_lora_rank, rope = m.qk_rope_head_dim;
  const int64_t nope = m.qk_nope_head_dim, v = m.v_head_dim;
  auto mla = std::make_unique<MlaWeights>();
  // First projection: the query rows (rope rows de-interleaved unless q_lora_rank is
  // set, when q_b_proj holds them) and kv_a's [latent, k_pe] rows.
  Projection kv_a{a + "kv_a_proj_with_mqa", latent + rope, DeinterleaveRope(1, latent + rope, rope)};
  Projection q{a + "q_proj", heads * m.q_head_dim(), DeinterleaveRope(heads, m.q_head_dim(), rope)};
  if (m.q_lora_rank > 0) {
    q = {a + "q_a_proj", m.q_lora_rank};
    ASSIGN_OR_RETURN(mla->q_a_norm, store.LoadF32(a + "q_a_layernorm.weight", {m.q_lora_rank}));
    RETURN_IF_ERROR(LoadLinear(store,
                               {{a + "q_b_proj", heads * m.q_head_dim(),
                                 DeinterleaveRope(heads, m.q_head_dim(), rope)}},
                               m.q_lora_rank, /*has_bias=*/false, mla->q_b));
  }
  RETURN_IF_ERROR(LoadLinear(store, {q, kv_a}, hidden, /*has_bias=*/false, layer.qkv));
  ASSIGN_OR_RETURN(mla->kv_a_norm, store.LoadF32(a + "kv_a_layernorm.weight", {latent}));
  // kv_b_proj [heads * (nope + v), latent]: per head nope K rows, then v V rows.
  ASSIGN_OR_RETURN(LinearWeightData kv_b_data,
                   store.LoadLinearWeight(a + "kv_b_proj", heads * (nope + v), latent));
  const WeightFormat format = KvBFormat(kv_b_data, LinearFormat(), options_.gguf_wide_quant_dtype);
  const std::vector<float> kv_b = std::move(kv_b_data).TakeF32();
  std::vector<float> k_all(heads * nope * latent), v_all(heads * v * latent);
  for (int64_t h = 0; h < heads; ++h) {
    const float* k_rows = &kv_b[h * (nope + v) * latent];
    const float* v_rows = k_rows + nope * latent;
    std::copy_n(k_rows, nope * latent, &k_all[h * nope * latent]);
    std::copy_n(v_rows, v * latent, &v_all[h * v * latent]);
  }
  if (options_.mla_mode == LoadOptions::MlaMode::kExpanded) {
    mla->k_up_all.weight = PackedWeight::Pack(k_all.data(), heads * nope, latent, format, pool_);
    mla->v_up_all.weight = PackedWeight::Pack(v_all.data(), heads * v, latent, format, pool_);
  } else {
    std::vector<float> transposed(latent * nope);  // W_UK[h]^T: [latent, nope]
    for (int64_t h = 0; h < heads; ++h) {
      const float* k_rows = &k_all[h * nope * latent];
      for (int64_t i = 0; i < nope; ++i) {
        for (int64_t j = 0; j < latent; ++j) transposed[j * nope + i] = k_rows[i * latent + j];
      }
      mla->k_up_transposed.push_back(
          PackedWeight::Pack(transposed.data(), latent, nope, format, pool_));
      mla->v_up.push_back(PackedWeight::Pack(&v_all[h * v * latent], v, latent, format, pool_));
    }
  }
  layer.mla = std::move(mla);
  return LoadLinear(store, {{a + "o_proj", hidden}}, heads * v, /*has_bias=*/false, layer.o_proj);
}

Status WeightLoader::LoadMoe(const WeightSource& store, const std::string& m, LayerWeights& layer) {
  const MoeConfig& c = *config_.moe;
  const int64_t hidden = config_.hidden_size, inter = c.moe_intermediate_size;
  auto moe = std::make_unique<MoeWeights>();
  ASSIGN_OR_RETURN(std::vector<float> router,
                   store.LoadF32(m + "gate.weight", {c.n_routed_experts, hidden}));
  // The router stays f32 whatever the load format: its logits pick the experts.
  moe->router = PackedWeight::Pack(router.data(), c.n_routed_experts, hidden,
                                   {WeightDType::kF32}, pool_);
  if (c.score_correction_bias) {
    ASSIGN_OR_RETURN(moe->score_bias,
                     store.LoadF32(m + "gate.e_score_correction_bias", {c.n_routed_experts}));
  }
  moe->experts.resize(c.n_routed_experts);
  for (int64_t e = 0; e < c.n_routed_experts; ++e) {
    const std::string p = m + "experts." + std::to_string(e) + ".";
    MoeWeights::Expert& expert = moe->experts[e];
    RETURN_IF_ERROR(LoadLinear(store, {{p + "gate_proj", inter}, {p + "up_proj", inter}}, hidden,
                               /*has_bias=*/false, expert.gate_up));
    RETURN_IF_ERROR(
        LoadLinear(store, {{p + "down_proj", hidden}}, inter, /*has_bias=*/false, expert.down));
  }
  layer.moe = std::move(moe);
  if (c.n_shared_experts == 0) return OkStatus();
  return LoadMlp(store, m + "shared_experts.", inter * c.n_shared_experts, layer);
}

}  // namespace surge
