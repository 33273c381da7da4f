#include "kernels/reference/reference.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "base/check.h"
#include "kernels/kv_codec.h"
#include "kernels/weight_codec.h"

namespace surge::reference {

void MatMul(const float* x, int64_t m, const WeightMatrix& w, const float* bias, float* y) {
  CHECK(w.dtype == WeightDType::kF32 && w.layout == WeightLayout::kRowMajor);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t n = 0; n < w.rows; ++n) {
      double sum = bias ? bias[n] : 0.0;
      for (int64_t k = 0; k < w.cols; ++k)
        sum += double(x[i * w.cols + k]) * w.f32()[n * w.cols + k];
      y[i * w.rows + n] = static_cast<float>(sum);
    }
  }
}

void MatMulQuantizedActivations(const float* x, int64_t m, const WeightMatrix& w, const float* bias,
                                float* y, int64_t group_size) {
  CHECK(w.dtype == WeightDType::kF32 && w.layout == WeightLayout::kRowMajor);
  const int64_t group = group_size > 0 ? group_size : std::max<int64_t>(w.cols, 1);
  std::vector<int8_t> q(w.cols);
  std::vector<double> scales((w.cols + group - 1) / group);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t g = 0; g * group < w.cols; ++g) {
      const int64_t n = std::min(group, w.cols - g * group);
      scales[g] = QuantizeActivationRow(x + i * w.cols + g * group, n, q.data() + g * group);
    }
    for (int64_t n = 0; n < w.rows; ++n) {
      double sum = 0.0;
      for (int64_t k = 0; k < w.cols; ++k)
        sum += scales[k / group] * double(q[k]) * w.f32()[n * w.cols + k];
      y[i * w.rows + n] = static_cast<float>(sum + (bias ? bias[n] : 0.0));
    }
  }
}

void RmsNorm(const float* x, const float* weight, int64_t num_rows, int64_t dim, float eps,
             float* y) {
  for (int64_t r = 0; r < num_rows; ++r) {
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += double(x[r * dim + i]) * x[r * dim + i];
    const double inv_rms = 1.0 / std::sqrt(sum / dim + eps);
    for (int64_t i = 0; i < dim; ++i) y[r * dim + i] = float(x[r * dim + i] * inv_rms * weight[i]);
  }
}

void SiluMul(const float* gate, const float* up, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    y[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void Softmax(float* x, int64_t n) {
  double max = x[0];
  for (int64_t i = 1; i < n; ++i) max = std::max<double>(max, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - max);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::exp(x[i] - max) / sum);
}

int64_t Argmax(const float* x, int64_t n) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) continue;
    if (best < 0 || x[i] > x[best]) best = i;
  }
  return best < 0 ? 0 : best;
}

double RopeInvFrequency(const RopeParams& p, int64_t i) {
  // YaRN's reference is the PyTorch one (tests/data/deepseek_yarn_rope.json, rope_yarn_test).
  CHECK(p.kind != RopeKind::kYarn) << "no scalar YaRN reference here";
  const double base = 1.0 / std::pow(p.theta, 2.0 * i / p.head_dim);
  if (p.kind == RopeKind::kLinear) return base / p.factor;
  if (p.kind != RopeKind::kLlama3) return base;
  const double wavelen = 2.0 * std::numbers::pi / base;
  const double old_len = p.original_max_position_embeddings;
  if (wavelen < old_len / p.high_freq_factor) return base;
  if (wavelen > old_len / p.low_freq_factor) return base / p.factor;
  const double smooth =
      (old_len / wavelen - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
  return (1.0 - smooth) * base / p.factor + smooth * base;
}

void Rope(float* x, int64_t num_heads, const RopeParams& params, int64_t position) {
  const int64_t half = params.head_dim / 2;
  for (int64_t h = 0; h < num_heads; ++h) {
    float* head = x + h * params.head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const double angle = position * RopeInvFrequency(params, i);
      const double a = head[i], b = head[i + half];
      head[i] = static_cast<float>(a * std::cos(angle) - b * std::sin(angle));
      head[i + half] = static_cast<float>(b * std::cos(angle) + a * std::sin(angle));
    }
  }
}

namespace {

// The values of position `pos` for kv head g in the paged pool, decoded by the scalar
// definition of the cache's format.
std::vector<float> PagedRow(const uint8_t* base, const PagedKvView& kv, const AttentionQueries& q,
                            int64_t pos, int32_t g) {
  const int64_t block = q.block_table[pos / kv.block_size];
  const int64_t row = pos % kv.block_size;
  const int64_t row_bytes = KvRowBytes(kv.dtype, kv.head_dim);
  std::vector<float> values(kv.head_dim);
  // [num_blocks, num_kv_heads, block_size, row_bytes]
  DequantizeKvRow(kv.dtype, base + ((block * kv.num_kv_heads + g) * kv.block_size + row) * row_bytes,
                  kv.head_dim, values.data());
  return values;
}

void AttendOne(const PagedKvView& kv, const AttentionQueries& q, int32_t j, int32_t h) {
  const int32_t g = h / (q.num_heads / kv.num_kv_heads);
  const int64_t num_keys = q.start_position + j + 1;
  const float* query = q.q + j * q.q_stride + static_cast<int64_t>(h) * kv.head_dim;
  std::vector<double> scores(num_keys);
  double max = -INFINITY;
  for (int64_t t = 0; t < num_keys; ++t) {
    const std::vector<float> key = PagedRow(kv.k, kv, q, t, g);
    double dot = 0.0;
    for (int32_t d = 0; d < kv.head_dim; ++d) dot += double(query[d]) * key[d];
    scores[t] = dot * q.scale;
    max = std::max(max, scores[t]);
  }
  double sum = 0.0;
  for (double& s : scores) sum += (s = std::exp(s - max));
  std::vector<double> acc(kv.head_dim, 0.0);
  for (int64_t t = 0; t < num_keys; ++t) {
    const std::vector<float> value = PagedRow(kv.v, kv, q, t, g);
    for (int32_t d = 0; d < kv.head_dim; ++d) acc[d] += scores[t] / sum * value[d];
  }
  float* out = q.out + j * q.out_stride + static_cast<int64_t>(h) * kv.head_dim;
  for (int32_t d = 0; d < kv.head_dim; ++d) out[d] = static_cast<float>(acc[d]);
}

}  // namespace

void PagedAttention(const PagedKvView& kv, const AttentionQueries& queries) {
  for (int32_t j = 0; j < queries.num_queries; ++j) {
    for (int32_t h = 0; h < queries.num_heads; ++h) AttendOne(kv, queries, j, h);
  }
}

}  // namespace surge::reference
