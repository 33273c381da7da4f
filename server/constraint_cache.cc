#include "server/constraint_cache.h"

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

ConstraintCache::Compiled ConstraintCache::Compile(const ConstraintSpec& spec, CompileBudget* budget) {
  Compiled compiled = CompileConstraint(spec, limits_, budget);
  if (!compiled.ok() && !Cacheable(compiled.status())) return compiled;
  std::string key = ConstraintCacheKey(spec);
  Entry entry{compiled, static_cast<int64_t>(key.size())};
  if (compiled.ok()) {
    entry.bytes += (*compiled)->memory_bytes();
  } else {
    entry.bytes += static_cast<int64_t>(compiled.status().message().size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Two threads may compile the same spec at once; the first to finish is kept.
  if (Entry* cached = entries_.Find(key)) return cached->compiled;
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

int64_t ConstraintCache::failures_cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

}  // namespace surge
