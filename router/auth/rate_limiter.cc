#include "router/auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace surge::router {
namespace {

constexpr double kMsPerMinute = 60000.0;

LimitReport Report(const TokenBucket& bucket) {
  return {bucket.capacity(), std::max<int64_t>(0, static_cast<int64_t>(std::floor(bucket.level()))),
          bucket.MsUntil(static_cast<double>(bucket.capacity()))};
}

// Names the limit at fault (requests first: it is the one a client can act on soonest).
std::string RefusalMessage(const ApiKeyInfo& key, bool requests_at_fault, int64_t estimated_tokens,
                           int64_t retry_after_s) {
  const std::string limit =
      requests_at_fault
          ? "requests per minute (" + std::to_string(key.limits.requests_per_minute) + ")"
          : "tokens per minute (" + std::to_string(key.limits.tokens_per_minute) + "; this request needs ~" +
                std::to_string(estimated_tokens) + ")";
  return "Rate limit reached for tenant " + key.tenant + " on " + limit + ". Please try again in " +
         std::to_string(retry_after_s) + "s.";
}

int64_t CeilSeconds(int64_t ms) { return std::max<int64_t>(1, (ms + 999) / 1000); }

}  // namespace

TokenBucket::TokenBucket(int64_t capacity, int64_t now_ms)
    : capacity_(capacity),
      per_ms_(static_cast<double>(capacity) / kMsPerMinute),
      level_(static_cast<double>(capacity)),
      last_ms_(now_ms) {
  CHECK_GT(capacity, 0);
}

void TokenBucket::Refill(int64_t now_ms) {
  if (now_ms <= last_ms_) return;
  level_ = std::min<double>(static_cast<double>(capacity_), level_ + per_ms_ * static_cast<double>(now_ms - last_ms_));
  last_ms_ = now_ms;
}

int64_t TokenBucket::MsUntil(double amount) const {
  if (level_ >= amount) return 0;
  return static_cast<int64_t>(std::ceil((amount - level_) / per_ms_));
}

void TokenBucket::Give(double amount) {
  level_ = std::min<double>(static_cast<double>(capacity_), level_ + amount);
}

RateLimiter::RateLimiter(std::function<int64_t()> now_ms) : now_ms_(std::move(now_ms)) {
  CHECK(now_ms_ != nullptr);
}

RateLimiter::Buckets& RateLimiter::BucketsLocked(const ApiKeyInfo& key, int64_t now_ms) {
  auto [it, inserted] = buckets_.try_emplace(key.id);
  if (inserted) {
    if (key.limits.requests_per_minute > 0) it->second.requests.emplace(key.limits.requests_per_minute, now_ms);
    if (key.limits.tokens_per_minute > 0) it->second.tokens.emplace(key.limits.tokens_per_minute, now_ms);
  }
  if (it->second.requests) it->second.requests->Refill(now_ms);
  if (it->second.tokens) it->second.tokens->Refill(now_ms);
  return it->second;
}

RateLimitDecision RateLimiter::Acquire(const ApiKeyInfo* key, int64_t estimated_tokens) {
  RateLimitDecision decision;
  if (key == nullptr) return decision;
  estimated_tokens = std::max<int64_t>(0, estimated_tokens);
  std::lock_guard<std::mutex> lock(mu_);
  Buckets& buckets = BucketsLocked(*key, now_ms_());
  // A request larger than the whole bucket waits for a full bucket, not forever.
  const int64_t wait_requests_ms = buckets.requests ? buckets.requests->MsUntil(1) : 0;
  const int64_t wait_tokens_ms =
      buckets.tokens ? buckets.tokens->MsUntil(static_cast<double>(
                           std::min(estimated_tokens, buckets.tokens->capacity())))
                     : 0;
  decision.allowed = wait_requests_ms == 0 && wait_tokens_ms == 0;
  if (decision.allowed) {
    if (buckets.requests) buckets.requests->Take(1);
    if (buckets.tokens) buckets.tokens->Take(static_cast<double>(estimated_tokens));
    decision.key_id = key->id;
    decision.reserved_tokens = buckets.tokens ? estimated_tokens : 0;
  } else {
    decision.retry_after_s = CeilSeconds(std::max(wait_requests_ms, wait_tokens_ms));
    decision.message = RefusalMessage(*key, wait_requests_ms > 0, estimated_tokens, decision.retry_after_s);
  }
  if (buckets.requests) decision.requests = Report(*buckets.requests);
  if (buckets.tokens) decision.tokens = Report(*buckets.tokens);
  return decision;
}

void RateLimiter::Settle(const RateLimitDecision& decision, int64_t actual_tokens) {
  if (!decision.allowed || decision.key_id < 0 || decision.reserved_tokens == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = buckets_.find(decision.key_id);
  if (it == buckets_.end() || !it->second.tokens) return;
  TokenBucket& tokens = *it->second.tokens;
  tokens.Refill(now_ms_());
  const double difference = static_cast<double>(decision.reserved_tokens - std::max<int64_t>(0, actual_tokens));
  if (difference >= 0) {
    tokens.Give(difference);
  } else {
    tokens.Take(-difference);
  }
}

std::string FormatResetDuration(int64_t ms) {
  ms = std::max<int64_t>(0, ms);
  if (ms < 1000) return std::to_string(ms) + "ms";
  const int64_t minutes = ms / 60000;
  const int64_t rest_ms = ms % 60000;
  std::string seconds = std::to_string(rest_ms / 1000);
  if (rest_ms % 1000 != 0) {
    std::string fraction = std::to_string(1000 + rest_ms % 1000).substr(1);  // 3 digits
    while (fraction.back() == '0') fraction.pop_back();
    seconds += "." + fraction;
  }
  return (minutes > 0 ? std::to_string(minutes) + "m" : "") + seconds + "s";
}

std::vector<std::pair<std::string, std::string>> RateLimitHeaders(const RateLimitDecision& decision) {
  std::vector<std::pair<std::string, std::string>> headers;
  const auto add = [&headers](const std::optional<LimitReport>& report, const std::string& kind) {
    if (!report) return;
    headers.emplace_back("x-ratelimit-limit-" + kind, std::to_string(report->limit));
    headers.emplace_back("x-ratelimit-remaining-" + kind, std::to_string(report->remaining));
    headers.emplace_back("x-ratelimit-reset-" + kind, FormatResetDuration(report->reset_ms));
  };
  add(decision.requests, "requests");
  add(decision.tokens, "tokens");
  if (!decision.allowed) headers.emplace_back("Retry-After", std::to_string(decision.retry_after_s));
  return headers;
}

api::ErrorReply RateLimitErrorReply(const RateLimitDecision& decision) {
  return {429, api::ErrorBody(429, decision.message, "", "rate_limit_exceeded")};
}

}  // namespace surge::router
