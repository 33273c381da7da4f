// RateLimiter: refill in virtual time, 429 with Retry-After and OpenAI's headers, the
// correction by actual usage, and oversize requests.
#include "router/auth/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace surge::router {
namespace {

struct Clock {
  int64_t now_ms = 5000;
  std::function<int64_t()> Fn() {
    return [this] { return now_ms; };
  }
};

ApiKeyInfo Key(int64_t requests_per_minute, int64_t tokens_per_minute, int32_t id = 0) {
  ApiKeyInfo key;
  key.id = id;
  key.tenant = "acme";
  key.limits = {requests_per_minute, tokens_per_minute};
  return key;
}

std::map<std::string, std::string> Headers(const RateLimitDecision& decision) {
  std::map<std::string, std::string> headers;
  for (auto& [name, value] : RateLimitHeaders(decision)) {
    EXPECT_EQ(headers.count(name), 0u) << name;
    headers[name] = value;
  }
  return headers;
}

TEST(RateLimiterTest, ResetDurationsReadLikeOpenAis) {
  EXPECT_EQ(FormatResetDuration(0), "0ms");
  EXPECT_EQ(FormatResetDuration(20), "20ms");
  EXPECT_EQ(FormatResetDuration(1000), "1s");
  EXPECT_EQ(FormatResetDuration(1500), "1.5s");
  EXPECT_EQ(FormatResetDuration(1005), "1.005s");
  EXPECT_EQ(FormatResetDuration(61000), "1m1s");
  EXPECT_EQ(FormatResetDuration(360000), "6m0s");
}

TEST(RateLimiterTest, RequestsPerMinuteRefuseThenRefill) {
  Clock clock;
  RateLimiter limiter(clock.Fn());
  const ApiKeyInfo key = Key(60, 0);  // one request a second
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(limiter.Acquire(&key, 10).allowed) << i;
  const RateLimitDecision refused = limiter.Acquire(&key, 10);
  ASSERT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after_s, 1);
  EXPECT_NE(refused.message.find("requests per minute (60)"), std::string::npos) << refused.message;
  auto headers = Headers(refused);
  EXPECT_EQ(headers["Retry-After"], "1");
  EXPECT_EQ(headers["x-ratelimit-limit-requests"], "60");
  EXPECT_EQ(headers["x-ratelimit-remaining-requests"], "0");
  EXPECT_EQ(headers["x-ratelimit-reset-requests"], "1m0s");
  EXPECT_EQ(headers.count("x-ratelimit-limit-tokens"), 0u);  // this key has no token limit
  const api::ErrorReply reply = RateLimitErrorReply(refused);
  EXPECT_EQ(reply.http_status, 429);
  EXPECT_EQ(nlohmann::json::parse(reply.body)["error"]["code"], "rate_limit_exceeded");
  clock.now_ms += 999;
  EXPECT_FALSE(limiter.Acquire(&key, 10).allowed);
  clock.now_ms += 1;  // a full second: one request's worth
  const RateLimitDecision allowed = limiter.Acquire(&key, 10);
  EXPECT_TRUE(allowed.allowed);
  EXPECT_EQ(Headers(allowed).count("Retry-After"), 0u);
  EXPECT_FALSE(limiter.Acquire(&key, 10).allowed);
  clock.now_ms += 60000;  // a minute idle: full again, no more
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(limiter.Acquire(&key, 10).allowed) << i;
  EXPECT_FALSE(limiter.Acquire(&key, 10).allowed);
}

TEST(RateLimiterTest, TokensPerMinuteWithHeadersOnSuccess) {
  Clock clock;
  RateLimiter limiter(clock.Fn());
  const ApiKeyInfo key = Key(600, 6000);  // 100 tokens a second
  const RateLimitDecision first = limiter.Acquire(&key, 1500);
  ASSERT_TRUE(first.allowed);
  auto headers = Headers(first);
  EXPECT_EQ(headers["x-ratelimit-limit-requests"], "600");
  EXPECT_EQ(headers["x-ratelimit-remaining-requests"], "599");
  EXPECT_EQ(headers["x-ratelimit-reset-requests"], "100ms");
  EXPECT_EQ(headers["x-ratelimit-limit-tokens"], "6000");
  EXPECT_EQ(headers["x-ratelimit-remaining-tokens"], "4500");
  EXPECT_EQ(headers["x-ratelimit-reset-tokens"], "15s");
  ASSERT_TRUE(limiter.Acquire(&key, 4000).allowed);
  const RateLimitDecision refused = limiter.Acquire(&key, 750);  // 500 left, 250 short
  ASSERT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after_s, 3);  // 2.5 s of refill, rounded up
  EXPECT_NE(refused.message.find("tokens per minute (6000"), std::string::npos) << refused.message;
  headers = Headers(refused);
  EXPECT_EQ(headers["Retry-After"], "3");
  EXPECT_EQ(headers["x-ratelimit-remaining-tokens"], "500");
  EXPECT_EQ(headers["x-ratelimit-remaining-requests"], "598");  // a refusal takes nothing
  clock.now_ms += 2500;
  EXPECT_TRUE(limiter.Acquire(&key, 750).allowed);
}

// The estimate is a reservation: the response's usage replaces it.
TEST(RateLimiterTest, ActualUsageCorrectsTheEstimate) {
  Clock clock;
  RateLimiter limiter(clock.Fn());
  const ApiKeyInfo key = Key(0, 1000);
  const RateLimitDecision big = limiter.Acquire(&key, 900);  // say, max_tokens 880
  ASSERT_TRUE(big.allowed);
  EXPECT_EQ(big.reserved_tokens, 900);
  EXPECT_FALSE(limiter.Acquire(&key, 200).allowed);
  limiter.Settle(big, 150);  // it stopped early: 750 come back
  const RateLimitDecision next = limiter.Acquire(&key, 200);
  ASSERT_TRUE(next.allowed);
  EXPECT_EQ(next.tokens->remaining, 650);
  limiter.Settle(next, 500);  // it used more than reserved: charged the difference
  EXPECT_EQ(limiter.Acquire(&key, 0).tokens->remaining, 350);
  RateLimitDecision failed = limiter.Acquire(&key, 300);
  ASSERT_TRUE(failed.allowed);
  limiter.Settle(failed, 0);  // failed before the engine ran it: all back
  EXPECT_EQ(limiter.Acquire(&key, 0).tokens->remaining, 350);
  limiter.Settle(failed, 0);  // the buckets never exceed their capacity however often
  clock.now_ms += 120000;
  EXPECT_EQ(limiter.Acquire(&key, 0).tokens->remaining, 1000);
}

// A request over the whole bucket passes once the bucket is full and leaves a debt.
TEST(RateLimiterTest, OversizeRequestsWaitForAFullBucket) {
  Clock clock;
  RateLimiter limiter(clock.Fn());
  const ApiKeyInfo key = Key(0, 600);  // 10 tokens a second
  ASSERT_TRUE(limiter.Acquire(&key, 100).allowed);
  const RateLimitDecision refused = limiter.Acquire(&key, 5000);
  ASSERT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after_s, 10);  // 100 tokens to refill: the bucket is then full
  clock.now_ms += 10000;
  const RateLimitDecision oversize = limiter.Acquire(&key, 5000);
  ASSERT_TRUE(oversize.allowed);
  EXPECT_EQ(oversize.tokens->remaining, 0);
  const RateLimitDecision after = limiter.Acquire(&key, 1);
  ASSERT_FALSE(after.allowed);
  EXPECT_EQ(after.retry_after_s, 441);  // the 4400-token debt, then one token
}

TEST(RateLimiterTest, KeysAreApartAndUnlimitedOnesCarryNoHeaders) {
  Clock clock;
  RateLimiter limiter(clock.Fn());
  const ApiKeyInfo a = Key(1, 0, 0);
  const ApiKeyInfo b = Key(1, 0, 1);
  EXPECT_TRUE(limiter.Acquire(&a, 1).allowed);
  EXPECT_FALSE(limiter.Acquire(&a, 1).allowed);
  EXPECT_TRUE(limiter.Acquire(&b, 1).allowed);
  const ApiKeyInfo unlimited = Key(0, 0, 2);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Acquire(&unlimited, 1 << 20).allowed);
  EXPECT_TRUE(RateLimitHeaders(limiter.Acquire(&unlimited, 5)).empty());
  const RateLimitDecision open = limiter.Acquire(nullptr, 5);
  EXPECT_TRUE(open.allowed);
  EXPECT_TRUE(RateLimitHeaders(open).empty());
}

// Threads racing on one key's buckets admit exactly what the limits allow, not one more.
TEST(RateLimiterTest, ConcurrentAcquiresNeverOvershoot) {
  Clock clock;  // frozen: no refill during the race
  RateLimiter limiter(clock.Fn());
  const ApiKeyInfo key = Key(600, 10000);
  std::atomic<int> num_allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const RateLimitDecision decision = limiter.Acquire(&key, 10);
        if (decision.allowed) {
          ++num_allowed;
          limiter.Settle(decision, 10);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(num_allowed.load(), 600);  // requests/min binds first: 600 x 10 tokens < 10000
  EXPECT_EQ(limiter.Acquire(&key, 0).tokens->remaining, 10000 - 6000);  // a refusal still reports
}

}  // namespace
}  // namespace surge::router
