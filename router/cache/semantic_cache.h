// SemanticCache: the second lookup kind (metrics label kind="semantic"). On an exact miss
// the query is embedded (EmbeddingsClient), its scope's index searched (SemanticIndex),
// and the nearest stored request whose similarity reaches the threshold and that the
// lexical guard agrees with (semantic_guard.h) answers -- its answer read from the exact
// cache's backend under that request's exact key. A fresh answer is filed under its exact
// key as always, and its vector here. With Redis, each vector is also written beside its
// answer, so that a new router rebuilds its index from them (Restore).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "obs/metrics.h"
#include "router/cache/cache_backend.h"
#include "router/cache/cache_config.h"
#include "router/cache/embeddings_client.h"
#include "router/cache/semantic_index.h"
#include "router/cache/semantic_request.h"

namespace surge::router {

inline constexpr char kSemanticCacheKind[] = "semantic";

// The response cache's families, shared with the exact kind (response_cache.h).
struct CacheFamilies {
  obs::CounterFamily& hits;
  obs::CounterFamily& misses;
  obs::CounterFamily& stores;
  obs::CounterFamily& evictions;
  obs::CounterFamily& errors;
  obs::HistogramFamily& lookup_seconds;
  obs::GaugeFamily& entries;
};

struct SemanticLookupResult {
  std::optional<std::string> entry;  // the stored answer on a hit
  std::vector<float> vector;         // the query's embedding (empty: the embeddings call failed)
  float similarity = 0;              // the hit's
};

class SemanticCache {
 public:
  // `backend` (the exact cache's) outlives this.
  SemanticCache(const SemanticCacheConfig& config, CacheBackend* backend, CacheFamilies families,
                obs::Registry* registry, std::function<int64_t()> now_ms);

  const SemanticCacheConfig& config() const { return config_; }
  // Whether a request for `model` (by a key that does or does not opt in) uses this cache.
  bool OptedIn(const std::string& model, bool key_opts_in) const;

  // `done` once, possibly on another thread; a miss for every failure (counted).
  void Lookup(const SemanticQuery& query, std::function<void(SemanticLookupResult)> done);
  // Files `answer_key`'s vector (`vector` empty: embedded now) for `ttl_s`.
  void Remember(const SemanticQuery& query, std::vector<float> vector, const CacheKey& answer_key, int64_t ttl_s);
  // Reads the vectors a shared backend holds into the index (Redis; nothing with memory).
  void Restore();
  int64_t Flush(const std::optional<std::string>& tenant);
  void RefreshMetrics();

 private:
  // When a lookup began (its embeddings call) and when its search did (the vector came back).
  struct LookupStart {
    std::chrono::steady_clock::time_point lookup;
    std::chrono::steady_clock::time_point search;
  };
  void Search(const SemanticQuery& query, std::vector<float> vector, LookupStart start,
              std::function<void(SemanticLookupResult)> done);
  // lookup_seconds{kind="semantic"} (embedding included) and the search alone, by outcome.
  void ObserveLookup(LookupStart start, const char* outcome);
  void Insert(const SemanticQuery& query, const std::vector<float>& vector, const CacheKey& answer_key, int64_t ttl_s);
  void RestoreRecord(const ScannedValue& record);

  const SemanticCacheConfig config_;
  CacheBackend* const backend_;
  const CacheFamilies families_;
  const std::function<int64_t()> now_ms_;
  obs::CounterFamily& guard_rejections_;
  obs::HistogramFamily& embed_seconds_;
  obs::HistogramFamily& search_seconds_;  // after the embedding: search, guard, the answer's read
  SemanticIndex index_;
  std::unique_ptr<EmbeddingsClient> embeddings_;  // last: its in-flight calls end before the rest goes
};

}  // namespace surge::router
