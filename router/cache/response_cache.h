// ResponseCache: the exact response cache as the gateway uses it -- one backend (memory or
// Redis, from ResponseCacheConfig) behind lookups and stores that count themselves in the
// `surge_router_cache_*` families (docs/METRICS.md). Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "obs/metrics.h"
#include "router/cache/cache_backend.h"
#include "router/cache/cache_config.h"

namespace surge::router {

// The `kind` label: exact now; a semantic cache would add its own.
inline constexpr char kExactCacheKind[] = "exact";

class ResponseCache {
 public:
  // INVALID_ARGUMENT for a bad backend spec or bound (naming the config key). A Redis that
  // does not answer yet is not an error: caching starts when it does.
  static StatusOr<std::unique_ptr<ResponseCache>> Create(const ResponseCacheConfig& config, obs::Registry* registry,
                                                         std::function<int64_t()> now_ms);

  const ResponseCacheConfig& config() const { return config_; }

  // `done(entry)` with the stored entry on a hit, nullopt on a miss or a backend error
  // (counted as an error: never the request's failure). May run on another thread.
  void Lookup(const CacheKey& key, std::function<void(std::optional<std::string>)> done);
  // Stores `entry` for `ttl_s` unless it is over max_entry_bytes (fire and forget).
  void Store(const CacheKey& key, std::string entry, int64_t ttl_s);
  // A cacheable-path request that was not looked up, and why (sampling, no_cache, ...).
  void CountBypass(std::string_view scope, std::string_view reason);
  // Drops one scope's entries, or all; `done` gets the number dropped.
  void Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done);
  // Before /metrics is rendered: bytes, entries and reachability gauges.
  void RefreshMetrics();

 private:
  ResponseCache(const ResponseCacheConfig& config, obs::Registry* registry);

  const ResponseCacheConfig config_;
  std::unique_ptr<CacheBackend> backend_;
  obs::CounterFamily& hits_;
  obs::CounterFamily& misses_;
  obs::CounterFamily& bypasses_;
  obs::CounterFamily& stores_;
  obs::CounterFamily& evictions_;
  obs::CounterFamily& errors_;
  obs::HistogramFamily& lookup_seconds_;
  obs::GaugeFamily& bytes_;
  obs::GaugeFamily& entries_;
  obs::GaugeFamily& up_;
};

}  // namespace surge::router
