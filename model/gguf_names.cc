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

}  // namespace

std::optional<std::string> GgufTensorNameForHf(const std::string& hf_name) {
  static const std::pair<const char*, const char*> kGlobal[] = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
  };
  for (const auto& [hf, gguf] : kGlobal) {
    if (hf_name == hf) return std::string(gguf);
  }
  // model.layers.<N>.<part>.<weight|bias>
  const std::string prefix = "model.layers.";
  if (hf_name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const size_t digits_end = hf_name.find('.', prefix.size());
  if (digits_end == std::string::npos || digits_end == prefix.size()) return std::nullopt;
  const std::string layer = hf_name.substr(prefix.size(), digits_end - prefix.size());
  if (layer.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const size_t suffix_begin = hf_name.rfind('.');
  const std::string part = hf_name.substr(digits_end + 1, suffix_begin - digits_end - 1);
  const std::string suffix = hf_name.substr(suffix_begin + 1);
  if (suffix != "weight" && suffix != "bias") return std::nullopt;
  static const std::pair<const char*, const char*> kParts[] = {
      {"input_layernorm", "attn_norm"},       {"post_attention_layernorm", "ffn_norm"},
      {"self_attn.q_proj", "attn_q"},         {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},         {"self_attn.o_proj", "attn_output"},
      {"mlp.gate_proj", "ffn_gate"},          {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"},
  };
  for (const auto& [hf, gguf] : kParts) {
    if (part == hf) return "blk." + layer + "." + gguf + "." + suffix;
  }
  return std::nullopt;
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
