// KvLayout: the shape of a paged KV cache, all that kv/ knows about a model.
#pragma once

#include <cstddef>
#include <cstdint>

namespace surge {

// Index of a block in the KV pool; the same index addresses every layer's K and V.
using BlockId = int32_t;

enum class KvDType { kF32 };  // bf16/f16/int8/int4 come with quantized KV

struct KvLayout {
  int32_t num_layers = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_size = 16;  // tokens per block
  KvDType dtype = KvDType::kF32;

  // Elements of K (or V) in one block of one layer: block_size * num_kv_heads * head_dim.
  size_t elements_per_block() const {
    return static_cast<size_t>(block_size) * num_kv_heads * head_dim;
  }
  // Bytes one block takes across all layers, K and V.
  size_t bytes_per_block() const { return 2 * sizeof(float) * elements_per_block() * num_layers; }
};

}  // namespace surge
