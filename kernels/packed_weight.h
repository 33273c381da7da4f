// PackedWeight: a weight matrix converted once (at load time) from f32 into the panel
// layout of one dtype (see WeightLayout in weight_matrix.h), owning its bytes.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "kernels/thread_pool.h"
#include "kernels/weight_codec.h"
#include "kernels/weight_matrix.h"

namespace surge {

// Zeroed, 64-byte aligned bytes for weights. Buffers of 2 MiB or more are 2 MiB aligned
// and advised as transparent huge pages (Linux): decode streams every weight once per
// token, and 4 KiB pages would cost a TLB miss every 4 KiB of each stream.
struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using WeightBuffer = std::unique_ptr<uint8_t[], FreeDeleter>;
WeightBuffer AllocateWeightBuffer(int64_t bytes);

struct WeightFormat {
  WeightDType dtype = WeightDType::kF32;
  int32_t group_size = 0;  // int4 and int8 groups only: 32, 64 or 128
};

class PackedWeight {
 public:
  PackedWeight() = default;

  // Converts row-major w[rows, cols]: f32 as is, bf16 rounded to nearest even, int8 per
  // output row (QuantizeInt8Row), int4 per (row, group) (QuantizeInt4Group), int8 groups
  // per (row, group) (QuantizeInt8Group: Q8_0's values come back exactly). CHECKs the
  // format (int4 and int8 groups need group_size 32, 64 or 128; cols need not be a
  // multiple of it;
  // int8 needs cols <= 65536 so that vpdpbusd's int32 sums of (q + 128) q cannot
  // overflow). Panels are converted in parallel on `pool` when given.
  static PackedWeight Pack(const float* w, int64_t rows, int64_t cols, WeightFormat format,
                           ThreadPool* pool = nullptr);

  // Packs already-quantized int4 weights (GGUF Q4_0/Q4_K repacked, kernels/gguf_blocks.h)
  // without requantizing: q [rows, cols] in [0, 15] and groups [rows, cols / group_size],
  // w = scale * q + min. cols must be a multiple of group_size (32, 64 or 128).
  static PackedWeight PackInt4Groups(const uint8_t* q, const Int4Group* groups, int64_t rows,
                                     int64_t cols, int32_t group_size, ThreadPool* pool = nullptr);

  // Bytes of one panel of 16 rows in this layout (a multiple of 64).
  static int64_t PanelBytes(WeightFormat format, int64_t cols);

  const WeightMatrix& matrix() const { return matrix_; }
  WeightFormat format() const { return {matrix_.dtype, matrix_.group_size}; }
  int64_t rows() const { return matrix_.rows; }
  int64_t cols() const { return matrix_.cols; }
  bool empty() const { return matrix_.data == nullptr; }
  // Weight bytes a product reads: panels plus int8 scales and row sums.
  int64_t size_bytes() const;

  // Row-major f32 [rows, cols] of the values the kernels multiply by: the f32 weights,
  // bf16 widened, int8 scale * q, int4 scale * q + min, int8 groups scale * q. The
  // reference kernels use it.
  std::vector<float> Unpack() const;

 private:
  void Allocate(WeightFormat format, int64_t rows, int64_t cols);
  void PackPanel(const float* w, int64_t panel);
  // One row of w into lane `lane` of its panel.
  void PackF32Row(const float* src, int64_t lane, uint8_t* panel) const;
  void PackBf16Row(const float* src, int64_t lane, uint8_t* panel) const;
  void PackInt8Row(const float* src, int64_t row, int64_t lane, uint8_t* panel);
  void PackInt4Row(const float* src, int64_t lane, uint8_t* panel) const;
  void PackInt8GroupsRow(const float* src, int64_t lane, uint8_t* panel) const;
  void PutInt4Group(const uint8_t* q, int64_t n, Int4Group params, int64_t lane, int64_t group,
                    uint8_t* panel) const;
  float Element(int64_t row, int64_t col) const;

  WeightBuffer data_;              // [num_panels, panel_bytes]
  std::vector<float> scales_;      // int8: [num_panels * 16]
  std::vector<int32_t> row_sums_;  // int8: [num_panels * 16]
  WeightMatrix matrix_;            // views the members above
};

}  // namespace surge
