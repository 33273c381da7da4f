// Converting a llama / qwen2 / qwen3 GGUF file into a Hugging Face checkpoint directory
// (the reverse of model/gguf_convert.h): model.safetensors with every tensor dequantized to
// bf16 or f32 under its HF name (llama's Q/K rows un-permuted back to HF's rotary layout),
// config.json and generation_config.json from the metadata. The tokenizer files come from a
// writer apps/ plugs in (tokenizer/ sits beside model/, not below it).
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/config.h"
#include "model/tensor_dtype.h"

namespace surge {

// config.json for `config` as transformers writes it for LlamaForCausalLM,
// Qwen2ForCausalLM or Qwen3ForCausalLM; UNIMPLEMENTED for another architecture and for rope
// scaling other than none/linear. `dtype` becomes torch_dtype.
StatusOr<std::string> HfConfigJson(const ModelConfig& config, TensorDType dtype);

// generation_config.json: bos/eos ids (eos a list when `eos_ids` has several).
std::string HfGenerationConfigJson(int32_t bos_id, const std::vector<int32_t>& eos_ids);

// Writes the tokenizer files (tokenizer.json, tokenizer_config.json) of the open GGUF file
// into the output directory.
using HfTokenizerFilesWriter = std::function<Status(const GgufFile& file, const std::string& out_dir)>;

// GGUF_PATH -> OUT_DIR (created; existing files of the same names are replaced). `dtype`:
// kBF16 or kF32. Refuses (UNIMPLEMENTED) deepseek2 files and llama3 rope factors.
Status ConvertGgufToHf(const std::string& gguf_path, const std::string& out_dir, TensorDType dtype,
                       const HfTokenizerFilesWriter& write_tokenizer = {});

}  // namespace surge
