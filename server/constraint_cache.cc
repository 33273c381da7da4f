#include "server/constraint_cache.h"

#include <algorithm>
#include <utility>

namespace surge {

ConstraintCache::ConstraintCache(size_t max_entries, ConstraintLimits limits)
    : max_entries_(std::max<size_t>(1, max_entries)), limits_(limits) {}

StatusOr<std::shared_ptr<const CompiledGrammar>> ConstraintCache::Get(const ConstraintSpec& spec) {
  std::string key = ConstraintCacheKey(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      ++hits_;
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
  }
  // Two threads may compile the same spec at once; the first to finish is kept.
  ASSIGN_OR_RETURN(std::shared_ptr<const CompiledGrammar> compiled, CompileConstraint(spec, limits_));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;
  if (entries_.size() >= max_entries_) {
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
  entries_.emplace_front(key, compiled);
  index_.emplace(std::move(key), entries_.begin());
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
