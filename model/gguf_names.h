// How llama.cpp names and lays out a Llama/Qwen2/DeepSeek model's tensors in GGUF, shared
// by the GGUF loader and the converter (apps/convert_command.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace surge {

// Where a Hugging Face tensor lives in a GGUF file: a tensor, or (DeepSeek's routed
// experts) slice `expert` of a 3-D tensor stacking every expert's matrix,
// [n_expert, rows, cols] in HF order.
struct GgufTensorRef {
  std::string name;
  int64_t expert = -1;  // >= 0: the slice of a stacked expert tensor
};

// "model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight",
// "model.layers.3.mlp.experts.5.up_proj.weight" -> ("blk.3.ffn_up_exps.weight", 5),
// "model.layers.3.mlp.gate.e_score_correction_bias" -> "blk.3.exp_probs_b.bias", ...;
// nullopt for a name llama.cpp does not map (e.g. rotary_emb.inv_freq). DeepSeek's
// kv_b_proj maps to the legacy attn_kv_b; "k_b_proj"/"v_b_proj" (the names llama.cpp's
// converter gives the halves it splits kv_b_proj into) map to attn_k_b / attn_v_b.
std::optional<GgufTensorRef> GgufTensorRefForHf(const std::string& hf_name);

// The tensor name alone; nullopt also for an expert slice.
std::optional<std::string> GgufTensorNameForHf(const std::string& hf_name);

// llama.cpp's converter permutes the rows of q_proj and k_proj (weights and biases) for
// the `llama` architecture only: its rope rotates adjacent pairs (2i, 2i+1) where HF's
// rotates (i, i + head_dim/2). Within each head of `head_dim` rows, GGUF row 2p + j holds
// HF row j * head_dim/2 + p (convert_hf_to_gguf.py's LlamaModel.permute). `rows` is a
// buffer of num_rows rows of row_bytes each.
bool IsLlamaPermutedQk(const std::string& architecture, const std::string& gguf_name);
std::vector<uint8_t> PermuteRowsHfToGguf(std::span<const uint8_t> rows, int64_t num_rows,
                                         int64_t row_bytes, int64_t head_dim);
std::vector<uint8_t> PermuteRowsGgufToHf(std::span<const uint8_t> rows, int64_t num_rows,
                                         int64_t row_bytes, int64_t head_dim);

}  // namespace surge
