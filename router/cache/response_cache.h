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
#include "router/cache/semantic_cache.h"

namespace surge::router {

// The `kind` label of the exact lookups (the semantic ones: kSemanticCacheKind).
inline constexpr char kExactCacheKind[] = "exact";

class ResponseCache {
 public:
  // INVALID_ARGUMENT for a bad backend spec or bound (naming the config key). A Redis that
  // does not answer yet is not an error: caching starts when it does.
  static StatusOr<std::unique_ptr<ResponseCache>> Create(const ResponseCacheConfig& config, obs::Registry* registry,
                                                         std::function<int64_t()> now_ms);

  const ResponseCacheConfig& config() const { return config_; }
  // The semantic kind, over the same backend; null unless cache.semantic.embeddings_url is set.
  SemanticCache* semantic() const { return semantic_.get(); }

  // `done(entry)` with the stored entry on a hit, nullopt on a miss or a backend error
  // (counted as an error: never the request's failure). May run on another thread.
  void Lookup(const CacheKey& key, std::function<void(std::optional<std::string>)> done);
  // Stores `entry` for `ttl_s` unless it is over max_entry_bytes (fire and forget).
  void Store(const CacheKey& key, std::string entry, int64_t ttl_s);
  // A cacheable-path request that was not looked up, and why (sampling, no_cache, ...).
  void CountBypass(std::string_view scope, std::string_view reason, const char* kind = kExactCacheKind);
  // Drops one scope's entries, or all (the semantic index's too); `done` gets the number of
  // backend entries dropped.
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
  std::unique_ptr<SemanticCache> semantic_;  // after the families it counts in
};

}  // namespace surge::router
