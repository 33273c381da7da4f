// WeightMatrix: a borrowed view of a linear layer's weight W[rows = out_features,
// cols = in_features] in one of the layouts the MatMul kernels read.
#pragma once

#include <cstdint>

namespace surge {

// kInt8Groups: int8 with one scale per group of group_size k (GGUF's Q8_0 repacked as
// is: group 32, the scale its block's f16 d).
enum class WeightDType { kF32, kBF16, kInt8, kInt4, kInt8Groups };

// "f32", "bf16", "int8", "int4", "int8" (kInt8Groups: the group size tells it apart)
const char* WeightDTypeName(WeightDType dtype);

// How `data` is laid out.
//
// kRowMajor (f32 only): float[rows, cols] as Hugging Face stores it. The simple path:
//   any f32 array can be multiplied without a copy (tests, tools, one-off products).
//
// kPanels: the kernel-ready form PackedWeight (kernels/packed_weight.h) writes. Output
//   rows are grouped in panels of kPanelRows = 16 (the last one zero-padded), and within
//   a panel the 16 rows are interleaved along K so that one 64-byte load holds the same
//   k (or k-pair / k-quad) of all 16 rows: the kernels then multiply a broadcast
//   activation by a whole vector of weights, and the sum for each (row of x, output)
//   runs over k in one fixed order whatever the batch size. Per panel, every one
//   64-byte aligned and panel_bytes long:
//   f32   [cols][16] float
//   bf16  [ceil(cols / 2)][16][2] uint16 (k-pairs; a missing odd k is 0)
//   int8  [ceil(cols / 4)][16][4] int8 (k-quads, zero-padded); plus `scales` and
//         `row_sums` per output row: w = scale * q, q in [-127, 127]
//   int4  per group of group_size k: [group_size / 8][16][4] bytes where byte b of lane
//         r in octet o holds k = 8o + b in its low nibble and k = 8o + 4 + b in its high
//         nibble (unsigned q in [0, 15]), then 16 f16 scales and 16 f16 mins:
//         w = scale * q + min (min = -scale * zero_point: the asymmetric zero point,
//         folded into the form the kernel adds). The last group of a row whose cols is
//         not a multiple of group_size is zero-padded.
//   int8 groups  [num_groups][group_size / 4][16][4] uint8 u = q + 128 (k-quads, as int8
//         but offset so that vpdpbusd can take W as its unsigned operand), then
//         [num_groups][16] f16 scales: w = scale * (u - 128), q in [-127, 127]; the
//         panel padded to a multiple of 64 bytes. 34 bytes per 32 weights, as Q8_0.
enum class WeightLayout { kRowMajor, kPanels };

constexpr int64_t kPanelRows = 16;

struct WeightMatrix {
  WeightDType dtype = WeightDType::kF32;
  WeightLayout layout = WeightLayout::kRowMajor;
  int64_t rows = 0;                   // out_features (N)
  int64_t cols = 0;                   // in_features (K)
  const void* data = nullptr;         // see WeightLayout
  int64_t panel_bytes = 0;            // kPanels: bytes per panel of 16 rows
  const float* scales = nullptr;      // int8: [num_panels * 16] per-row scales (0 for padding)
  const int32_t* row_sums = nullptr;  // int8: [num_panels * 16] sum over k of q
  int32_t group_size = 0;             // int4, int8 groups: k per group; 32, 64 or 128

  int64_t num_panels() const { return (rows + kPanelRows - 1) / kPanelRows; }
  const float* f32() const { return static_cast<const float*>(data); }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(data); }
};

// A row-major f32 view (no copy).
inline WeightMatrix F32Weight(const float* data, int64_t rows, int64_t cols) {
  WeightMatrix w;
  w.rows = rows;
  w.cols = cols;
  w.data = data;
  return w;
}

}  // namespace surge
