#include "kernels/packed_weight.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "kernels/weight_codec.h"

namespace surge {
namespace {

constexpr int64_t kAlignBytes = 64;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Byte offset of (lane, k) inside an int4 group block, and whether it is the high nibble.
struct NibbleSlot {
  int64_t byte;
  bool high;
};
NibbleSlot Int4Slot(int64_t lane, int64_t k_in_group) {
  const int64_t octet = k_in_group / 8, j = k_in_group % 8;
  return {octet * 64 + lane * 4 + j % 4, j >= 4};
}

int64_t Int4BlockBytes(int32_t group_size) { return group_size * 8 + 64; }

// int8 groups: the q of every group of a panel, then the f16 scales of every group.
int64_t Int8GroupsPayloadBytes(int64_t cols, int32_t group_size) {
  return CeilDiv(cols, group_size) * group_size * kPanelRows;
}
int64_t Int8GroupsScaleOffset(int64_t cols, int32_t group_size, int64_t group_index) {
  return Int8GroupsPayloadBytes(cols, group_size) + group_index * kPanelRows * 2;
}

bool ValidGroupSize(int32_t group_size) {
  return group_size == 32 || group_size == 64 || group_size == 128;
}

}  // namespace

WeightBuffer AllocateWeightBuffer(int64_t bytes) {
  constexpr int64_t kHugePage = int64_t{2} << 20;
  const int64_t alignment = bytes >= kHugePage ? kHugePage : kAlignBytes;
  const int64_t size = CeilDiv(std::max<int64_t>(bytes, 1), alignment) * alignment;
  WeightBuffer buffer(static_cast<uint8_t*>(std::aligned_alloc(alignment, size)));
  CHECK(buffer != nullptr) << "out of memory for " << size << " bytes of weights";
#ifdef MADV_HUGEPAGE
  if (alignment == kHugePage) madvise(buffer.get(), size, MADV_HUGEPAGE);  // advice only
#endif
  std::memset(buffer.get(), 0, size);
  return buffer;
}

const char* WeightDTypeName(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kF32:
      return "f32";
    case WeightDType::kBF16:
      return "bf16";
    case WeightDType::kInt8:
      return "int8";
    case WeightDType::kInt4:
      return "int4";
    case WeightDType::kInt8Groups:
      return "int8";
  }
  return "?";
}

int64_t PackedWeight::PanelBytes(WeightFormat format, int64_t cols) {
  switch (format.dtype) {
    case WeightDType::kF32:
      return cols * kPanelRows * 4;
    case WeightDType::kBF16:
      return CeilDiv(cols, 2) * kPanelRows * 2 * 2;
    case WeightDType::kInt8:
      return CeilDiv(cols, 4) * kPanelRows * 4;
    case WeightDType::kInt4:
      return CeilDiv(cols, format.group_size) * Int4BlockBytes(format.group_size);
    case WeightDType::kInt8Groups:
      return CeilDiv(Int8GroupsScaleOffset(cols, format.group_size,
                                           CeilDiv(cols, format.group_size)),
                     kAlignBytes) *
             kAlignBytes;
  }
  return 0;
}

PackedWeight PackedWeight::Pack(const float* w, int64_t rows, int64_t cols, WeightFormat format,
                                ThreadPool* pool) {
  CHECK(rows > 0 && cols > 0) << "PackedWeight: empty matrix";
  CHECK(format.dtype != WeightDType::kInt8 || cols <= 65536)
      << "int8 weights need at most 65536 columns, got " << cols;
  if (format.dtype == WeightDType::kInt4 || format.dtype == WeightDType::kInt8Groups) {
    CHECK(ValidGroupSize(format.group_size))
        << WeightDTypeName(format.dtype) << " group size must be 32, 64 or 128, got "
        << format.group_size;
  } else {
    format.group_size = 0;
  }
  PackedWeight packed;
  packed.Allocate(format, rows, cols);
  auto pack = [&](int64_t begin, int64_t end) {
    for (int64_t panel = begin; panel < end; ++panel) packed.PackPanel(w, panel);
  };
  if (pool == nullptr) {
    pack(0, packed.matrix_.num_panels());
  } else {
    pool->ParallelFor(packed.matrix_.num_panels(), pack);
  }
  return packed;
}

void PackedWeight::Allocate(WeightFormat format, int64_t rows, int64_t cols) {
  matrix_ = WeightMatrix{};
  matrix_.dtype = format.dtype;
  matrix_.layout = WeightLayout::kPanels;
  matrix_.rows = rows;
  matrix_.cols = cols;
  matrix_.group_size = format.group_size;
  matrix_.panel_bytes = PanelBytes(format, cols);
  // Zeroed: the padding rows and k stay zero.
  data_ = AllocateWeightBuffer(matrix_.num_panels() * matrix_.panel_bytes);
  matrix_.data = data_.get();
  if (format.dtype == WeightDType::kInt8) {
    scales_.assign(matrix_.num_panels() * kPanelRows, 0.0f);
    row_sums_.assign(matrix_.num_panels() * kPanelRows, 0);
    matrix_.scales = scales_.data();
    matrix_.row_sums = row_sums_.data();
  }
}

// Writes the rows [16 panel, 16 panel + 16) of w (those that exist) into their panel.
void PackedWeight::PackPanel(const float* w, int64_t panel) {
  uint8_t* out = data_.get() + panel * matrix_.panel_bytes;
  for (int64_t lane = 0; lane < kPanelRows; ++lane) {
    const int64_t row = panel * kPanelRows + lane;
    if (row >= matrix_.rows) break;
    const float* src = w + row * matrix_.cols;
    switch (matrix_.dtype) {
      case WeightDType::kF32:
        PackF32Row(src, lane, out);
        break;
      case WeightDType::kBF16:
        PackBf16Row(src, lane, out);
        break;
      case WeightDType::kInt8:
        PackInt8Row(src, row, lane, out);
        break;
      case WeightDType::kInt4:
        PackInt4Row(src, lane, out);
        break;
      case WeightDType::kInt8Groups:
        PackInt8GroupsRow(src, lane, out);
        break;
    }
  }
}

void PackedWeight::PackF32Row(const float* src, int64_t lane, uint8_t* panel) const {
  for (int64_t k = 0; k < matrix_.cols; ++k)
    std::memcpy(panel + (k * kPanelRows + lane) * 4, &src[k], 4);
}

void PackedWeight::PackBf16Row(const float* src, int64_t lane, uint8_t* panel) const {
  for (int64_t k = 0; k < matrix_.cols; ++k) {
    const uint16_t b = FloatToBf16(src[k]);
    std::memcpy(panel + ((k / 2) * 32 + lane * 2 + k % 2) * 2, &b, 2);
  }
}

void PackedWeight::PackInt8Row(const float* src, int64_t row, int64_t lane, uint8_t* panel) {
  std::vector<int8_t> q(matrix_.cols);
  scales_[row] = QuantizeInt8Row(src, matrix_.cols, q.data());
  int32_t sum = 0;
  for (int64_t k = 0; k < matrix_.cols; ++k) {
    panel[(k / 4) * 64 + lane * 4 + k % 4] = static_cast<uint8_t>(q[k]);
    sum += q[k];
  }
  row_sums_[row] = sum;
}

void PackedWeight::PackInt8GroupsRow(const float* src, int64_t lane, uint8_t* panel) const {
  const int64_t cols = matrix_.cols;
  const int32_t group = matrix_.group_size;
  int8_t q[128];
  for (int64_t g = 0; g * group < cols; ++g) {
    const int64_t n = std::min<int64_t>(group, cols - g * group);
    const uint16_t scale = QuantizeInt8Group(src + g * group, n, q);
    for (int64_t kk = 0; kk < n; ++kk) {
      const int64_t k = g * group + kk;
      panel[(k / 4) * 64 + lane * 4 + k % 4] = static_cast<uint8_t>(q[kk] + 128);
    }
    std::memcpy(panel + Int8GroupsScaleOffset(cols, group, g) + lane * 2, &scale, 2);
  }
}

void PackedWeight::PackInt4Row(const float* src, int64_t lane, uint8_t* panel) const {
  const int64_t cols = matrix_.cols, group = matrix_.group_size;
  uint8_t q[128];
  for (int64_t g = 0; g * group < cols; ++g) {
    const int64_t n = std::min(group, cols - g * group);
    const Int4Group params = QuantizeInt4Group(src + g * group, n, q);
    PutInt4Group(q, n, params, lane, g, panel);
  }
}

void PackedWeight::PutInt4Group(const uint8_t* q, int64_t n, Int4Group params, int64_t lane,
                                int64_t group_index, uint8_t* panel) const {
  const int64_t group = matrix_.group_size;
  uint8_t* block = panel + group_index * Int4BlockBytes(static_cast<int32_t>(group));
  for (int64_t k = 0; k < n; ++k) {
    const NibbleSlot slot = Int4Slot(lane, k);
    block[slot.byte] |= slot.high ? static_cast<uint8_t>(q[k] << 4) : q[k];
  }
  std::memcpy(block + group * 8 + lane * 2, &params.scale_f16, 2);
  std::memcpy(block + group * 8 + 32 + lane * 2, &params.min_f16, 2);
}

PackedWeight PackedWeight::PackInt4Groups(const uint8_t* q, const Int4Group* groups,
                                          int64_t rows, int64_t cols, int32_t group_size,
                                          ThreadPool* pool) {
  CHECK(rows > 0 && cols > 0 && (group_size == 32 || group_size == 64 || group_size == 128) &&
        cols % group_size == 0)
      << "PackInt4Groups: " << rows << "x" << cols << " in groups of " << group_size;
  PackedWeight packed;
  packed.Allocate({WeightDType::kInt4, group_size}, rows, cols);
  const int64_t num_groups = cols / group_size;
  auto pack = [&](int64_t begin, int64_t end) {
    for (int64_t panel = begin; panel < end; ++panel) {
      uint8_t* out = packed.data_.get() + panel * packed.matrix_.panel_bytes;
      for (int64_t lane = 0; lane < kPanelRows && panel * kPanelRows + lane < rows; ++lane) {
        const int64_t row = panel * kPanelRows + lane;
        for (int64_t g = 0; g < num_groups; ++g) {
          packed.PutInt4Group(q + row * cols + g * group_size, group_size,
                              groups[row * num_groups + g], lane, g, out);
        }
      }
    }
  };
  if (pool == nullptr) {
    pack(0, packed.matrix_.num_panels());
  } else {
    pool->ParallelFor(packed.matrix_.num_panels(), pack);
  }
  return packed;
}

float PackedWeight::Element(int64_t row, int64_t col) const {
  const int64_t lane = row % kPanelRows;
  const uint8_t* panel = data_.get() + (row / kPanelRows) * matrix_.panel_bytes;
  switch (matrix_.dtype) {
    case WeightDType::kF32: {
      float v;
      std::memcpy(&v, panel + (col * kPanelRows + lane) * 4, 4);
      return v;
    }
    case WeightDType::kBF16: {
      uint16_t b;
      std::memcpy(&b, panel + ((col / 2) * 32 + lane * 2 + col % 2) * 2, 2);
      return Bf16ToFloat(b);
    }
    case WeightDType::kInt8:
      return scales_[row] *
             static_cast<float>(static_cast<int8_t>(panel[(col / 4) * 64 + lane * 4 + col % 4]));
    case WeightDType::kInt4: {
      const int64_t group = matrix_.group_size;
      const uint8_t* block = panel + (col / group) * Int4BlockBytes(static_cast<int32_t>(group));
      const NibbleSlot slot = Int4Slot(lane, col % group);
      const uint8_t q = slot.high ? block[slot.byte] >> 4 : block[slot.byte] & 0x0f;
      Int4Group params;
      std::memcpy(&params.scale_f16, block + group * 8 + lane * 2, 2);
      std::memcpy(&params.min_f16, block + group * 8 + 32 + lane * 2, 2);
      return DequantizeInt4(params, q);
    }
    case WeightDType::kInt8Groups: {
      const int32_t group = matrix_.group_size;
      uint16_t scale;
      std::memcpy(&scale,
                  panel + Int8GroupsScaleOffset(matrix_.cols, group, col / group) + lane * 2, 2);
      const int32_t q = panel[(col / 4) * 64 + lane * 4 + col % 4] - 128;
      return F16ToFloat(scale) * static_cast<float>(q);
    }
  }
  return 0.0f;
}

std::vector<float> PackedWeight::Unpack() const {
  std::vector<float> w(matrix_.rows * matrix_.cols);
  for (int64_t r = 0; r < matrix_.rows; ++r)
    for (int64_t c = 0; c < matrix_.cols; ++c) w[r * matrix_.cols + c] = Element(r, c);
  return w;
}

int64_t PackedWeight::size_bytes() const {
  return matrix_.num_panels() * matrix_.panel_bytes +
         static_cast<int64_t>(scales_.size() * sizeof(float) + row_sums_.size() * sizeof(int32_t));
}

}  // namespace surge
