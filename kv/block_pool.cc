#include "kv/block_pool.h"

#include "base/check.h"

namespace surge {

BlockPool::BlockPool(int32_t num_blocks) : ref_counts_(num_blocks, 0) {
  CHECK_GE(num_blocks, 0);
  free_blocks_.reserve(num_blocks);
  // Highest id at the bottom so that the first allocations are 0, 1, 2, ...
  for (BlockId id = num_blocks - 1; id >= 0; --id) free_blocks_.push_back(id);
}

std::optional<BlockId> BlockPool::Allocate() {
  if (free_blocks_.empty()) return std::nullopt;
  BlockId block = free_blocks_.back();
  free_blocks_.pop_back();
  ref_counts_[block] = 1;
  return block;
}

void BlockPool::AddRef(BlockId block) {
  CheckId(block);
  CHECK_GT(ref_counts_[block], 0) << "AddRef on free block " << block;
  ++ref_counts_[block];
}

void BlockPool::Free(BlockId block) {
  CheckId(block);
  CHECK_GT(ref_counts_[block], 0) << "double free of block " << block;
  if (--ref_counts_[block] == 0) free_blocks_.push_back(block);
}

int32_t BlockPool::ref_count(BlockId block) const {
  CheckId(block);
  return ref_counts_[block];
}

void BlockPool::CheckId(BlockId block) const {
  CHECK(block >= 0 && block < num_total_blocks())
      << "block id " << block << " outside [0, " << num_total_blocks() << ")";
}

}  // namespace surge
