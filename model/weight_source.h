// WeightSource: where Model::Load reads tensors from, by Hugging Face name -- a
// safetensors directory (WeightStore) or a GGUF file (GgufWeightSource).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/packed_weight.h"
#include "kernels/weight_codec.h"

namespace surge {

// A linear layer's weight [rows = out_features, cols = in_features] as the source holds
// it. Either f32 values, or (int4 sources: GGUF Q4_0/Q4_K) int4 groups of 32 that pack
// without requantizing.
struct LinearWeightData {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<float> f32;              // [rows, cols], unless int4
  std::vector<uint8_t> int4_q;         // [rows, cols], values in [0, 15]
  std::vector<Int4Group> int4_groups;  // [rows, cols / 32]
  // The format the stored data maps to (int8 for Q8_0/Q6_K, int4-g32 for Q4_0/Q4_K);
  // nullopt for float data, which takes the load options' format.
  std::optional<WeightFormat> native;
  bool is_int4() const { return !int4_q.empty(); }
  // The weight as f32 rows [rows, cols]: the f32 data, or the int4 groups dequantized.
  // Consumes the data.
  std::vector<float> TakeF32() && {
    if (!is_int4()) return std::move(f32);
    std::vector<float> values(int4_q.size());
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = DequantizeInt4(int4_groups[i / 32], int4_q[i]);
    }
    return values;
  }
};

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual const std::string& source_name() const = 0;  // directory or file, for errors
  virtual bool Contains(const std::string& name) const = 0;
  // The tensor as f32 after checking that its shape equals `expected_shape`; errors
  // name the tensor, its file and both shapes.
  virtual StatusOr<std::vector<float>> LoadF32(const std::string& name,
                                               const std::vector<int64_t>& expected_shape) const = 0;
  // NAME.weight of a linear layer. The default reads it as f32.
  virtual StatusOr<LinearWeightData> LoadLinearWeight(const std::string& name, int64_t rows,
                                                      int64_t cols) const {
    LinearWeightData data;
    data.rows = rows;
    data.cols = cols;
    ASSIGN_OR_RETURN(data.f32, LoadF32(name + ".weight", {rows, cols}));
    return data;
  }
};

}  // namespace surge
