// KvLayout: the shape of a paged KV cache, all that kv/ knows about a model.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kv_codec.h"

namespace surge {

// Index of a block in the KV pool; the same index addresses every layer's K and V.
using BlockId = int32_t;

// KvDType (kernels/kv_codec.h): f32 | bf16 | f16 | int8 | int4, the format of every K/V row.
struct KvLayout {
  int32_t num_layers = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_size = 16;  // tokens per block
  KvDType dtype = KvDType::kF32;
  // MLA (DeepSeek): one array per layer instead of K and V -- each token's row is the
  // compressed latent plus its rope key (num_kv_heads == 1), read as both K and V.
  bool latent = false;

  // Arrays per layer: K and V, or the latent alone.
  int32_t num_arrays() const { return latent ? 1 : 2; }

  // Bytes of one (token, kv head) row of K (or V), scales and padding included.
  size_t row_bytes() const { return static_cast<size_t>(KvRowBytes(dtype, head_dim)); }
  // Bytes of K (or V) in one block of one layer: num_kv_heads * block_size rows.
  size_t bytes_per_block_array() const {
    return static_cast<size_t>(block_size) * num_kv_heads * row_bytes();
  }
  // Bytes one token takes across all layers, K and V (or the latent).
  size_t bytes_per_token() const {
    return num_arrays() * row_bytes() * num_kv_heads * num_layers;
  }
  // Bytes one block takes across all layers, K and V.
  size_t bytes_per_block() const { return bytes_per_token() * block_size; }
};

}  // namespace surge
