#include "kv/kv_cache_manager.h"

#include <string>

#include "base/check.h"

namespace surge {

KvCacheManager::KvCacheManager(const KvLayout& layout, int32_t num_blocks)
    : block_size_(layout.block_size), pool_(num_blocks) {
  CHECK_GT(block_size_, 0);
  CHECK_GT(num_blocks, 0);
}

int32_t KvCacheManager::NumBlocksFor(int64_t num_tokens) const {
  return static_cast<int32_t>((num_tokens + block_size_ - 1) / block_size_);
}

int32_t KvCacheManager::NumCachedTokens(std::span<const int32_t> token_ids) const {
  return 0;  // prefix caching looks up the chained hashes of token_ids' full blocks here
}

bool KvCacheManager::Allocate(SequenceId seq, std::span<const int32_t> token_ids,
                              int32_t num_tokens) {
  DCHECK(static_cast<int32_t>(token_ids.size()) >= num_tokens);
  auto it = tables_.find(seq);
  const int32_t num_held = it == tables_.end() ? 0 : static_cast<int32_t>(it->second.size());
  const int32_t num_needed = NumBlocksFor(num_tokens) - num_held;
  if (num_needed > pool_.num_free_blocks()) return false;
  if (it == tables_.end()) it = tables_.emplace(seq, std::vector<BlockId>()).first;
  for (int32_t i = 0; i < num_needed; ++i) it->second.push_back(*pool_.Allocate());
  return true;
}

int32_t KvCacheManager::Fork(SequenceId parent, SequenceId child, int32_t num_tokens) {
  auto it = tables_.find(parent);
  CHECK(it != tables_.end()) << "fork of unknown sequence " << parent;
  CHECK(!tables_.contains(child)) << "fork into existing sequence " << child;
  const int32_t num_shared = num_tokens / block_size_;
  CHECK_LE(num_shared, static_cast<int32_t>(it->second.size()));
  // Copy before inserting: the insertion may rehash, but `it->second` itself stays put.
  std::vector<BlockId> shared(it->second.begin(), it->second.begin() + num_shared);
  for (BlockId block : shared) pool_.AddRef(block);
  tables_.emplace(child, std::move(shared));
  return num_shared * block_size_;
}

void KvCacheManager::Free(SequenceId seq) {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return;
  // Last block first, so that the pool's LIFO free list hands the front blocks out first.
  for (auto block = it->second.rbegin(); block != it->second.rend(); ++block) pool_.Free(*block);
  tables_.erase(it);
}

std::span<const BlockId> KvCacheManager::BlockTable(SequenceId seq) const {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return {};
  return it->second;
}

Status KvCacheManager::CheckInvariants() const {
  const int32_t num_total = pool_.num_total_blocks();
  if (pool_.num_free_blocks() + pool_.num_used_blocks() != num_total) {
    return InternalError("free + used blocks != total blocks");
  }
  std::vector<int32_t> references(num_total, 0);       // [num_total_blocks]
  std::vector<SequenceId> last_holder(num_total, -1);  // [num_total_blocks]
  for (const auto& [seq, table] : tables_) {
    for (BlockId block : table) {
      if (block < 0 || block >= num_total) {
        return InternalError("sequence " + std::to_string(seq) + " names block " +
                             std::to_string(block) + " outside the pool");
      }
      if (references[block] > 0 && last_holder[block] == seq) {
        return InternalError("sequence " + std::to_string(seq) + " names block " +
                             std::to_string(block) + " twice");
      }
      ++references[block];
      last_holder[block] = seq;
    }
  }
  int32_t num_referenced = 0;
  for (BlockId block = 0; block < num_total; ++block) {
    if (pool_.ref_count(block) != references[block]) {
      return InternalError("block " + std::to_string(block) + " has reference count " +
                           std::to_string(pool_.ref_count(block)) + " but " +
                           std::to_string(references[block]) + " block-table entries");
    }
    num_referenced += references[block] > 0;
  }
  if (num_referenced != pool_.num_used_blocks()) {
    return InternalError("used blocks != blocks named by block tables");
  }
  return OkStatus();
}

}  // namespace surge
