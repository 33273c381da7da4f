// WeightStore: every tensor of a Hugging Face model directory, memory-mapped from
// model.safetensors or the shards named by model.safetensors.index.json.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"
#include "model/tensor_dtype.h"
#include "model/weight_source.h"

namespace surge {

// A tensor's bytes inside a mapped file; valid while its WeightStore lives.
struct TensorView {
  std::string name;
  std::string file;  // the safetensors file that holds it, for error messages
  TensorDType dtype;
  std::vector<int64_t> shape;
  // Exactly product(shape) * TensorDTypeSize(dtype) bytes. Alignment is whatever the
  // file gives (writers usually pad the header to 8 bytes, but the format does not
  // promise it): read elements with memcpy, or use LoadF32.
  std::span<const uint8_t> bytes;

  int64_t num_elements() const;
};

class WeightStore : public WeightSource {
 public:
  // Opens DIR/model.safetensors, or DIR/model.safetensors.index.json and its shards.
  // Validates every header completely (dtype, shape, offsets in range and not overlapping)
  // so later lookups cannot fail on a malformed file.
  static StatusOr<std::unique_ptr<WeightStore>> Open(const std::string& model_dir);

  // NotFound naming the tensor and the directory when absent.
  StatusOr<TensorView> Get(const std::string& name) const;
  bool Contains(const std::string& name) const override { return tensors_.count(name) > 0; }
  const std::string& source_name() const override { return dir_; }
  std::vector<std::string> Names() const;  // sorted
  size_t num_tensors() const { return tensors_.size(); }
  const std::string& dir() const { return dir_; }

  // Converts a tensor to f32 after checking that its shape equals `expected_shape`.
  // The error names the tensor, its file, and both shapes.
  StatusOr<std::vector<float>> LoadF32(const std::string& name,
                                       const std::vector<int64_t>& expected_shape) const override;
  // As WeightSource's, and an F8_E4M3 weight is dequantized with its NAME.weight_scale_inv
  // ([ceil(rows / block_rows), ceil(cols / block_cols)]): w = fp8 * scale_inv of its block.
  StatusOr<LinearWeightData> LoadLinearWeight(const std::string& name, int64_t rows,
                                              int64_t cols) const override;
  // The FP8 block shape (config.json's quantization_config.weight_block_size). Without
  // it, an F8_E4M3 linear weight is an error.
  void SetFp8BlockShape(int64_t block_rows, int64_t block_cols) {
    fp8_block_rows_ = block_rows;
    fp8_block_cols_ = block_cols;
  }

 private:
  WeightStore() = default;
  Status AddFile(const std::string& file_name);
  Status OpenSharded(const std::string& index_path);

  std::string dir_;
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::map<std::string, TensorView> tensors_;
  int64_t fp8_block_rows_ = 0;  // 0: no FP8 quantization_config
  int64_t fp8_block_cols_ = 0;
};

}  // namespace surge
