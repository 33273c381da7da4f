// ResponseCacheConfig: how `surge route` caches whole responses (router/cache/README.md):
// the backend (memory or Redis), the default TTL and the memory cache's bounds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace surge::router {

// The semantic cache (config section cache.semantic; router/cache/README.md). Requests opt in
// through `all` (--semantic), their model's entry in `models`, or their API key's
// "semantic_cache": true; the rest only use the exact cache.
struct SemanticCacheConfig {
  bool all = false;  // every eligible request
  // Model name (as the client sends it) -> its threshold, or nullopt for `threshold`.
  std::map<std::string, std::optional<double>> models;
  std::string embeddings_url;    // OpenAI-compatible base URL ("http://host:port/v1"); "" = off
  std::string embeddings_model;  // the `model` of each /embeddings request
  // A sentence-encoder directory (--embeddings-spawn): `surge route` serves it on a local
  // worker of its own and fills embeddings_url with that worker's URL before the cache starts.
  std::string embeddings_spawn;
  int64_t embeddings_timeout_ms = 500;  // past it the request goes on uncached
  // Cosine similarity a hit needs. 0.94: the lowest threshold with <= 1% false hits (guard on)
  // on the held-out set with all-MiniLM-L6-v2 (docs/BENCH.md, "Semantic cache with MiniLM").
  double threshold = 0.94;
  bool guard = true;             // the lexical guard must agree too (off: measurement only)
  int64_t max_entries = 100'000;  // vectors across all scopes (LRU beyond)

  bool on() const { return !embeddings_url.empty() || !embeddings_spawn.empty(); }
  double ThresholdFor(const std::string& model) const {
    auto it = models.find(model);
    return it != models.end() && it->second ? *it->second : threshold;
  }
};

struct ResponseCacheConfig {
  // "" = off, "memory", or "redis://HOST[:PORT][/DB]" (--cache; config key cache.backend).
  std::string backend;
  int64_t ttl_s = 300;                 // an entry's lifetime unless the request's cache.ttl_s says less or more
  int64_t max_entry_bytes = 1 << 20;   // a larger response is not stored
  // Memory only (refused with Redis, whose own maxmemory policy bounds it): unset = the default.
  std::optional<int64_t> max_bytes;    // default kDefaultMaxBytes; LRU eviction beyond it
  std::optional<int64_t> max_entries;  // default kDefaultMaxEntries
  // Redis only (refused with memory): connections (one worker thread each) and the
  // connect / command timeout.
  std::optional<int64_t> redis_pool;        // default 4
  std::optional<int64_t> redis_timeout_ms;  // default 100
  SemanticCacheConfig semantic;

  static constexpr int64_t kDefaultMaxBytes = 256 << 20;
  static constexpr int64_t kDefaultMaxEntries = 100'000;
  static constexpr int64_t kDefaultRedisPool = 4;
  static constexpr int64_t kDefaultRedisTimeoutMs = 100;

  bool on() const { return !backend.empty(); }
  bool is_redis() const { return backend.rfind("redis://", 0) == 0; }
};

}  // namespace surge::router
