#include "router/prefix/block_index.h"

#include <algorithm>

namespace surge::router {

BlockIndex::BlockIndex(size_t max_blocks) : max_blocks_(std::max<size_t>(1, max_blocks)) {}

int32_t BlockIndex::NumLeadingCached(std::span<const uint64_t> hashes) const {
  std::lock_guard lock(mu_);
  int32_t num = 0;
  for (uint64_t hash : hashes) {
    if (!where_.contains(hash)) break;
    ++num;
  }
  return num;
}

void BlockIndex::RecordRequest(std::span<const uint64_t> hashes) {
  std::lock_guard lock(mu_);
  for (auto hash = hashes.rbegin(); hash != hashes.rend(); ++hash) Touch(*hash);
}

bool BlockIndex::Apply(const KvEventBatch& batch) {
  std::lock_guard lock(mu_);
  if (!batch.snapshot && batch.seq != last_seq_ + 1) {
    lru_.clear();
    where_.clear();
    last_seq_ = 0;
    ++num_gaps_;
    return false;
  }
  if (batch.snapshot) {
    lru_.clear();
    where_.clear();
  }
  for (const KvEventRun& run : batch.events) ApplyRun(run);
  last_seq_ = batch.seq;
  return true;
}

void BlockIndex::ApplyRun(const KvEventRun& run) {
  switch (run.type) {
    case KvEventRun::Type::kCleared:
      lru_.clear();
      where_.clear();
      return;
    case KvEventRun::Type::kStored:
      for (uint64_t hash : run.block_hashes) Touch(hash);
      return;
    case KvEventRun::Type::kEvicted:
      for (uint64_t hash : run.block_hashes) Erase(hash);
      return;
  }
}

void BlockIndex::Touch(uint64_t hash) {
  auto it = where_.find(hash);
  if (it != where_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (lru_.size() >= max_blocks_) {
    where_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(hash);
  where_.emplace(hash, lru_.begin());
}

void BlockIndex::Erase(uint64_t hash) {
  auto it = where_.find(hash);
  if (it == where_.end()) return;
  lru_.erase(it->second);
  where_.erase(it);
}

void BlockIndex::Clear() {
  std::lock_guard lock(mu_);
  lru_.clear();
  where_.clear();
  last_seq_ = 0;
}

size_t BlockIndex::size() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

uint64_t BlockIndex::last_seq() const {
  std::lock_guard lock(mu_);
  return last_seq_;
}

int64_t BlockIndex::num_gaps() const {
  std::lock_guard lock(mu_);
  return num_gaps_;
}

}  // namespace surge::router
