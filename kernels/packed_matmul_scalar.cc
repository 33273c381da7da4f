// The portable kernels for panel-layout weights, and the activation converters every
// level's results are defined by. Each output is computed with exactly the arithmetic
// the SIMD kernels use (the same fma chain over k for f32/bf16, the same exact integer
// dot and f32 epilogue for int8/int4), so on these dtypes every level gives the same
// bits; the SIMD paths are tested against this and against the double reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/packed_matmul.h"
#include "kernels/weight_codec.h"

namespace surge::internal {
namespace {

float BiasAt(const PackedProblem& p, int64_t n) { return p.bias ? p.bias[n] : 0.0f; }

// The int8 q of row i at column k in the prepared (interleaved) activations.
int32_t XAt(const PreparedActivations& a, int64_t i, int64_t k) {
  return static_cast<int8_t>(a.Unit(i, k / 4)[k % 4]);
}

// A grow-only row buffer per thread for the converters.
uint8_t* RowBuffer(int64_t bytes) {
  thread_local std::vector<uint8_t> buffer;
  if (static_cast<int64_t>(buffer.size()) < bytes) buffer.resize(bytes);
  return buffer.data();
}

// Copies one row's `stride` bytes to its interleaved place.
void StoreRow(const PreparedActivations& out, int64_t i, const uint8_t* row) {
  for (int64_t j = 0; j < out.stride / 4; ++j) std::memcpy(out.Unit(i, j), row + 4 * j, 4);
}

int64_t LanesIn(const WeightMatrix& w, int64_t panel) {
  return std::min(kPanelRows, w.rows - panel * kPanelRows);
}

// f32 and bf16: acc = fma(x[k], w[k], acc) for k = 0, 1, ..., then + bias.
template <typename LoadWeight>
void FmaChainTile(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
                  int64_t panel_end, LoadWeight load) {
  const WeightMatrix& w = *p.w;
  const int64_t k_size = w.cols, n_size = w.rows;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const uint8_t* wp = w.bytes() + panel * w.panel_bytes;
    for (int64_t i = m_begin; i < m_end; ++i) {
      const float* x = p.x + i * k_size;
      for (int64_t lane = 0; lane < LanesIn(w, panel); ++lane) {
        float acc = 0.0f;
        for (int64_t k = 0; k < k_size; ++k) acc = std::fma(x[k], load(wp, lane, k), acc);
        const int64_t n = panel * kPanelRows + lane;
        p.y[i * n_size + n] = acc + BiasAt(p, n);
      }
    }
  }
}

void TileF32(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
             int64_t panel_end) {
  FmaChainTile(p, m_begin, m_end, panel_begin, panel_end,
               [](const uint8_t* wp, int64_t lane, int64_t k) {
                 float v;
                 std::memcpy(&v, wp + (k * kPanelRows + lane) * 4, 4);
                 return v;
               });
}

void TileBf16(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
              int64_t panel_end) {
  FmaChainTile(p, m_begin, m_end, panel_begin, panel_end,
               [](const uint8_t* wp, int64_t lane, int64_t k) {
                 uint16_t b;
                 std::memcpy(&b, wp + ((k / 2) * 32 + lane * 2 + k % 2) * 2, 2);
                 return Bf16ToFloat(b);
               });
}

// int8: the exact integer dot of the row's q with W's q, then
// y = fma(float(dot), w_scale * x_scale, bias).
void TileInt8(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
              int64_t panel_end) {
  const WeightMatrix& w = *p.w;
  const PreparedActivations& a = p.activations;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const int8_t* wp = reinterpret_cast<const int8_t*>(w.bytes() + panel * w.panel_bytes);
    for (int64_t i = m_begin; i < m_end; ++i) {
      for (int64_t lane = 0; lane < LanesIn(w, panel); ++lane) {
        int32_t dot = 0;
        for (int64_t k = 0; k < w.cols; ++k)
          dot += XAt(a, i, k) * wp[(k / 4) * 64 + lane * 4 + k % 4];
        const int64_t n = panel * kPanelRows + lane;
        p.y[i * w.rows + n] =
            std::fma(static_cast<float>(dot), w.scales[n] * a.scales[i], BiasAt(p, n));
      }
    }
  }
}

// int4: per group g, with the exact integer sum A = sum q_w * q_x, x's group scale s_g
// and S_g = s_g * sum q_x (both prepared): acc = fma(scale_g * s_g, A, acc);
// acc = fma(min_g, S_g, acc); then y = acc + bias.
float Int4Output(const WeightMatrix& w, const uint8_t* wp, int64_t lane,
                 const PreparedActivations& a, int64_t i) {
  const float* x_scales = a.scales + i * a.num_groups;
  const float* group_sums = a.group_sums + i * a.num_groups;
  const int64_t group = w.group_size, block_bytes = group * 8 + 64;
  const int64_t num_groups = (w.cols + group - 1) / group;
  float acc = 0.0f;
  for (int64_t g = 0; g < num_groups; ++g) {
    const uint8_t* block = wp + g * block_bytes;
    int32_t dot = 0;
    for (int64_t kk = 0; kk < group; ++kk) {
      const uint8_t byte = block[(kk / 8) * 64 + lane * 4 + kk % 4];
      const int32_t q = (kk % 8) >= 4 ? byte >> 4 : byte & 0x0f;
      dot += q * XAt(a, i, g * group + kk);
    }
    Int4Group params;
    std::memcpy(&params.scale_f16, block + group * 8 + lane * 2, 2);
    std::memcpy(&params.min_f16, block + group * 8 + 32 + lane * 2, 2);
    const float scale = params.scale() * x_scales[g];
    acc = std::fma(scale, static_cast<float>(dot), acc);
    acc = std::fma(params.min(), group_sums[g], acc);
  }
  return acc;
}

// int8 groups: per group g, the exact integer dot A = sum q_w * q_x (W stored as q + 128:
// what vpdpbusd sums is A + 128 X, X = sum q_x, and the kernels take 128 X off exactly),
// then acc = fma(scale_g * s_g, A, acc) with x's group scale s_g; y = acc + bias.
float Int8GroupsOutput(const WeightMatrix& w, const uint8_t* wp, int64_t lane,
                       const PreparedActivations& a, int64_t i) {
  const float* x_scales = a.scales + i * a.num_groups;
  const int64_t group = w.group_size;
  const uint8_t* scales = wp + a.num_groups * group * kPanelRows;  // [num_groups][16] f16
  float acc = 0.0f;
  for (int64_t g = 0; g < a.num_groups; ++g) {
    int32_t dot = 0;
    for (int64_t k = g * group; k < (g + 1) * group; ++k)
      dot += (wp[(k / 4) * 64 + lane * 4 + k % 4] - 128) * XAt(a, i, k);
    uint16_t scale;
    std::memcpy(&scale, scales + (g * kPanelRows + lane) * 2, 2);
    acc = std::fma(F16ToFloat(scale) * x_scales[g], static_cast<float>(dot), acc);
  }
  return acc;
}

void TileInt8Groups(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
                    int64_t panel_end) {
  const WeightMatrix& w = *p.w;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const uint8_t* wp = w.bytes() + panel * w.panel_bytes;
    for (int64_t i = m_begin; i < m_end; ++i) {
      for (int64_t lane = 0; lane < LanesIn(w, panel); ++lane) {
        const int64_t n = panel * kPanelRows + lane;
        p.y[i * w.rows + n] = Int8GroupsOutput(w, wp, lane, p.activations, i) + BiasAt(p, n);
      }
    }
  }
}

void TileInt4(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
              int64_t panel_end) {
  const WeightMatrix& w = *p.w;
  const PreparedActivations& a = p.activations;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const uint8_t* wp = w.bytes() + panel * w.panel_bytes;
    for (int64_t i = m_begin; i < m_end; ++i) {
      for (int64_t lane = 0; lane < LanesIn(w, panel); ++lane) {
        const int64_t n = panel * kPanelRows + lane;
        p.y[i * w.rows + n] = Int4Output(w, wp, lane, a, i) + BiasAt(p, n);
      }
    }
  }
}

}  // namespace

void PrepareBf16Scalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                       const PreparedActivations& out) {
  uint16_t* row = reinterpret_cast<uint16_t*>(RowBuffer(out.stride));
  for (int64_t i = row_begin; i < row_end; ++i) {
    for (int64_t j = 0; j < k; ++j) row[j] = FloatToBf16(x[i * k + j]);
    std::fill(row + k, row + out.stride / 2, uint16_t{0});
    StoreRow(out, i, reinterpret_cast<const uint8_t*>(row));
  }
}

// QuantizeActivationRow into a zero-padded row; flips every byte's top bit for q + 128
// (padding 0 becomes 128).
void QuantizeRows(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                  const PreparedActivations& out, bool offset) {
  int8_t* row = reinterpret_cast<int8_t*>(RowBuffer(out.stride));
  for (int64_t i = row_begin; i < row_end; ++i) {
    out.scales[i] = QuantizeActivationRow(x + i * k, k, row);
    std::fill(row + k, row + out.stride, int8_t{0});
    if (offset) {
      for (int64_t j = 0; j < out.stride; ++j) row[j] = static_cast<int8_t>(row[j] ^ 0x80);
    }
    StoreRow(out, i, reinterpret_cast<const uint8_t*>(row));
  }
}

// kS8Groups: QuantizeActivationRow on each group of each row (the last group's values
// past k are 0), with the group's scale and scale * sum q.
void QuantizeGroups(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                    const PreparedActivations& out) {
  int8_t* row = reinterpret_cast<int8_t*>(RowBuffer(out.stride));
  const int64_t group = out.group_size;
  for (int64_t i = row_begin; i < row_end; ++i) {
    std::fill(row, row + out.stride, int8_t{0});
    for (int64_t g = 0; g < out.num_groups; ++g) {
      const int64_t n = std::max<int64_t>(0, std::min(group, k - g * group));
      const float scale = QuantizeActivationRow(x + i * k + g * group, n, row + g * group);
      int32_t sum = 0;
      for (int64_t j = 0; j < group; ++j) sum += row[g * group + j];
      out.scales[i * out.num_groups + g] = scale;
      out.group_sums[i * out.num_groups + g] = scale * static_cast<float>(sum);
      out.q_sums[i * out.num_groups + g] = static_cast<float>(sum);
    }
    StoreRow(out, i, reinterpret_cast<const uint8_t*>(row));
  }
}

void PrepareS8Scalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                     const PreparedActivations& out) {
  QuantizeRows(x, k, row_begin, row_end, out, /*offset=*/false);
}

void PrepareU8OffsetScalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out) {
  QuantizeRows(x, k, row_begin, row_end, out, /*offset=*/true);
}

void PrepareS8GroupsScalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out) {
  QuantizeGroups(x, k, row_begin, row_end, out);
}

PackedKernel ScalarKernel(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kF32:
      return {"f32/scalar", ActivationFormat::kF32, nullptr, TileF32};
    case WeightDType::kBF16:
      return {"bf16/scalar", ActivationFormat::kF32, nullptr, TileBf16};
    case WeightDType::kInt8:
      return {"int8/scalar", ActivationFormat::kS8, PrepareS8Scalar, TileInt8};
    case WeightDType::kInt4:
      return {"int4/scalar", ActivationFormat::kS8Groups, PrepareS8GroupsScalar, TileInt4};
    case WeightDType::kInt8Groups:
      return {"int8-groups/scalar", ActivationFormat::kS8Groups, PrepareS8GroupsScalar,
              TileInt8Groups};
  }
  return {};
}

}  // namespace surge::internal
