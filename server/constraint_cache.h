// ConstraintCache: compiled output constraints (response_format, guided_*, tool_choice) by
// their ConstraintCacheKey, least recently used dropped first, bounded in entries and in
// bytes, shared by every worker thread. Requests with the same schema share one
// CompiledGrammar -- and so, in the engine, one mask cache. Failures are kept too, so a
// repeated bad grammar is refused without compiling it again.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/lru_map.h"
#include "base/status.h"
#include "engine/constraint/constraint.h"

namespace surge {

struct ConstraintCacheOptions {
  size_t max_entries = 256;          // grammars and failures together
  int64_t max_bytes = int64_t{256} << 20;  // their tables (--constraint-cache-size)
};

class ConstraintCache {
 public:
  using Compiled = StatusOr<std::shared_ptr<const CompiledGrammar>>;

  explicit ConstraintCache(ConstraintCacheOptions options = {}, ConstraintLimits limits = {});

  // The cached grammar or failure of `spec`; nullopt when it must be compiled.
  std::optional<Compiled> Lookup(const ConstraintSpec& spec);
  // Compiles `spec` under `budget` (null: the limits' step budget alone) and caches the
  // outcome. Failures are cached unless they are the budget's deadline or cancel flag's
  // (they say nothing about the grammar). A grammar larger than the byte bound is returned
  // but not kept. Thread-safe; compiling happens outside the lock. Identical specs arriving
  // together compile once: a caller that finds the same key being compiled waits for that
  // outcome (`*joined` = true) while its own budget's deadline and cancel flag allow, and
  // compiles itself only when the other compile ended for reasons of its own (deadline,
  // cancel) or the outcome was not kept.
  Compiled Compile(const ConstraintSpec& spec, CompileBudget* budget = nullptr, bool* joined = nullptr);
  // Lookup, else Compile.
  Compiled Get(const ConstraintSpec& spec);

  const ConstraintLimits& limits() const { return limits_; }
  size_t size() const;
  int64_t bytes() const;
  int64_t hits() const;
  int64_t failures_cached() const;
  // Compiles run (not answered from the cache or by joining one in flight).
  int64_t compiles() const;

 private:
  struct Entry {
    Compiled compiled;
    int64_t bytes = 0;  // the key and the grammar's tables
  };
  void Put(std::string key, Entry entry);  // requires mu_
  // Waits while `key` is compiled by another caller. The cached outcome when there is one;
  // nullopt when the caller must compile (then `key` is marked in flight for it); the
  // budget's failure when its deadline passes or its flag is set while waiting.
  std::optional<Compiled> JoinOrClaim(const std::string& key, CompileBudget* budget, bool* joined);

  const ConstraintCacheOptions options_;
  const ConstraintLimits limits_;
  mutable std::mutex mu_;
  LruMap<std::string, Entry> entries_;  // guarded by mu_
  int64_t bytes_ = 0;                   // guarded by mu_: sum of entries' bytes
  int64_t hits_ = 0;                    // guarded by mu_
  int64_t failures_ = 0;                // guarded by mu_: failures among entries_
  int64_t compiles_ = 0;                // guarded by mu_
  std::set<std::string> in_flight_;     // guarded by mu_: keys being compiled now
  std::condition_variable compiled_;    // notified whenever a key leaves in_flight_
};

}  // namespace surge
