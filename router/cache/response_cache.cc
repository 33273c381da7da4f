#include "router/cache/response_cache.h"

#include <chrono>

#include "router/cache/memory_cache.h"
#include "router/cache/redis_cache.h"

namespace surge::router {
namespace {

Status CheckSemanticConfig(const SemanticCacheConfig& semantic) {
  if ((semantic.all || !semantic.models.empty()) && !semantic.on()) {
    return InvalidArgumentError(
        "the semantic cache (--semantic, config keys 'cache.semantic.all' / 'cache.semantic.models') needs "
        "--embeddings-url (config key 'cache.semantic.embeddings_url')");
  }
  if (semantic.on() && semantic.embeddings_url.rfind("http://", 0) != 0) {
    return InvalidArgumentError("config key 'cache.semantic.embeddings_url' (--embeddings-url) must be an http:// URL, got '" +
                                semantic.embeddings_url + "'");
  }
  auto bad = [](double threshold) { return !(threshold > 0 && threshold <= 1); };
  if (bad(semantic.threshold)) {
    return InvalidArgumentError("config key 'cache.semantic.threshold' (--semantic-threshold) must be in (0, 1]");
  }
  for (const auto& [model, threshold] : semantic.models) {
    if (threshold && bad(*threshold)) {
      return InvalidArgumentError("config key 'cache.semantic.models." + model + ".threshold' must be in (0, 1]");
    }
  }
  return OkStatus();
}

Status CheckConfig(const ResponseCacheConfig& config) {
  const bool redis = config.is_redis();
  if (!redis && config.backend != "memory") {
    return InvalidArgumentError("config key 'cache.backend' (--cache) must be memory or redis://HOST[:PORT][/DB], got '" +
                                config.backend + "'");
  }
  if (redis && (config.max_bytes || config.max_entries)) {
    return InvalidArgumentError(
        "config keys 'cache.max_bytes' / 'cache.max_entries' (--cache-max-bytes, --cache-max-entries) bound the memory "
        "cache; with redis, set its maxmemory");
  }
  if (!redis && (config.redis_pool || config.redis_timeout_ms)) {
    return InvalidArgumentError(
        "config keys 'cache.redis_pool' / 'cache.redis_timeout_ms' (--cache-redis-pool, --cache-redis-timeout-ms) "
        "apply to --cache redis://... only");
  }
  return CheckSemanticConfig(config.semantic);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ResponseCache::ResponseCache(const ResponseCacheConfig& config, obs::Registry* registry)
    : config_(config),
      hits_(registry->AddCounterFamily("surge_router_cache_hits_total",
                                       "Requests answered from the response cache, by kind and scope (tenant)",
                                       {"kind", "scope"})),
      misses_(registry->AddCounterFamily("surge_router_cache_misses_total",
                                         "Cache lookups that found nothing (or met an unreachable backend)",
                                         {"kind", "scope"})),
      bypasses_(registry->AddCounterFamily(
          "surge_router_cache_bypasses_total",
          "Requests on a cached path not looked up, by reason (sampling, no_cache, not_json, too_deep)",
          {"kind", "scope", "reason"})),
      stores_(registry->AddCounterFamily("surge_router_cache_stores_total", "Answers stored in the response cache",
                                         {"kind", "scope"})),
      evictions_(registry->AddCounterFamily(
          "surge_router_cache_evictions_total",
          "Entries the memory cache dropped on its own: lru (room needed) or ttl (expired)",
          {"kind", "scope", "reason"})),
      errors_(registry->AddCounterFamily("surge_router_cache_errors_total",
                                         "Cache operations that failed because the backend was unreachable or "
                                         "overloaded (the request went on uncached), by operation (get, set, flush)",
                                         {"kind", "backend", "op"})),
      lookup_seconds_(registry->AddHistogramFamily("surge_router_cache_lookup_seconds",
                                                   "Time from a cache lookup's start to its answer",
                                                   {"kind", "backend"}, obs::ExponentialBuckets(1e-6, 2, 20))),
      bytes_(registry->AddGaugeFamily("surge_router_cache_bytes",
                                      "Bytes the memory cache holds (keys, values, per-entry overhead)",
                                      {"kind", "backend"})),
      entries_(registry->AddGaugeFamily("surge_router_cache_entries", "Entries the memory cache holds",
                                        {"kind", "backend"})),
      up_(registry->AddGaugeFamily("surge_router_cache_backend_up",
                                   "1 while the cache backend answers (0: a Redis outage; caching is off)",
                                   {"kind", "backend"})) {}

StatusOr<std::unique_ptr<ResponseCache>> ResponseCache::Create(const ResponseCacheConfig& config,
                                                               obs::Registry* registry,
                                                               std::function<int64_t()> now_ms) {
  if (Status status = CheckConfig(config); !status.ok()) return status;
  std::unique_ptr<ResponseCache> cache(new ResponseCache(config, registry));
  if (config.is_redis()) {
    StatusOr<RedisAddress> address = ParseRedisUrl(config.backend);
    if (!address.ok()) return address.status().WithContext("config key 'cache.backend' (--cache)");
    RedisCacheOptions options{.address = *address,
                              .num_connections = static_cast<int>(config.redis_pool.value_or(config.kDefaultRedisPool)),
                              .timeout_ms = config.redis_timeout_ms.value_or(config.kDefaultRedisTimeoutMs)};
    cache->backend_ = std::make_unique<RedisCache>(options);
  } else {
    obs::CounterFamily* evictions = &cache->evictions_;
    MemoryCacheOptions options{.max_bytes = config.max_bytes.value_or(config.kDefaultMaxBytes),
                               .max_entries = config.max_entries.value_or(config.kDefaultMaxEntries),
                               .now_ms = now_ms,
                               .on_evict = [evictions](const std::string& scope, const char* reason) {
                                 evictions->WithLabels({kExactCacheKind, scope, reason}).Increment();
                               }};
    cache->backend_ = std::make_unique<MemoryCache>(std::move(options));
  }
  if (config.semantic.on()) {
    CacheFamilies families{cache->hits_,   cache->misses_,         cache->stores_, cache->evictions_,
                           cache->errors_, cache->lookup_seconds_, cache->entries_};
    cache->semantic_ = std::make_unique<SemanticCache>(config.semantic, cache->backend_.get(), families, registry, now_ms);
    cache->semantic_->Restore();
  }
  cache->RefreshMetrics();
  return cache;
}

void ResponseCache::Lookup(const CacheKey& key, std::function<void(std::optional<std::string>)> done) {
  const auto start = std::chrono::steady_clock::now();
  backend_->Get(key, [this, start, scope = key.scope, done = std::move(done)](CacheLookup lookup) {
    lookup_seconds_.WithLabels({kExactCacheKind, backend_->name()}).Observe(SecondsSince(start));
    if (lookup.result == CacheLookup::kError) errors_.WithLabels({kExactCacheKind, backend_->name(), "get"}).Increment();
    if (lookup.result != CacheLookup::kHit) {
      misses_.WithLabels({kExactCacheKind, scope}).Increment();
      return done(std::nullopt);
    }
    hits_.WithLabels({kExactCacheKind, scope}).Increment();
    done(std::move(lookup.value));
  });
}

void ResponseCache::Store(const CacheKey& key, std::string entry, int64_t ttl_s) {
  if (static_cast<int64_t>(entry.size()) > config_.max_entry_bytes) return;
  backend_->Set(key, std::move(entry), ttl_s, [this, scope = key.scope](StoreResult result) {
    if (result == StoreResult::kStored) stores_.WithLabels({kExactCacheKind, scope}).Increment();
    if (result == StoreResult::kError) errors_.WithLabels({kExactCacheKind, backend_->name(), "set"}).Increment();
  });
}

void ResponseCache::CountBypass(std::string_view scope, std::string_view reason, const char* kind) {
  bypasses_.WithLabels({kind, scope, reason}).Increment();
}

void ResponseCache::Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done) {
  if (semantic_) semantic_->Flush(scope);
  backend_->Flush(std::move(scope), [this, done = std::move(done)](StatusOr<int64_t> result) {
    if (!result.ok()) errors_.WithLabels({kExactCacheKind, backend_->name(), "flush"}).Increment();
    done(std::move(result));
  });
}

void ResponseCache::RefreshMetrics() {
  const char* backend = backend_->name();
  if (std::optional<int64_t> bytes = backend_->bytes_in_use()) bytes_.WithLabels({kExactCacheKind, backend}).Set(*bytes);
  if (std::optional<int64_t> entries = backend_->num_entries()) {
    entries_.WithLabels({kExactCacheKind, backend}).Set(*entries);
  }
  up_.WithLabels({kExactCacheKind, backend}).Set(backend_->reachable() ? 1 : 0);
  if (semantic_) semantic_->RefreshMetrics();
}

}  // namespace surge::router
