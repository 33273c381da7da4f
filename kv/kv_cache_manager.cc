#include "kv/kv_cache_manager.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "base/check.h"

namespace surge {

KvCacheManager::KvCacheManager(const KvLayout& layout, int32_t num_blocks,
                               PrefixCacheOptions prefix_cache)
    : block_size_(layout.block_size),
      options_(std::move(prefix_cache)),
      pool_(num_blocks),
      index_(num_blocks, layout.block_size),
      idle_since_(num_blocks, 0.0) {
  CHECK_GT(block_size_, 0);
  CHECK_GT(num_blocks, 0);
  CHECK_GE(options_.ttl_s, 0);
}

int32_t KvCacheManager::NumBlocksFor(int64_t num_tokens) const {
  return static_cast<int32_t>((num_tokens + block_size_ - 1) / block_size_);
}

double KvCacheManager::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::span<const int32_t> KvCacheManager::BlockTokens(std::span<const int32_t> token_ids,
                                                     int32_t index) const {
  return token_ids.subspan(static_cast<size_t>(index) * block_size_, block_size_);
}

int32_t KvCacheManager::FindCached(std::span<const int32_t> token_ids, int32_t max_blocks,
                                   Table* table) const {
  uint64_t parent_hash = options_.hash_seed;
  PrefixId parent = kRootPrefix;
  int32_t num_found = 0;
  for (; num_found < max_blocks; ++num_found) {
    const std::span<const int32_t> tokens = BlockTokens(token_ids, num_found);
    const uint64_t hash = PrefixIndex::Hash(parent_hash, tokens);
    const std::optional<BlockId> block = index_.Find(hash, parent, tokens);
    if (!block) break;
    parent_hash = hash;
    parent = index_.id(*block);
    if (table == nullptr) continue;
    table->blocks.push_back(*block);
    table->hashes.push_back(hash);
    table->prefixes.push_back(parent);
  }
  return num_found;
}

int32_t KvCacheManager::MaxCachedBlocks(std::span<const int32_t> token_ids) const {
  if (!options_.enabled || token_ids.empty()) return 0;
  return static_cast<int32_t>((token_ids.size() - 1) / block_size_);
}

int32_t KvCacheManager::NumCachedTokens(std::span<const int32_t> token_ids) const {
  return FindCached(token_ids, MaxCachedBlocks(token_ids), nullptr) * block_size_;
}

std::optional<int32_t> KvCacheManager::AllocatePrompt(SequenceId seq,
                                                      std::span<const int32_t> token_ids,
                                                      int32_t max_new_tokens,
                                                      bool use_prefix_cache) {
  DCHECK(!tables_.contains(seq));
  DCHECK(max_new_tokens >= 1);
  Table fresh;
  fresh.cacheable = use_prefix_cache;
  const int32_t max_cached_blocks = use_prefix_cache ? MaxCachedBlocks(token_ids) : 0;
  const int32_t num_cached = FindCached(token_ids, max_cached_blocks, &fresh) * block_size_;
  const int32_t num_new =
      std::min(static_cast<int32_t>(token_ids.size()) - num_cached, max_new_tokens);
  if (!AttachNew(seq, std::move(fresh), token_ids, num_cached + num_new)) return std::nullopt;
  return num_cached;
}

bool KvCacheManager::Allocate(SequenceId seq, std::span<const int32_t> token_ids,
                              int32_t num_tokens) {
  auto it = tables_.find(seq);
  if (it != tables_.end()) return Grow(it->second, token_ids, num_tokens);
  Table fresh;
  FindCached(token_ids, std::min(num_tokens / block_size_, MaxCachedBlocks(token_ids)), &fresh);
  return AttachNew(seq, std::move(fresh), token_ids, num_tokens);
}

bool KvCacheManager::AttachNew(SequenceId seq, Table fresh, std::span<const int32_t> token_ids,
                               int32_t num_tokens) {
  const int32_t num_needed = NumBlocksFor(num_tokens) - static_cast<int32_t>(fresh.blocks.size());
  // Cached blocks that no sequence holds count as free; attaching them takes them back.
  const auto num_revived = std::count_if(fresh.blocks.begin(), fresh.blocks.end(),
                                         [&](BlockId block) { return pool_.ref_count(block) == 0; });
  if (num_needed > pool_.num_free_blocks() - num_revived) return false;
  for (BlockId block : fresh.blocks) pool_.AddRef(block);
  if (options_.enabled && fresh.cacheable) {
    stats_.num_queried_tokens += static_cast<int64_t>(token_ids.size());
    stats_.num_hit_tokens += static_cast<int64_t>(fresh.blocks.size()) * block_size_;
  }
  const bool grown = Grow(tables_.emplace(seq, std::move(fresh)).first->second, token_ids, num_tokens);
  DCHECK(grown);
  return grown;
}

bool KvCacheManager::Grow(Table& table, std::span<const int32_t> token_ids, int32_t num_tokens) {
  const int32_t num_needed = NumBlocksFor(num_tokens) - static_cast<int32_t>(table.blocks.size());
  if (num_needed > pool_.num_free_blocks()) return false;
  for (int32_t i = 0; i < num_needed; ++i) table.blocks.push_back(AllocateBlock());
  if (options_.enabled && table.cacheable) FileFullBlocks(table, token_ids, num_tokens);
  return true;
}

// A plain free block, or else the least recently used cached one, whose entry goes.
BlockId KvCacheManager::AllocateBlock() {
  if (std::optional<BlockId> block = pool_.Allocate()) return *block;
  const std::optional<BlockId> victim = pool_.OldestCachedFree();
  CHECK(victim.has_value()) << "Allocate checked the free blocks";
  Record(PrefixCacheEvent::Kind::kEvicted, index_.hash(*victim));
  index_.Erase(*victim);
  pool_.SetCached(*victim, false);
  ++stats_.num_evicted_blocks;
  return *pool_.Allocate();
}

// Blocks that positions [0, num_tokens) fill completely get their chained hash; new ones
// are filed as pending, findable once the forward pass has written them.
void KvCacheManager::FileFullBlocks(Table& table, std::span<const int32_t> token_ids,
                                    int32_t num_tokens) {
  const int32_t num_full = std::min<int64_t>(num_tokens, token_ids.size()) / block_size_;
  for (int32_t i = static_cast<int32_t>(table.hashes.size()); i < num_full; ++i) {
    const std::span<const int32_t> tokens = BlockTokens(token_ids, i);
    const uint64_t hash = PrefixIndex::Hash(i == 0 ? options_.hash_seed : table.hashes[i - 1], tokens);
    const BlockId block = table.blocks[i];
    CHECK(!index_.registered(block) && !index_.pending(block)) << "block " << block << " filed twice";
    table.hashes.push_back(hash);
    table.prefixes.push_back(index_.AddPending(block, hash, i == 0 ? kRootPrefix : table.prefixes[i - 1], tokens));
  }
}

void KvCacheManager::CommitComputed() {
  registered_.clear();
  index_.Commit(&registered_);
  for (BlockId block : registered_) {
    pool_.SetCached(block, true);
    Record(PrefixCacheEvent::Kind::kStored, index_.hash(block));
  }
}

void KvCacheManager::ReleaseIdleBlocks() {
  if (options_.ttl_s <= 0) return;
  const double now = Now();
  // The LRU is ordered by the time each block was freed: stop at the first young one.
  while (std::optional<BlockId> block = pool_.OldestCachedFree()) {
    if (now - idle_since_[*block] < options_.ttl_s) return;
    Record(PrefixCacheEvent::Kind::kEvicted, index_.hash(*block));
    index_.Erase(*block);
    pool_.SetCached(*block, false);
    ++stats_.num_expired_blocks;
  }
}

void KvCacheManager::Record(PrefixCacheEvent::Kind kind, uint64_t hash) {
  if (options_.record_events) events_.push_back({kind, hash});
}

void KvCacheManager::TakeEvents(std::vector<PrefixCacheEvent>* events) {
  events->insert(events->end(), events_.begin(), events_.end());
  events_.clear();
}

int32_t KvCacheManager::Fork(SequenceId parent, SequenceId child, int32_t num_tokens) {
  auto it = tables_.find(parent);
  CHECK(it != tables_.end()) << "fork of unknown sequence " << parent;
  CHECK(!tables_.contains(child)) << "fork into existing sequence " << child;
  const Table& from = it->second;
  const int32_t num_shared = num_tokens / block_size_;
  CHECK_LE(num_shared, static_cast<int32_t>(from.blocks.size()));
  // Copy before inserting: the insertion may rehash, but `from` itself stays put.
  Table shared;
  shared.blocks.assign(from.blocks.begin(), from.blocks.begin() + num_shared);
  const int32_t num_filed = std::min<int32_t>(num_shared, static_cast<int32_t>(from.hashes.size()));
  shared.hashes.assign(from.hashes.begin(), from.hashes.begin() + num_filed);
  shared.prefixes.assign(from.prefixes.begin(), from.prefixes.begin() + num_filed);
  for (BlockId block : shared.blocks) pool_.AddRef(block);
  tables_.emplace(child, std::move(shared));
  return num_shared * block_size_;
}

void KvCacheManager::Truncate(SequenceId seq, int32_t num_tokens) {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return;
  Table& table = it->second;
  const size_t num_keep = static_cast<size_t>(NumBlocksFor(num_tokens));
  CHECK_GE(num_keep, table.hashes.size()) << "truncating sequence " << seq << " into its filed blocks";
  while (table.blocks.size() > num_keep) {
    const BlockId block = table.blocks.back();
    CHECK_EQ(pool_.ref_count(block), 1) << "block " << block << " of sequence " << seq << " is shared";
    pool_.Free(block);
    table.blocks.pop_back();
  }
}

void KvCacheManager::Free(SequenceId seq) {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return;
  const double now = options_.ttl_s > 0 ? Now() : 0.0;
  // Last block first: the pool's LIFO free stack then hands the front blocks out first,
  // and the LRU evicts a prefix's tail before its head (which more requests share).
  const std::vector<BlockId>& blocks = it->second.blocks;
  for (auto block = blocks.rbegin(); block != blocks.rend(); ++block) {
    if (index_.pending(*block) && pool_.ref_count(*block) == 1) index_.DiscardPending(*block);
    pool_.Free(*block);
    if (pool_.ref_count(*block) == 0) idle_since_[*block] = now;
  }
  tables_.erase(it);
}

std::span<const BlockId> KvCacheManager::BlockTable(SequenceId seq) const {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return {};
  return it->second.blocks;
}

Status KvCacheManager::CheckTable(SequenceId seq, const Table& table) const {
  const std::string name = "sequence " + std::to_string(seq);
  if (table.hashes.size() != table.prefixes.size() || table.hashes.size() > table.blocks.size()) {
    return InternalError(name + " has inconsistent hash and prefix chains");
  }
  for (size_t i = 0; i < table.hashes.size(); ++i) {
    const BlockId block = table.blocks[i];
    if (!index_.registered(block) && !index_.pending(block)) continue;  // a duplicate, uncached
    const PrefixId parent = i == 0 ? kRootPrefix : table.prefixes[i - 1];
    if (index_.id(block) != table.prefixes[i] || index_.hash(block) != table.hashes[i] ||
        index_.parent(block) != parent) {
      return InternalError(name + ": cached block " + std::to_string(block) + " at index " +
                           std::to_string(i) + " is filed under another prefix");
    }
  }
  return OkStatus();
}

Status KvCacheManager::CheckInvariants() const {
  const int32_t num_total = pool_.num_total_blocks();
  if (pool_.num_free_blocks() + pool_.num_used_blocks() != num_total) {
    return InternalError("free + used blocks != total blocks");
  }
  if (std::string problem = pool_.CheckInvariants(); !problem.empty()) return InternalError("pool: " + problem);
  if (std::string problem = index_.CheckInvariants(); !problem.empty()) return InternalError("index: " + problem);
  std::vector<int32_t> references(num_total, 0);       // [num_total_blocks]
  std::vector<SequenceId> last_holder(num_total, -1);  // [num_total_blocks]
  for (const auto& [seq, table] : tables_) {
    for (BlockId block : table.blocks) {
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
    RETURN_IF_ERROR(CheckTable(seq, table));
  }
  int32_t num_referenced = 0;
  for (BlockId block = 0; block < num_total; ++block) {
    const std::string name = "block " + std::to_string(block);
    if (pool_.ref_count(block) != references[block]) {
      return InternalError(name + " has reference count " + std::to_string(pool_.ref_count(block)) +
                           " but " + std::to_string(references[block]) + " block-table entries");
    }
    if (pool_.cached(block) != index_.registered(block)) {
      return InternalError(name + ": the pool and the prefix index disagree on whether it is cached");
    }
    if (index_.pending(block) && references[block] == 0) return InternalError(name + " is pending but free");
    if (!options_.enabled && (index_.registered(block) || index_.pending(block))) {
      return InternalError(name + " is filed with prefix caching off");
    }
    num_referenced += references[block] > 0;
  }
  if (num_referenced != pool_.num_used_blocks()) {
    return InternalError("used blocks != blocks named by block tables");
  }
  return OkStatus();
}

Status KvCacheManager::CheckTokens(SequenceId seq, std::span<const int32_t> token_ids) const {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return OkStatus();
  const Table& table = it->second;
  const std::string name = "sequence " + std::to_string(seq);
  if (token_ids.size() < table.hashes.size() * block_size_) {
    return InternalError(name + " filed more full blocks than it has tokens");
  }
  uint64_t parent_hash = options_.hash_seed;
  for (size_t i = 0; i < table.hashes.size(); ++i) {
    const std::span<const int32_t> tokens = BlockTokens(token_ids, static_cast<int32_t>(i));
    parent_hash = PrefixIndex::Hash(parent_hash, tokens);
    if (parent_hash != table.hashes[i]) {
      return InternalError(name + ": the hash of block " + std::to_string(i) + " does not match its tokens");
    }
    const BlockId block = table.blocks[i];
    if (!index_.registered(block) && !index_.pending(block)) continue;
    const std::span<const int32_t> stored = index_.tokens(block);
    if (!std::equal(stored.begin(), stored.end(), tokens.begin(), tokens.end())) {
      return InternalError(name + " uses cached block " + std::to_string(block) + " at index " +
                           std::to_string(i) + " whose tokens differ from its own");
    }
  }
  return OkStatus();
}

}  // namespace surge
