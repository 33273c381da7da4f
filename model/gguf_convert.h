// Converting a Hugging Face Llama/Qwen2/DeepSeek V2-V3 directory to a GGUF file the way
// llama.cpp's convert_hf_to_gguf.py + llama-quantize lay it out: same metadata keys,
// tensor names, llama Q/K row permutation, DeepSeek's deepseek2 layout
// (model/gguf_deepseek.h), and (simplified) per-tensor type choice.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_writer.h"
#include "model/config.h"

namespace surge {

// The whole-file type. Per tensor (1-D tensors -- norms, biases -- and MoE routers are
// always F32):
//   f32 / f16 / bf16 / q8_0 / q6_k: every matrix in that type;
//   q4_0:   Q4_0, but the output matrix (token_embd when tied) Q6_K, as llama-quantize;
//   q4_k_m: Q4_K, but output (or tied token_embd) Q6_K, and attn_v and ffn_down Q6_K in
//           llama.cpp's "more bits" layers (the first and last eighth, and every third
//           in between: i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2).
// A matrix whose rows are not whole blocks falls back as llama-quantize does in spirit:
// Q4_K -> Q4_0, Q6_K -> Q8_0 (rows of 32k), else F16. Q4_K and Q6_K are round-to-nearest
// (kernels/gguf_blocks.h), so a little less accurate than llama-quantize's search.
enum class GgufFileType { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ4_K_M, kQ6_K };

StatusOr<GgufFileType> ParseGgufFileType(const std::string& name);  // "q4_k_m", ...
const char* GgufFileTypeName(GgufFileType type);

// The Hugging Face tensors of a dense (llama, qwen2, qwen3) model and their shapes, in
// llama.cpp's order (embeddings, layers, final norm, lm_head unless tied).
std::vector<std::pair<std::string, std::vector<int64_t>>> HfTensorShapes(const ModelConfig& config);

// Architecture metadata (`general.*`, `<arch>.*`) for `config`.
Status WriteGgufModelMetadata(const ModelConfig& config, GgufFileType type, GgufWriter& writer);

// Writes a model's tokenizer metadata (`tokenizer.ggml.*`, `tokenizer.chat_template`);
// apps/ plugs in the tokenizer module's (tokenizer/gguf_vocab_io.h), which model/ cannot
// include.
using GgufTokenizerWriter =
    std::function<Status(const std::string& hf_dir, const ModelConfig& config, GgufWriter& writer)>;

// HF_DIR -> OUT_PATH (an FP8 DeepSeek checkpoint dequantized as it is read). Tokenizer
// metadata is written by `write_tokenizer` when given and HF_DIR has a tokenizer.json;
// without it the file holds the model only.
Status ConvertHfToGguf(const std::string& hf_dir, const std::string& out_path, GgufFileType type,
                       const GgufTokenizerWriter& write_tokenizer = {});

}  // namespace surge
