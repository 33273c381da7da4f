// LoadOptions: the format a model's weights are loaded into (f32/bf16, int8, int4 with a
// group size), and how MLA attention runs.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/weight_matrix.h"

namespace surge {

// Storage of the linear layers (q/k/v, o_proj, gate/up, down, lm_head); embeddings and
// norms stay f32 (the gather and the norms want f32 rows). Activations are f32
// throughout; int8/int4 kernels quantize them per group of group_size values of each
// token inside MatMul.
enum class Quantization { kNone, kInt8, kInt4 };

struct LoadOptions {
  WeightDType dtype = WeightDType::kF32;        // kF32 or kBF16 when not quantized
  // int8: symmetric per group (kInt8Groups); int4: asymmetric per group.
  Quantization quantize = Quantization::kNone;
  int32_t group_size = 32;                      // int4, int8: 32, 64 or 128 input columns
  // Under int4, lm_head stays int8 unless this is set: its error goes straight into the
  // logits (llama.cpp keeps its output matrix at 6 bits for the same reason). On
  // stories260K, int4-g32 perplexity is +3.7% over f32 with an int8 lm_head, +7% with
  // an int4 one (docs/PERF.md).
  bool int4_lm_head = false;
  // MLA (DeepSeek) attention: kAbsorbed folds kv_b_proj's K part into the query and its
  // V part into the output, so attention runs on the cached latent itself (cheapest for
  // decode); kExpanded rebuilds per-head K and V from the latent for every step (the
  // defining form; cheaper only for long prefill chunks). One mode per model keeps
  // results independent of how prompts are chunked.
  enum class MlaMode { kAbsorbed, kExpanded };
  MlaMode mla_mode = MlaMode::kAbsorbed;
  // GGUF only: what Q8_0 and Q6_K tensors become -- kInt8 (the default: int8 groups of 32
  // with f16 scales, kInt8Groups, which is Q8_0 itself and Q6_K/Q5_* requantized per
  // group; docs/PERPLEXITY.md) or kBF16/kF32 (dequantized). Q4_0/Q4_K are
  // repacked as int4-g32 without requantizing; F32/F16/BF16 tensors take dtype/quantize
  // above like a Hugging Face model's.
  WeightDType gguf_wide_quant_dtype = WeightDType::kInt8;
  // DeepSeek-V3: also load the first multi-token-prediction layer (Model::mtp(), what
  // `--speculative mtp` runs); the model must have one. Off, the MTP layers stay unread.
  bool load_mtp = false;
};

// "f32", "bf16", "int8", "int4-g32", ...: the format LoadOptions select.
std::string LoadOptionsName(const LoadOptions& options);

}  // namespace surge
