#include "server/constraint_cache.h"

#include <chrono>
#include <utility>

namespace surge {
namespace {

// A deadline or a cancelled request stops a compile for reasons outside the grammar.
bool Cacheable(const Status& status) {
  return status.code() != StatusCode::kDeadlineExceeded && status.code() != StatusCode::kCancelled;
}

}  // namespace

ConstraintCache::ConstraintCache(ConstraintCacheOptions options, ConstraintLimits limits)
    : options_(options), limits_(limits), entries_(options.max_entries) {}

std::optional<ConstraintCache::Compiled> ConstraintCache::Lookup(const ConstraintSpec& spec) {
  const std::string key = ConstraintCacheKey(spec);
  std::lock_guard<std::mutex> lock(mu_);
  Entry* cached = entries_.Find(key);
  if (cached == nullptr) return std::nullopt;
  ++hits_;
  return cached->compiled;
}

std::optional<ConstraintCache::Compiled> ConstraintCache::JoinOrClaim(const std::string& key, CompileBudget* budget,
                                                                      bool* joined) {
  std::unique_lock<std::mutex> lock(mu_);
  while (in_flight_.count(key) > 0) {
    *joined = true;
    // The waiter's own deadline and cancel flag are read every 20 ms.
    compiled_.wait_for(lock, std::chrono::milliseconds(20));
    if (budget != nullptr && !budget->CheckNow()) return Compiled(budget->status());
  }
  if (Entry* cached = entries_.Find(key)) {
    ++hits_;
    return cached->compiled;
  }
  in_flight_.insert(key);
  ++compiles_;
  return std::nullopt;
}

ConstraintCache::Compiled ConstraintCache::Compile(const ConstraintSpec& spec, CompileBudget* budget, bool* joined) {
  bool joined_other = false;
  std::string key = ConstraintCacheKey(spec);
  if (std::optional<Compiled> outcome = JoinOrClaim(key, budget, &joined_other)) {
    if (joined != nullptr) *joined = joined_other;
    return *std::move(outcome);
  }
  if (joined != nullptr) *joined = false;
  Compiled compiled = CompileConstraint(spec, limits_, budget);
  Entry entry{compiled, static_cast<int64_t>(key.size())};
  if (compiled.ok()) {
    entry.bytes += (*compiled)->memory_bytes();
  } else {
    entry.bytes += static_cast<int64_t>(compiled.status().message().size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(key);
  compiled_.notify_all();
  if (!compiled.ok() && !Cacheable(compiled.status())) return compiled;
  if (entry.bytes <= options_.max_bytes) Put(std::move(key), std::move(entry));
  return compiled;
}

ConstraintCache::Compiled ConstraintCache::Get(const ConstraintSpec& spec) {
  if (std::optional<Compiled> cached = Lookup(spec)) return *std::move(cached);
  return Compile(spec);
}

void ConstraintCache::Put(std::string key, Entry entry) {
  while (entries_.size() > 0 && (bytes_ + entry.bytes > options_.max_bytes || entries_.size() >= options_.max_entries)) {
    const auto* oldest = entries_.Oldest();
    bytes_ -= oldest->second.bytes;
    failures_ -= oldest->second.compiled.ok() ? 0 : 1;
    entries_.Erase(std::string(oldest->first));
  }
  bytes_ += entry.bytes;
  failures_ += entry.compiled.ok() ? 0 : 1;
  entries_.Put(std::move(key), std::move(entry));
}

size_t ConstraintCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

int64_t ConstraintCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

int64_t ConstraintCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int64_t ConstraintCache::compiles() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiles_;
}

int64_t ConstraintCache::failures_cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

}  // namespace surge
