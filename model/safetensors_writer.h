// Writing a safetensors file (the layout model/safetensors.h reads), one tensor at a time so
// that a whole model never has to sit in memory twice.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/tensor_dtype.h"

namespace surge {

struct SafetensorsTensorSpec {
  std::string name;
  TensorDType dtype = TensorDType::kF32;
  std::vector<int64_t> shape;
  uint64_t num_bytes() const;  // product(shape) * dtype size
};

// Produces tensor i's bytes (exactly specs[i].num_bytes() of them).
using SafetensorsTensorBytes = std::function<StatusOr<std::vector<uint8_t>>(size_t index)>;

// Writes `path`: the header (tensors in the given order, "__metadata__" when non-empty,
// padded with spaces to a multiple of 8 bytes as the reference writer does), then each
// tensor's bytes as `bytes` returns them. Errors name the file or the tensor.
Status WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensorSpec>& specs,
                        const SafetensorsTensorBytes& bytes,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace surge
