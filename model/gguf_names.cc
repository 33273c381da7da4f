#include "model/gguf_names.h"

#include <cstring>

#include "base/check.h"

namespace surge {
namespace {

// HF row of GGUF row `r` within one head.
int64_t HfRowOfGgufRow(int64_t r, int64_t head_dim) {
  const int64_t head = r / head_dim, i = r % head_dim;
  return head * head_dim + (i % 2) * (head_dim / 2) + i / 2;
}

std::vector<uint8_t> Permute(std::span<const uint8_t> rows, int64_t num_rows, int64_t row_bytes,
                             int64_t head_dim, bool to_gguf) {
  CHECK(head_dim > 0 && head_dim % 2 == 0 && num_rows % head_dim == 0 &&
        static_cast<int64_t>(rows.size()) == num_rows * row_bytes)
      << "PermuteRows: " << num_rows << " rows, head_dim " << head_dim;
  std::vector<uint8_t> out(rows.size());
  for (int64_t r = 0; r < num_rows; ++r) {
    const int64_t hf = HfRowOfGgufRow(r, head_dim);
    const int64_t dst = to_gguf ? r : hf, src = to_gguf ? hf : r;
    std::memcpy(out.data() + dst * row_bytes, rows.data() + src * row_bytes, row_bytes);
  }
  return out;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<GgufTensorRef> GgufTensorRefForHf(const std::string& hf_name) {
  static const std::pair<const char*, const char*> kGlobal[] = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
  };
  for (const auto& [hf, gguf] : kGlobal) {
    if (hf_name == hf) return GgufTensorRef{gguf};
  }
  // model.layers.<N>.<part>.<weight|bias>
  const std::string prefix = "model.layers.";
  if (hf_name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const size_t digits_end = hf_name.find('.', prefix.size());
  if (digits_end == std::string::npos || digits_end == prefix.size()) return std::nullopt;
  const std::string layer = hf_name.substr(prefix.size(), digits_end - prefix.size());
  if (!IsNumber(layer)) return std::nullopt;
  const std::string blk = "blk." + layer + ".";
  const size_t suffix_begin = hf_name.rfind('.');
  std::string part = hf_name.substr(digits_end + 1, suffix_begin - digits_end - 1);
  const std::string suffix = hf_name.substr(suffix_begin + 1);
  if (part == "mlp.gate" && suffix == "e_score_correction_bias") {
    return GgufTensorRef{blk + "exp_probs_b.bias"};  // noaux_tc's selection bias
  }
  if (suffix != "weight" && suffix != "bias") return std::nullopt;
  // Routed experts: one 3-D tensor per projection, expert E its slice E.
  int64_t expert = -1;
  const std::string experts = "mlp.experts.";
  if (part.compare(0, experts.size(), experts) == 0) {
    const size_t dot = part.find('.', experts.size());
    const std::string index = part.substr(experts.size(), dot - experts.size());
    if (dot == std::string::npos || !IsNumber(index)) return std::nullopt;
    expert = std::stoll(index);
    part = "mlp.experts" + part.substr(dot);
  }
  static const std::pair<const char*, const char*> kParts[] = {
      {"input_layernorm", "attn_norm"},       {"post_attention_layernorm", "ffn_norm"},
      {"self_attn.q_proj", "attn_q"},         {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},         {"self_attn.o_proj", "attn_output"},
      {"mlp.gate_proj", "ffn_gate"},          {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"},
      {"self_attn.q_norm", "attn_q_norm"},    {"self_attn.k_norm", "attn_k_norm"},  // Qwen3
      // DeepSeek V2/V3 (llama.cpp's deepseek2): MLA, router, routed and shared experts.
      {"self_attn.q_a_proj", "attn_q_a"},     {"self_attn.q_a_layernorm", "attn_q_a_norm"},
      {"self_attn.q_b_proj", "attn_q_b"},     {"self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa"},
      {"self_attn.kv_a_layernorm", "attn_kv_a_norm"}, {"self_attn.kv_b_proj", "attn_kv_b"},
      {"self_attn.k_b_proj", "attn_k_b"},     {"self_attn.v_b_proj", "attn_v_b"},
      {"mlp.gate", "ffn_gate_inp"},
      {"mlp.experts.gate_proj", "ffn_gate_exps"}, {"mlp.experts.up_proj", "ffn_up_exps"},
      {"mlp.experts.down_proj", "ffn_down_exps"},
      {"mlp.shared_experts.gate_proj", "ffn_gate_shexp"},
      {"mlp.shared_experts.up_proj", "ffn_up_shexp"},
      {"mlp.shared_experts.down_proj", "ffn_down_shexp"},
  };
  for (const auto& [hf, gguf] : kParts) {
    if (part == hf) return GgufTensorRef{blk + gguf + "." + suffix, expert};
  }
  return std::nullopt;
}

std::optional<std::string> GgufTensorNameForHf(const std::string& hf_name) {
  std::optional<GgufTensorRef> ref = GgufTensorRefForHf(hf_name);
  if (!ref || ref->expert >= 0) return std::nullopt;
  return ref->name;
}

bool IsLlamaPermutedQk(const std::string& architecture, const std::string& gguf_name) {
  if (architecture != "llama" || gguf_name.compare(0, 4, "blk.") != 0) return false;
  const size_t dot = gguf_name.find('.', 4);
  if (dot == std::string::npos) return false;
  const std::string rest = gguf_name.substr(dot + 1);
  return rest == "attn_q.weight" || rest == "attn_k.weight" || rest == "attn_q.bias" ||
         rest == "attn_k.bias";
}

std::vector<uint8_t> PermuteRowsHfToGguf(std::span<const uint8_t> rows, int64_t num_rows,
                                         int64_t row_bytes, int64_t head_dim) {
  return Permute(rows, num_rows, row_bytes, head_dim, /*to_gguf=*/true);
}

std::vector<uint8_t> PermuteRowsGgufToHf(std::span<const uint8_t> rows, int64_t num_rows,
                                         int64_t row_bytes, int64_t head_dim) {
  return Permute(rows, num_rows, row_bytes, head_dim, /*to_gguf=*/false);
}

}  // namespace surge
