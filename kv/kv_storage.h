// KvStorage: the memory of a paged KV cache -- per layer, K and V arrays of
// [num_blocks, num_kv_heads, block_size] rows in the layout's KvDType row format
// (kernels/kv_codec.h; PagedKvView in kernels/attention.h addresses them) -- allocated
// once at start-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/attention.h"
#include "kv/kv_layout.h"

namespace surge {

class KvStorage {
 public:
  // Allocates num_blocks blocks for every layer (layout.bytes_per_block() each, in all),
  // 64-byte aligned per layer and K/V array. Contents start undefined: attention only
  // reads positions a forward pass wrote. CHECKs a positive layout and num_blocks.
  KvStorage(const KvLayout& layout, int32_t num_blocks);
  ~KvStorage();
  KvStorage(const KvStorage&) = delete;
  KvStorage& operator=(const KvStorage&) = delete;

  const KvLayout& layout() const { return layout_; }
  int32_t num_blocks() const { return num_blocks_; }
  size_t size_bytes() const { return size_bytes_; }

  // A layer's whole K (or V) array: [num_blocks, num_kv_heads, block_size] rows of
  // layout().row_bytes() bytes. Under layout().latent both are the one latent array.
  uint8_t* k_layer(int32_t layer) { return LayerArray(layer, 0); }
  uint8_t* v_layer(int32_t layer) { return LayerArray(layer, 1); }
  const uint8_t* k_layer(int32_t layer) const {
    return const_cast<KvStorage*>(this)->k_layer(layer);
  }
  const uint8_t* v_layer(int32_t layer) const {
    return const_cast<KvStorage*>(this)->v_layer(layer);
  }

  // The attention kernels' view of one layer's K and V (both the latent under `latent`).
  PagedKvView view(int32_t layer) const {
    return {k_layer(layer), v_layer(layer), layout_.block_size, layout_.num_kv_heads,
            layout_.head_dim, layout_.dtype};
  }

  // One block of one layer: [num_kv_heads, block_size] rows.
  uint8_t* k_block(int32_t layer, BlockId block) { return k_layer(layer) + BlockOffset(block); }
  uint8_t* v_block(int32_t layer, BlockId block) { return v_layer(layer) + BlockOffset(block); }

 private:
  uint8_t* LayerArray(int32_t layer, int32_t k_or_v);
  size_t BlockOffset(BlockId block) const;

  KvLayout layout_;
  int32_t num_blocks_;
  size_t array_stride_bytes_;  // distance between consecutive K/V arrays, 64-byte multiple
  size_t size_bytes_;
  // [num_layers][K, V or latent][num_blocks, num_kv_heads, block_size, row_bytes] (+ pad)
  uint8_t* data_;
};

}  // namespace surge
