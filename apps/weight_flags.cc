#include "apps/weight_flags.h"

namespace surge {

void RegisterWeightFlags(FlagParser& parser, WeightFlags& f) {
  parser.AddString("dtype", &f.dtype,
                   "linear-layer weights when not quantized: f32 (default) | bf16; vLLM's names too: auto (= f32), "
                   "float32 | float, bfloat16, float16 | half (= bf16: no f16 matmul kernels here, as vLLM's CPU "
                   "backend casts float16 to bfloat16)");
  parser.AddString("quantize", &f.quantize,
                   "none (default) | int8 (per group, symmetric) | int4 (per group, asymmetric)");
  parser.AddInt("group-size", &f.group_size, "int4/int8 group size along the input (one scale per group): 32 (default) | 64 | 128");
  parser.AddBool("int4-lm-head", &f.int4_lm_head, "with --quantize int4, make lm_head int4 too (default int8 in the same groups)");
  parser.AddString("mla-attention", &f.mla_attention,
                   "DeepSeek MLA: absorbed (default; attention on the cached latent) | expanded "
                   "(per-head K/V rebuilt from the latent every step)");
}

StatusOr<LoadOptions> ToLoadOptions(const WeightFlags& f) {
  LoadOptions options;
  if (f.dtype == "bf16" || f.dtype == "bfloat16" || f.dtype == "float16" || f.dtype == "half") {
    options.dtype = WeightDType::kBF16;
  } else if (f.dtype != "f32" && f.dtype != "auto" && f.dtype != "float32" && f.dtype != "float") {
    return InvalidArgumentError("--dtype must be f32 or bf16 (or vLLM's auto, float32, float, bfloat16, float16, half), got '" +
                                f.dtype + "'");
  }
  if (f.quantize == "int8") {
    options.quantize = Quantization::kInt8;
  } else if (f.quantize == "int4") {
    options.quantize = Quantization::kInt4;
  } else if (f.quantize != "none") {
    return InvalidArgumentError("--quantize must be none, int8 or int4, got '" + f.quantize + "'");
  }
  if (f.group_size != 32 && f.group_size != 64 && f.group_size != 128) {
    return InvalidArgumentError("--group-size must be 32, 64 or 128, got " + std::to_string(f.group_size));
  }
  options.group_size = static_cast<int32_t>(f.group_size);
  options.int4_lm_head = f.int4_lm_head;
  if (f.mla_attention == "expanded") {
    options.mla_mode = LoadOptions::MlaMode::kExpanded;
  } else if (f.mla_attention != "absorbed") {
    return InvalidArgumentError("--mla-attention must be absorbed or expanded, got '" +
                                f.mla_attention + "'");
  }
  return options;
}

}  // namespace surge
