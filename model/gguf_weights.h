// A GGUF model file as a WeightSource (tensors looked up by their Hugging Face names,
// llama's Q/K rows un-permuted, DeepSeek's stacked experts sliced and split kv_b joined)
// and its ModelConfig from the `<arch>.*` metadata.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "kernels/gguf_blocks.h"
#include "kernels/weight_matrix.h"
#include "model/config.h"
#include "model/weight_source.h"

namespace surge {

// True when `path` names a GGUF file: it ends in ".gguf", or is a regular file that
// starts with the GGUF magic.
bool IsGgufPath(const std::string& path);

// The config of a `llama`, `qwen2` or `deepseek2` GGUF (model/gguf_deepseek.h):
// UNIMPLEMENTED for another architecture, a partial rotary dimension (llama/qwen2) or a
// rope scaling type other than none/linear (deepseek2: yarn too); metadata errors name
// the key. Vocabulary size from token_embd; tied when `output` is absent.
StatusOr<ModelConfig> ModelConfigFromGguf(const GgufFile& file);

// Optional metadata: the value, `fallback` when absent, an error naming the key when
// ill-typed.
StatusOr<int64_t> GgufIntOr(const GgufFile& file, const std::string& key, int64_t fallback);
StatusOr<double> GgufFloatOr(const GgufFile& file, const std::string& key, double fallback);

// The ggml tensor types the loader reads, as kernels' block types; UNIMPLEMENTED
// (naming the tensor, its type and the supported ones) for the rest.
StatusOr<BlockType> BlockTypeOf(const GgufFile& file, const GgufTensorInfo& tensor);

class GgufWeightSource : public WeightSource {
 public:
  // `wide_quant_dtype`: what Q8_0, Q6_K, Q5_0, Q5_1 and Q5_K blocks become -- kInt8 (int8
  // groups of 32: Q8_0 exactly, the others requantized per group of 32) or kBF16/kF32
  // (dequantized).
  GgufWeightSource(const GgufFile& file, const ModelConfig& config, WeightDType wide_quant_dtype)
      : file_(file), config_(config), wide_quant_dtype_(wide_quant_dtype) {}

  const std::string& source_name() const override { return file_.path(); }
  bool Contains(const std::string& name) const override;
  StatusOr<std::vector<float>> LoadF32(const std::string& name,
                                       const std::vector<int64_t>& expected_shape) const override;
  StatusOr<LinearWeightData> LoadLinearWeight(const std::string& name, int64_t rows,
                                              int64_t cols) const override;

 private:
  // The tensor after checking its shape against `expected_shape` (HF order): its type
  // and bytes in HF row order -- a view of the mapped file, or an un-permuted copy for
  // llama's Q/K.
  struct Raw {
    BlockType type;
    std::span<const uint8_t> view;  // the tensor in the mapped file
    std::vector<uint8_t> permuted;  // llama Q/K rows in HF order, else empty
    const uint8_t* data() const { return permuted.empty() ? view.data() : permuted.data(); }
  };
  StatusOr<Raw> LoadRaw(const std::string& hf_name, const std::vector<int64_t>& expected_shape) const;
  // DeepSeek files with attn_k_b/attn_v_b instead of attn_kv_b: for a kv_b_proj weight,
  // its "model.layers.N.self_attn." prefix; nullopt otherwise.
  std::optional<std::string> SplitKvBPrefix(const std::string& hf_name) const;
  StatusOr<LinearWeightData> LoadSplitKvB(const std::string& prefix, int64_t rows,
                                          int64_t cols) const;
  // The format a tensor of this block type loads as (LinearWeightData::native).
  std::optional<WeightFormat> NativeFormat(BlockType type) const;

  const GgufFile& file_;
  const ModelConfig& config_;
  WeightDType wide_quant_dtype_;
};

}  // namespace surge
