#include "kv/kv_storage.h"

#include <cstdlib>

#include "base/check.h"

namespace surge {
namespace {

constexpr size_t kAlignmentBytes = 64;

size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace

KvStorage::KvStorage(const KvLayout& layout, int32_t num_blocks)
    : layout_(layout), num_blocks_(num_blocks) {
  CHECK(layout.num_layers > 0 && layout.num_kv_heads > 0 && layout.head_dim > 0 &&
        layout.block_size > 0)
      << "KvStorage: empty layout";
  CHECK_GT(num_blocks, 0);
  const size_t array_bytes = layout.bytes_per_block_array() * num_blocks;
  array_stride_bytes_ = RoundUp(array_bytes, kAlignmentBytes);
  size_bytes_ = array_stride_bytes_ * layout.num_arrays() * layout.num_layers;
  // Large requests come straight from mmap: zero pages, committed only when first written.
  data_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignmentBytes, size_bytes_));
  CHECK(data_ != nullptr) << "KvStorage: cannot allocate " << size_bytes_ << " bytes";
}

KvStorage::~KvStorage() { std::free(data_); }

uint8_t* KvStorage::LayerArray(int32_t layer, int32_t k_or_v) {
  DCHECK(layer >= 0 && layer < layout_.num_layers);
  if (layout_.latent) k_or_v = 0;  // V is the latent too
  return data_ +
         (layout_.num_arrays() * static_cast<size_t>(layer) + k_or_v) * array_stride_bytes_;
}

size_t KvStorage::BlockOffset(BlockId block) const {
  DCHECK(block >= 0 && block < num_blocks_);
  return static_cast<size_t>(block) * layout_.bytes_per_block_array();
}

}  // namespace surge
