#include "router/prefix/cache_aware.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "router/engine_load.h"

namespace surge::router {
namespace {

bool Imbalanced(std::span<const double> loads, const CacheAwareOptions& options) {
  const auto [min, max] = std::minmax_element(loads.begin(), loads.end());
  return *max - *min > options.balance_abs_threshold && *max > options.balance_rel_threshold * *min;
}

// Among the candidates with the best (score, -load), one uniformly at random.
int32_t BestOf(std::span<const int32_t> scores, std::span<const double> loads, std::mt19937_64& rng) {
  int32_t best_score = std::numeric_limits<int32_t>::min();
  double best_load = std::numeric_limits<double>::infinity();
  std::vector<int32_t> tied;
  for (int32_t i = 0; i < static_cast<int32_t>(scores.size()); ++i) {
    const bool better = scores[i] > best_score || (scores[i] == best_score && loads[i] < best_load);
    if (better) {
      best_score = scores[i];
      best_load = loads[i];
      tied.clear();
    }
    if (scores[i] == best_score && loads[i] == best_load) tied.push_back(i);
  }
  std::uniform_int_distribution<size_t> pick(0, tied.size() - 1);
  return tied[pick(rng)];
}

}  // namespace

double EffectiveLoad(const CacheAwareBackend& backend) { return RequestLoad(backend.load, backend.num_in_flight); }

CacheAwareDecision CacheAwarePick(std::span<const uint64_t> prompt_block_hashes,
                                  std::span<const CacheAwareBackend> backends, const CacheAwareOptions& options,
                                  std::mt19937_64& rng) {
  CacheAwareDecision decision;
  if (backends.empty()) return decision;
  std::vector<double> loads;
  loads.reserve(backends.size());
  for (const CacheAwareBackend& backend : backends) loads.push_back(EffectiveLoad(backend));
  std::vector<int32_t> scores(backends.size(), 0);
  for (size_t i = 0; i < backends.size(); ++i) {
    if (backends[i].index != nullptr) scores[i] = backends[i].index->NumLeadingCached(prompt_block_hashes);
  }
  decision.balance_fallback = Imbalanced(loads, options);
  const std::vector<int32_t> by_load_only(backends.size(), 0);
  decision.backend = BestOf(decision.balance_fallback ? by_load_only : scores, loads, rng);
  decision.num_cached_blocks = scores[decision.backend];
  return decision;
}

}  // namespace surge::router
