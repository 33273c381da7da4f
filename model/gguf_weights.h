// A GGUF model file as a WeightSource (tensors looked up by their Hugging Face names,
// llama's Q/K rows un-permuted) and its ModelConfig from the `<arch>.*` metadata.
#pragma once

#include <memory>
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

// The config of a `llama` or `qwen2` GGUF: UNIMPLEMENTED for another architecture, a
// partial rotary dimension or a rope scaling type other than none/linear; metadata
// errors name the key. Vocabulary size from token_embd; tied when `output` is absent.
StatusOr<ModelConfig> ModelConfigFromGguf(const GgufFile& file);

// The ggml tensor types the loader reads, as kernels' block types; UNIMPLEMENTED
// (naming the tensor, its type and the supported ones) for the rest.
StatusOr<BlockType> BlockTypeOf(const GgufFile& file, const GgufTensorInfo& tensor);

class GgufWeightSource : public WeightSource {
 public:
  // `wide_quant_dtype`: what Q8_0, Q6_K, Q5_0, Q5_1 and Q5_K blocks become -- kInt8 (requantized per
  // output row) or kBF16/kF32 (dequantized).
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

  const GgufFile& file_;
  const ModelConfig& config_;
  WeightDType wide_quant_dtype_;
};

}  // namespace surge
