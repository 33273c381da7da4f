#include "kv/block_pool.h"

#include "base/check.h"

namespace surge {

BlockPool::BlockPool(int32_t num_blocks)
    : ref_counts_(num_blocks, 0),
      cached_(num_blocks, 0),
      lru_prev_(num_blocks, kNone),
      lru_next_(num_blocks, kNone) {
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
  if (ref_counts_[block] == 0) {
    CHECK(cached_[block]) << "AddRef on free block " << block;
    Unlink(block);
  }
  ++ref_counts_[block];
}

void BlockPool::Free(BlockId block) {
  CheckId(block);
  CHECK_GT(ref_counts_[block], 0) << "double free of block " << block;
  if (--ref_counts_[block] > 0) return;
  if (cached_[block]) {
    LinkNewest(block);
  } else {
    free_blocks_.push_back(block);
  }
}

void BlockPool::SetCached(BlockId block, bool cached) {
  CheckId(block);
  if (cached_[block] == static_cast<uint8_t>(cached)) return;
  cached_[block] = cached;
  if (ref_counts_[block] > 0) return;
  CHECK(!cached) << "caching free block " << block;
  Unlink(block);
  free_blocks_.push_back(block);
}

bool BlockPool::cached(BlockId block) const {
  CheckId(block);
  return cached_[block] != 0;
}

std::optional<BlockId> BlockPool::OldestCachedFree() const {
  if (lru_oldest_ == kNone) return std::nullopt;
  return lru_oldest_;
}

int32_t BlockPool::ref_count(BlockId block) const {
  CheckId(block);
  return ref_counts_[block];
}

void BlockPool::LinkNewest(BlockId block) {
  lru_prev_[block] = lru_newest_;
  lru_next_[block] = kNone;
  if (lru_newest_ == kNone) {
    lru_oldest_ = block;
  } else {
    lru_next_[lru_newest_] = block;
  }
  lru_newest_ = block;
  ++num_cached_free_;
}

void BlockPool::Unlink(BlockId block) {
  const BlockId prev = lru_prev_[block];
  const BlockId next = lru_next_[block];
  (prev == kNone ? lru_oldest_ : lru_next_[prev]) = next;
  (next == kNone ? lru_newest_ : lru_prev_[next]) = prev;
  lru_prev_[block] = lru_next_[block] = kNone;
  --num_cached_free_;
}

std::string BlockPool::CheckInvariants() const {
  const int32_t num_total = num_total_blocks();
  std::vector<uint8_t> seen(num_total, 0);  // [num_total_blocks]
  for (BlockId block : free_blocks_) {
    if (block < 0 || block >= num_total || seen[block]) return "free stack corrupt";
    seen[block] = 1;
    if (ref_counts_[block] != 0 || cached_[block]) {
      return "block " + std::to_string(block) + " on the free stack is held or cached";
    }
  }
  int32_t num_linked = 0;
  BlockId prev = kNone;
  for (BlockId block = lru_oldest_; block != kNone; prev = block, block = lru_next_[block]) {
    if (block < 0 || block >= num_total || seen[block] || ++num_linked > num_total) return "LRU list corrupt";
    seen[block] = 1;
    if (lru_prev_[block] != prev) return "LRU back link of block " + std::to_string(block) + " is wrong";
    if (ref_counts_[block] != 0 || !cached_[block]) {
      return "block " + std::to_string(block) + " in the LRU is held or not cached";
    }
  }
  if (prev != lru_newest_ || num_linked != num_cached_free_) return "LRU ends or count wrong";
  for (BlockId block = 0; block < num_total; ++block) {
    if (ref_counts_[block] == 0 && !seen[block]) return "free block " + std::to_string(block) + " is lost";
  }
  return "";
}

void BlockPool::CheckId(BlockId block) const {
  CHECK(block >= 0 && block < num_total_blocks())
      << "block id " << block << " outside [0, " << num_total_blocks() << ")";
}

}  // namespace surge
