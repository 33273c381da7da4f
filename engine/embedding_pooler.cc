#include "engine/embedding_pooler.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace surge {

EmbeddingPooler::EmbeddingPooler(PoolingKind kind, int32_t hidden_size, bool normalize)
    : kind_(kind), hidden_size_(hidden_size), normalize_(normalize), sum_(hidden_size, 0.0) {}

void EmbeddingPooler::Add(int32_t start_position, std::span<const float> rows) {
  DCHECK(rows.size() % hidden_size_ == 0);
  if (start_position == 0) {
    std::fill(sum_.begin(), sum_.end(), 0.0);
    num_rows_ = 0;
  }
  const int64_t num_rows = static_cast<int64_t>(rows.size()) / hidden_size_;
  if (num_rows == 0) return;
  if (kind_ == PoolingKind::kCls) {
    if (start_position == 0) std::copy(rows.begin(), rows.begin() + hidden_size_, sum_.begin());
    num_rows_ = 1;
    return;
  }
  if (kind_ == PoolingKind::kLast) {
    const float* last = rows.data() + (num_rows - 1) * hidden_size_;
    std::copy(last, last + hidden_size_, sum_.begin());
    num_rows_ = 1;
    return;
  }
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* row = rows.data() + r * hidden_size_;
    for (int32_t i = 0; i < hidden_size_; ++i) sum_[i] += row[i];
  }
  num_rows_ += num_rows;
}

std::vector<float> EmbeddingPooler::Finish() const {
  std::vector<float> out(hidden_size_, 0.0f);
  if (num_rows_ == 0) return out;
  const double scale = kind_ == PoolingKind::kMean ? 1.0 / static_cast<double>(num_rows_) : 1.0;
  double norm_squared = 0;
  for (double value : sum_) norm_squared += (value * scale) * (value * scale);
  const double norm = normalize_ ? std::sqrt(norm_squared) : 1.0;
  if (norm == 0) return out;
  for (int32_t i = 0; i < hidden_size_; ++i) out[i] = static_cast<float>(sum_[i] * scale / norm);
  return out;
}

}  // namespace surge
