// MemoryCache: the embedded exact-cache backend (--cache memory). An LRU list bounded by
// bytes and entries, each entry with its own expiry; expired entries are dropped when met
// (lookup) and from the cold end when room is needed. One mutex; nothing blocks inside it.
#pragma once

#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "router/cache/cache_backend.h"

namespace surge::router {

struct MemoryCacheOptions {
  int64_t max_bytes = 256 << 20;  // keys + values + a fixed per-entry overhead
  int64_t max_entries = 100'000;
  std::function<int64_t()> now_ms;  // a steady clock; tests inject their own
  EvictionListener on_evict;        // "lru" (room needed) or "ttl" (expired); may be empty
};

class MemoryCache : public CacheBackend {
 public:
  explicit MemoryCache(MemoryCacheOptions options);

  const char* name() const override { return "memory"; }
  void Get(const CacheKey& key, std::function<void(CacheLookup)> done) override;
  void Set(const CacheKey& key, std::string value, int64_t ttl_s, std::function<void(StoreResult)> done) override;
  void Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done) override;
  std::optional<int64_t> bytes_in_use() const override;
  std::optional<int64_t> num_entries() const override;

  static constexpr int64_t kEntryOverheadBytes = 64;  // list node, map slot, expiry

 private:
  struct Entry {
    CacheKey key;
    std::string value;
    int64_t expires_ms;
    int64_t bytes() const { return static_cast<int64_t>(key.scope.size() + key.digest.size() + value.size()) + kEntryOverheadBytes; }
  };
  using Lru = std::list<Entry>;  // front: most recently used

  static std::string MapKey(const CacheKey& key) { return key.scope + '\n' + key.digest; }
  // Both under mu_.
  void EraseLocked(Lru::iterator it, const char* reason);
  void MakeRoomLocked(int64_t bytes, int64_t now_ms);

  const MemoryCacheOptions options_;
  mutable std::mutex mu_;
  Lru lru_;                                          // guarded by mu_
  std::unordered_map<std::string, Lru::iterator> index_;  // guarded by mu_
  int64_t bytes_ = 0;                                // guarded by mu_
};

}  // namespace surge::router
