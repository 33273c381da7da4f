// CacheBackend: where exact-cache entries live (memory_cache.h, redis_cache.h). Values are
// opaque strings filed under (scope, digest); a backend may answer on another thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge::router {

struct CacheKey {
  std::string scope;   // the tenant: Flush(scope) drops its entries, and no other scope sees them
  std::string digest;  // ExactCacheKey's hex
};

struct CacheLookup {
  enum Result { kHit, kMiss, kError } result = kMiss;  // kError: the backend is unreachable
  std::string value;                                   // kHit only
};

// kRefused: it does not fit (larger than the whole memory bound); kError: unreachable.
enum class StoreResult { kStored, kRefused, kError };

// One stored value found by CacheBackend::Scan, and how long it has left.
struct ScannedValue {
  std::string value;
  int64_t ttl_ms = 0;
};

// What a backend removed on its own, for the evictions counter.
using EvictionListener = std::function<void(const std::string& scope, const char* reason)>;

class CacheBackend {
 public:
  virtual ~CacheBackend() = default;
  // "memory" or "redis": the metrics' `backend` label.
  virtual const char* name() const = 0;
  // `done` runs once, on this thread (memory) or a backend thread (Redis); never blocks the caller.
  virtual void Get(const CacheKey& key, std::function<void(CacheLookup)> done) = 0;
  // Fire and forget: a store that fails (backend down, queue full) is dropped; `done` (may
  // be empty) says how it went, for the counters.
  virtual void Set(const CacheKey& key, std::string value, int64_t ttl_s, std::function<void(StoreResult)> done) = 0;
  // Drops `scope`'s entries (every scope when nullopt); `done` gets how many went.
  virtual void Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done) = 0;
  // Up to `max_values` values whose digest starts with `digest_prefix`, in every scope: how
  // the semantic index is rebuilt from a shared backend at start. Empty where entries do not
  // outlive the process (memory).
  virtual void Scan(const std::string& digest_prefix, size_t max_values,
                    std::function<void(StatusOr<std::vector<ScannedValue>>)> done) {
    (void)digest_prefix, (void)max_values;
    done(std::vector<ScannedValue>{});
  }
  // Bytes and entries held (memory); nullopt where the backend does not know (Redis).
  virtual std::optional<int64_t> bytes_in_use() const { return std::nullopt; }
  virtual std::optional<int64_t> num_entries() const { return std::nullopt; }
  // False while the backend is known to be unreachable (Redis in an outage).
  virtual bool reachable() const { return true; }
};

}  // namespace surge::router
