// EmbeddingPooler: folds an embedding request's final hidden states, chunk by chunk as the
// scheduler prefills its prompt, into one L2-normalized vector.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/engine_client.h"

namespace surge {

class EmbeddingPooler {
 public:
  EmbeddingPooler(PoolingKind kind, int32_t hidden_size, bool normalize = true);

  // `rows` [num_rows, hidden_size] of the chunk that starts at `start_position`: kMean
  // gets every row of every chunk, kLast the last token's row, kCls every row of every
  // chunk (it keeps position 0's). A chunk at position 0
  // starts over: a preempted sequence recomputes its prompt from the beginning.
  void Add(int32_t start_position, std::span<const float> rows);

  // The mean (or last or first row), L2-normalized when asked; all zeros stays all
  // zeros. [hidden_size]
  std::vector<float> Finish() const;

 private:
  const PoolingKind kind_;
  const int32_t hidden_size_;
  const bool normalize_;
  int64_t num_rows_ = 0;
  // [hidden_size]: the sum of the rows so far (kMean) or the last row (kLast). Summed in
  // double and always in token order, so chunking never changes the result.
  std::vector<double> sum_;
};

}  // namespace surge
