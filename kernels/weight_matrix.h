// WeightMatrix: a borrowed view of a linear layer's weight, W[rows = out_features,
// cols = in_features] row-major as Hugging Face stores it, in any supported dtype.
#pragma once

#include <cstdint>

namespace surge {

// Only kF32 is implemented; the others name the layouts the quantized kernels will take
// so that the MatMul interface need not change when they come.
enum class WeightDType {
  kF32,   // data: float[rows * cols]
  kBF16,  // data: uint16_t[rows * cols]
  kInt8,  // data: int8_t[rows * cols]; scales: one float per (row, group of group_size)
  kInt4,  // data: two values per byte along a row; scales (+ zeros) per (row, group)
};

struct WeightMatrix {
  WeightDType dtype = WeightDType::kF32;
  int64_t rows = 0;               // out_features (N)
  int64_t cols = 0;               // in_features (K)
  const void* data = nullptr;     // [rows, cols] in `dtype`
  const float* scales = nullptr;  // quantized only: [rows, cols / group_size]
  const float* zeros = nullptr;   // asymmetric int4 only: [rows, cols / group_size]
  int32_t group_size = 0;         // quantized only: columns sharing one scale

  const float* f32() const { return static_cast<const float*>(data); }
};

inline WeightMatrix F32Weight(const float* data, int64_t rows, int64_t cols) {
  return WeightMatrix{WeightDType::kF32, rows, cols, data, nullptr, nullptr, 0};
}

}  // namespace surge
