#include "router/cache/memory_cache.h"

namespace surge::router {

MemoryCache::MemoryCache(MemoryCacheOptions options) : options_(std::move(options)) {}

void MemoryCache::EraseLocked(Lru::iterator it, const char* reason) {
  if (reason != nullptr && options_.on_evict) options_.on_evict(it->key.scope, reason);
  bytes_ -= it->bytes();
  index_.erase(MapKey(it->key));
  lru_.erase(it);
}

// Expired entries at the cold end go first (they cost nothing to lose), then the least
// recently used, until `bytes` more fit under both bounds.
void MemoryCache::MakeRoomLocked(int64_t bytes, int64_t now_ms) {
  while (!lru_.empty() && (bytes_ + bytes > options_.max_bytes ||
                           static_cast<int64_t>(lru_.size()) + 1 > options_.max_entries)) {
    auto coldest = std::prev(lru_.end());
    EraseLocked(coldest, coldest->expires_ms <= now_ms ? "ttl" : "lru");
  }
}

void MemoryCache::Get(const CacheKey& key, std::function<void(CacheLookup)> done) {
  CacheLookup lookup;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(MapKey(key));
    if (it != index_.end() && it->second->expires_ms <= options_.now_ms()) {
      EraseLocked(it->second, "ttl");
    } else if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      lookup = {CacheLookup::kHit, it->second->value};
    }
  }
  done(std::move(lookup));
}

void MemoryCache::Set(const CacheKey& key, std::string value, int64_t ttl_s, std::function<void(StoreResult)> done) {
  bool stored = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now_ms = options_.now_ms();
    if (auto it = index_.find(MapKey(key)); it != index_.end()) EraseLocked(it->second, nullptr);  // replaced
    Entry entry{key, std::move(value), now_ms + ttl_s * 1000};
    if (entry.bytes() <= options_.max_bytes && options_.max_entries > 0) {
      MakeRoomLocked(entry.bytes(), now_ms);
      bytes_ += entry.bytes();
      lru_.push_front(std::move(entry));
      index_[MapKey(key)] = lru_.begin();
      stored = true;
    }
  }
  if (done) done(stored ? StoreResult::kStored : StoreResult::kRefused);
}

void MemoryCache::Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done) {
  int64_t num_dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = lru_.begin(); it != lru_.end();) {
      auto next = std::next(it);
      if (!scope || it->key.scope == *scope) {
        EraseLocked(it, nullptr);
        ++num_dropped;
      }
      it = next;
    }
  }
  done(num_dropped);
}

std::optional<int64_t> MemoryCache::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

std::optional<int64_t> MemoryCache::num_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(lru_.size());
}

}  // namespace surge::router
