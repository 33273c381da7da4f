// ConstraintCache: compiled output constraints (response_format, guided_*) by their
// ConstraintCacheKey, least recently used dropped first, shared by every worker thread.
// Requests with the same schema share one CompiledGrammar -- and so, in the engine, one
// mask cache.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "base/lru_map.h"
#include "base/status.h"
#include "engine/constraint/constraint.h"

namespace surge {

class ConstraintCache {
 public:
  explicit ConstraintCache(size_t max_entries = 256, ConstraintLimits limits = {});

  // The compiled grammar of `spec`, compiled now unless cached. Errors (InvalidArgument,
  // naming the unsupported keyword or the limit) are the compiler's and are not cached.
  // Thread-safe; compiling happens outside the lock.
  StatusOr<std::shared_ptr<const CompiledGrammar>> Get(const ConstraintSpec& spec);

  size_t size() const;
  int64_t hits() const;

 private:
  const ConstraintLimits limits_;
  mutable std::mutex mu_;
  LruMap<std::string, std::shared_ptr<const CompiledGrammar>> entries_;  // guarded by mu_
  int64_t hits_ = 0;                                                     // guarded by mu_
};

}  // namespace surge
