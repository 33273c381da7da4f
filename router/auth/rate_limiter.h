// RateLimiter: per-key token buckets on requests/min and tokens/min, the 429 decision with
// Retry-After, and OpenAI's x-ratelimit-* headers for every response.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/error.h"
#include "router/auth/api_keys.h"

namespace surge::router {

// A bucket of `capacity` units refilled continuously at capacity per minute, starting full.
// Its level may go below zero: a request larger than what is left is let through once the
// bucket is full and leaves a debt that refill repays before the next one (see README.md).
class TokenBucket {
 public:
  TokenBucket(int64_t capacity, int64_t now_ms);
  void Refill(int64_t now_ms);
  double level() const { return level_; }
  int64_t capacity() const { return capacity_; }
  // Milliseconds of refill until the level reaches `amount` (0 when it already has).
  int64_t MsUntil(double amount) const;
  void Take(double amount) { level_ -= amount; }
  void Give(double amount);  // up to capacity

 private:
  int64_t capacity_;
  double per_ms_;  // capacity / 60000
  double level_;
  int64_t last_ms_;
};

// One limit's state for the headers (OpenAI's x-ratelimit-*-requests / -tokens).
struct LimitReport {
  int64_t limit = 0;
  int64_t remaining = 0;  // whole units left after this request, >= 0
  int64_t reset_ms = 0;   // until the bucket is full again
};

// What Acquire decided; reservation is what Settle corrects once the response ended.
struct RateLimitDecision {
  bool allowed = true;
  std::optional<LimitReport> requests;  // absent when the key has no such limit (or none)
  std::optional<LimitReport> tokens;
  int64_t retry_after_s = 0;  // refused: >= 1, when the limits at fault will let it through
  std::string message;        // refused: which limit, for the 429 body
  int32_t key_id = -1;        // allowed with a key: for Settle
  int64_t reserved_tokens = 0;
};

// Headers to copy onto the response, refused or not: x-ratelimit-{limit,remaining,reset}-
// {requests,tokens} for the limits the key has (reset as "1s", "6m0s", "20ms"), and
// Retry-After (integer seconds, >= 1) when refused. Empty when the key has no limits.
std::vector<std::pair<std::string, std::string>> RateLimitHeaders(const RateLimitDecision& decision);
// 429 with OpenAI's error object, code "rate_limit_exceeded". Only for a refused decision.
api::ErrorReply RateLimitErrorReply(const RateLimitDecision& decision);
// "20ms", "1s", "1.5s", "6m0s": the duration format OpenAI's reset headers use.
std::string FormatResetDuration(int64_t ms);

// Thread-safe: one lock around the buckets, held for a few arithmetic operations. Buckets
// are filed by ApiKeyInfo::id and made with the limits of first use: one limiter per
// ApiKeyStore (a reloaded store gets a new limiter).
class RateLimiter {
 public:
  explicit RateLimiter(std::function<int64_t()> now_ms);  // monotonic ms; injected for tests

  // At admission. `estimated_tokens`: the prompt estimate plus max_tokens (token_estimate.h).
  // Refused: nothing is taken. Allowed: one request and the estimate are taken.
  // `key` nullptr (the router is open): always allowed, no headers.
  RateLimitDecision Acquire(const ApiKeyInfo* key, int64_t estimated_tokens);
  // When the response ended: replaces the reservation by the tokens really used (usage's
  // prompt + completion; 0 when the request failed before the engine ran it). The request
  // itself stays counted. A no-op for decisions that reserved nothing.
  void Settle(const RateLimitDecision& decision, int64_t actual_tokens);

 private:
  struct Buckets {
    std::optional<TokenBucket> requests;
    std::optional<TokenBucket> tokens;
  };
  Buckets& BucketsLocked(const ApiKeyInfo& key, int64_t now_ms);

  const std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::unordered_map<int32_t, Buckets> buckets_;  // by ApiKeyInfo::id
};

}  // namespace surge::router
