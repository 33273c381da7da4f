// llama.cpp's `deepseek2` GGUF architecture (DeepSeek V2/V3/R1): its metadata read into
// and written from ModelConfig's MlaConfig, MoeConfig and YaRN RopeScaling, with the
// semantics llama.cpp gives them (src/models/deepseek2.cpp, llama-graph.cpp's
// build_moe_ffn).
//
// Layout (convert_hf_to_gguf.py's DeepseekV2Model): weights as in the HF checkpoint --
// no rope permutation: llama.cpp rotates adjacent pairs, which is what DeepSeek's
// interleaved q_pe/k_pe are, so surge de-interleaves the rope rows at load exactly as
// for the HF checkpoint. MLA is written as MQA over the latent: head_count_kv 1,
// key_length = kv_lora_rank + rope, value_length = kv_lora_rank, key_length_mla /
// value_length_mla the per-head q/k and v widths, and kv_b_proj split per head into
// attn_k_b ([heads, latent, nope], W_UK transposed) and attn_v_b ([heads, v, latent]).
// Older files keep attn_kv_b and key_length/value_length = the per-head widths.
// Routed experts are 3-D tensors ffn_{gate,up,down}_exps; the router ffn_gate_inp is F32.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/config.h"
#include "model/weight_source.h"

namespace surge {

// Reads `deepseek2.*` into `c`: everything but the vocabulary size, tied output and
// special tokens. Mapping onto llama.cpp's semantics:
//   - rope.scaling.yarn_log_multiplier = 0.1 * mscale_all_dim; llama.cpp's rotation is
//     unscaled, i.e. mscale == mscale_all_dim (as in every DeepSeek release);
//   - dense MLPs in the first leading_dense_block_count layers, MoE after (freq 1);
//   - expert_gating_func 1 softmax (also when absent), 2 sigmoid; expert_group_count > 1
//     or a blk.N.exp_probs_b bias: group-limited top-k scoring groups by their top-2 sum
//     (noaux_tc), else greedy; weights normalized when expert_weights_norm, then always
//     times expert_weights_scale (absent or 0: 1) -- V3's rule, V2's where they agree;
//   - nextn_predict_layers (MTP) at the end of block_count are skipped.
// Errors name the key: NOT_FOUND missing, INVALID_ARGUMENT out of range or
// inconsistent, UNIMPLEMENTED for what surge does not run (another rope scaling type,
// yarn without yarn_log_multiplier, yarn_ext_factor/attn_factor other than 1).
Status ReadDeepseek2Config(const GgufFile& file, ModelConfig* c);

// Writes `deepseek2.*` (not general.*) for a DeepSeek config as llama.cpp's converter
// does, except that q_lora_rank is written as 0 when null (llama.cpp only treats it as
// optional for 26/27-layer models) and a V2 model that normalizes its top-k weights gets
// expert_weights_scale 1 (V2 does not scale normalized weights; llama.cpp always
// scales). UNIMPLEMENTED for what the format cannot express: moe_layer_freq != 1,
// YaRN mscale != mscale_all_dim, group_limited_greedy with groups to choose.
Status WriteDeepseek2Metadata(const ModelConfig& c, GgufWriter& writer);

// Adds one tensor of the file being converted: its GGUF name, shape in HF order (ggml's
// reversed) and f32 values; the converter picks its type (model/gguf_convert.h).
using GgufTensorAdder = std::function<Status(
    const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values)>;

// A DeepSeek checkpoint's tensors in the deepseek2 layout and llama.cpp's order: per
// layer the MLA projections with kv_b_proj split into attn_k_b / attn_v_b, a dense MLP
// or the router (+ exp_probs_b), the routed experts stacked per projection into
// [n_expert, rows, cols] and the shared experts; MTP layers left out.
Status AddDeepseek2Tensors(const WeightSource& store, const ModelConfig& c,
                           const GgufTensorAdder& add);

}  // namespace surge
