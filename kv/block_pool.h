// BlockPool: hands out the KV cache's block ids and takes them back, with a reference
// count per block (sharing across sequences) and, for prefix caching, an LRU of free
// blocks whose contents are still cached: they are reused by a later prefix hit, or
// evicted (oldest first) only when no plain free block is left.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv/kv_layout.h"

namespace surge {

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  // A free block that no cache entry names, with reference count 1; nullopt when there is
  // none (not an error: the caller evicts a cached one, or the scheduler preempts).
  // Recently freed blocks come back first.
  std::optional<BlockId> Allocate();
  // Another holder of a block: a held one (sharing), or a cached free one, which leaves
  // the LRU (a prefix hit revives it). CHECKs that the block is held or cached.
  void AddRef(BlockId block);
  // Drops one reference. At zero a cached block goes to the LRU's newest end, any other
  // to the free stack. CHECKs against freeing a free block (a bookkeeping bug upstream).
  void Free(BlockId block);

  // Whether a cache entry names the block's contents (set by the prefix cache when it
  // registers the block, cleared when it drops the entry). Clearing it on a free block
  // moves the block from the LRU to the free stack.
  void SetCached(BlockId block, bool cached);
  bool cached(BlockId block) const;
  // The least recently freed cached block (the next to evict), nullopt when none.
  std::optional<BlockId> OldestCachedFree() const;

  int32_t ref_count(BlockId block) const;
  // Free blocks include the cached ones in the LRU: all that allocation can have.
  int32_t num_free_blocks() const { return num_uncached_free_blocks() + num_cached_free_; }
  int32_t num_uncached_free_blocks() const { return static_cast<int32_t>(free_blocks_.size()); }
  int32_t num_cached_free_blocks() const { return num_cached_free_; }
  int32_t num_used_blocks() const { return num_total_blocks() - num_free_blocks(); }
  int32_t num_total_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }

  // For tests: the free stack holds exactly the uncached blocks nobody holds, the LRU
  // exactly the cached ones, as a well-formed list. Empty when all hold, else the problem.
  std::string CheckInvariants() const;

 private:
  static constexpr BlockId kNone = -1;
  void CheckId(BlockId block) const;
  void LinkNewest(BlockId block);
  void Unlink(BlockId block);

  std::vector<int32_t> ref_counts_;   // [num_total_blocks]; 0 = free
  std::vector<uint8_t> cached_;       // [num_total_blocks]; 1 = a cache entry names it
  std::vector<BlockId> free_blocks_;  // LIFO stack of the uncached blocks with ref count 0
  // LRU of the cached blocks with ref count 0: a doubly linked list through these arrays,
  // oldest at lru_oldest_. [num_total_blocks] each; kNone ends the list.
  std::vector<BlockId> lru_prev_;
  std::vector<BlockId> lru_next_;
  BlockId lru_oldest_ = kNone;
  BlockId lru_newest_ = kNone;
  int32_t num_cached_free_ = 0;
};

}  // namespace surge
