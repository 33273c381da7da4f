// CacheAwarePick: the cache-aware routing decision, a pure function of the prompt's block
// hashes and each candidate backend's index and load -- so that it is tested without
// sockets and plugged into any policy interface.
//
// Score = the number of leading prompt blocks a backend holds; the best score wins, ties
// go to the lower load, then to a uniform random choice. Balance guard (SGLang's router
// has the same two thresholds): when max - min load exceeds `balance_abs_threshold` AND
// max > `balance_rel_threshold` * min, the cache is ignored and the least loaded wins --
// a hot prefix must not pile every request onto one engine.
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include "router/prefix/block_index.h"

namespace surge::router {

struct CacheAwareBackend {
  const BlockIndex* index = nullptr;  // null: nothing known about its cache (scores 0)
  // The backend's own load (e.g. running + waiting from its /metrics); may be stale.
  double load = 0;
  // Requests this router sent it that have not finished: exact at decision time.
  int32_t num_in_flight = 0;
};

struct CacheAwareOptions {
  double balance_abs_threshold = 16;  // in requests
  double balance_rel_threshold = 1.5;
};

struct CacheAwareDecision {
  int32_t backend = -1;            // index into the candidates; -1 when there were none
  int32_t num_cached_blocks = 0;   // the chosen backend's score (the hit estimate)
  bool balance_fallback = false;   // the guard chose by load alone
};

// The load a decision counts: RequestLoad (router/engine_load.h) of the two.
double EffectiveLoad(const CacheAwareBackend& backend);

CacheAwareDecision CacheAwarePick(std::span<const uint64_t> prompt_block_hashes,
                                  std::span<const CacheAwareBackend> backends, const CacheAwareOptions& options,
                                  std::mt19937_64& rng);

}  // namespace surge::router
