// SemanticIndex: the semantic cache's vectors -- one HNSW graph (hnswlib, inner product on
// L2-normalized vectors = cosine) per scope, bounded by one entry count across all scopes
// (LRU: an evicted entry is mark-deleted and its slot reused by that scope's next insert;
// a scope left empty is dropped whole), each entry with its own expiry.
//
// Thread-safety: hnswlib 0.6.2 (Debian) lets searches run together, but its searchKnn reads
// link lists and the entry point without the locks addPoint takes, so a search beside an
// insert is a data race. Each scope's graph therefore has a (writer-preferring) shared lock: searches share it,
// inserts, deletions and resizes hold it alone. Bookkeeping (labels, LRU, expiry) sits under
// one mutex taken after a graph lock, never before one.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "router/cache/cache_backend.h"

namespace surge::router {

// Where an entry lives: a tenant's semantic scope (SemanticScopeDigest).
struct SemanticScope {
  std::string tenant;
  std::string digest;
};

// What one vector stands for: the stored request's query text and the exact-cache key of
// its answer.
struct SemanticEntry {
  std::string text;
  CacheKey answer_key;
  int64_t expires_ms = 0;
};

struct SemanticMatch {
  float similarity = 0;  // cosine, [-1, 1]
  std::string text;
  CacheKey answer_key;
};

struct SemanticIndexOptions {
  int64_t max_entries = 100'000;     // across all scopes
  int M = 16;                        // hnswlib: links per node
  int ef_construction = 100;
  int ef_search = 64;                // >= k; higher: better recall, slower search
  int64_t initial_capacity = 256;    // per scope, doubled as it fills
  std::function<int64_t()> now_ms;   // steady clock; tests inject their own
  EvictionListener on_evict;         // (tenant, "lru" | "ttl"); may be empty
};

class SemanticIndex {
 public:
  explicit SemanticIndex(SemanticIndexOptions options);
  ~SemanticIndex();

  // Files `vector` (any length; normalized here) for `entry`. An entry with the same answer
  // key in the scope is replaced. False when the vector is empty, zero or of another
  // dimension than the scope's first.
  bool Insert(const SemanticScope& scope, std::span<const float> vector, SemanticEntry entry);
  // Up to `k` live (unexpired) entries nearest to `vector`, most similar first.
  std::vector<SemanticMatch> Search(const SemanticScope& scope, std::span<const float> vector, size_t k);
  // Marks a match used: it moves to the LRU's warm end.
  void Touch(const SemanticScope& scope, const CacheKey& answer_key);
  // Drops one tenant's scopes, or all; returns the entries dropped.
  int64_t Flush(const std::optional<std::string>& tenant);

  int64_t num_entries() const;
  int64_t num_scopes() const;

 private:
  struct Scope;
  struct LruItem {
    std::string scope_key;
    uint64_t label;
  };
  using Lru = std::list<LruItem>;  // front: most recently used
  struct Slot {
    SemanticEntry entry;
    Lru::iterator lru;
  };
  struct Victim {
    std::shared_ptr<Scope> scope;
    uint64_t label;
  };

  static std::string ScopeKey(const SemanticScope& scope) { return scope.tenant + '\n' + scope.digest; }
  std::shared_ptr<Scope> FindScope(const std::string& key) const;
  std::shared_ptr<Scope> FindOrAddScope(const SemanticScope& scope, size_t dim);
  // Under mu_: takes entries off the cold end until one more fits; their graphs are
  // marked after mu_ is released (TakeVictims / MarkVictims).
  // Erases the coldest entries until at most `keep` are left.
  std::vector<Victim> TakeVictimsLocked(int64_t now_ms, int64_t keep);
  void MarkVictims(std::vector<Victim> victims);
  void EraseSlotLocked(Scope& scope, uint64_t label, const char* reason);

  const SemanticIndexOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Scope>> scopes_;  // guarded by mu_
  Lru lru_;                                                          // guarded by mu_
};

}  // namespace surge::router
