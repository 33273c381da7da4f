// What the KV tests (and the scheduler's, which run without a model) share: a small
// layout and runs of distinct token ids.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "kv/kv_layout.h"

namespace surge::testing_util {

// One layer, one KV head of 4 values: enough for block bookkeeping.
inline KvLayout TinyKvLayout(int32_t block_size) {
  KvLayout layout;
  layout.num_layers = 1;
  layout.num_kv_heads = 1;
  layout.head_dim = 4;
  layout.block_size = block_size;
  return layout;
}

// first, first + 1, ...
inline std::vector<int32_t> ConsecutiveTokens(int32_t num_tokens, int32_t first = 100) {
  std::vector<int32_t> tokens(num_tokens);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

}  // namespace surge::testing_util
