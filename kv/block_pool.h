// BlockPool: hands out the KV cache's block ids and takes them back, with a reference
// count per block so that later a block can be shared (prefix caching).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kv/kv_layout.h"

namespace surge {

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  // A free block with reference count 1, or nullopt when none is left (not an error:
  // the scheduler decides what to preempt). Recently freed blocks come back first.
  std::optional<BlockId> Allocate();
  // Another holder of an allocated block (sharing). CHECKs that the block is in use.
  void AddRef(BlockId block);
  // Drops one reference; the block is free again when none remain. CHECKs against
  // freeing a free block (a double free is a bookkeeping bug upstream).
  void Free(BlockId block);

  int32_t ref_count(BlockId block) const;
  int32_t num_free_blocks() const { return static_cast<int32_t>(free_blocks_.size()); }
  int32_t num_used_blocks() const { return num_total_blocks() - num_free_blocks(); }
  int32_t num_total_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }

 private:
  void CheckId(BlockId block) const;

  std::vector<int32_t> ref_counts_;   // [num_total_blocks]; 0 = free
  std::vector<BlockId> free_blocks_;  // LIFO stack of the blocks with ref count 0
};

}  // namespace surge
