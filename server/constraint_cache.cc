#include "server/constraint_cache.h"

#include <utility>

namespace surge {

ConstraintCache::ConstraintCache(size_t max_entries, ConstraintLimits limits) : limits_(limits), entries_(max_entries) {}

StatusOr<std::shared_ptr<const CompiledGrammar>> ConstraintCache::Get(const ConstraintSpec& spec) {
  std::string key = ConstraintCacheKey(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto* cached = entries_.Find(key)) {
      ++hits_;
      return *cached;
    }
  }
  // Two threads may compile the same spec at once; the first to finish is kept.
  ASSIGN_OR_RETURN(std::shared_ptr<const CompiledGrammar> compiled, CompileConstraint(spec, limits_));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto* cached = entries_.Find(key)) return *cached;
  entries_.Put(std::move(key), compiled);
  return compiled;
}

size_t ConstraintCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

int64_t ConstraintCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace surge
