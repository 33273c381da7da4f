// RedisCache: the shared exact-cache backend (--cache redis://HOST[:PORT][/DB]), so that
// entries outlive a router restart and several routers share them. A small pool: each of
// `num_connections` worker threads owns one hiredis connection and takes jobs from one
// bounded queue; every command has a short timeout. Redis down is never a request's error:
// lookups answer kError (a miss to the caller), stores are dropped, the outage is logged
// once, and connecting is retried with doubling back-off (one probe per period) until it
// answers again. Entries expire in Redis itself (SET ... EX ttl).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "router/cache/cache_backend.h"

struct redisContext;

namespace surge::router {

struct RedisAddress {
  std::string host;
  int port = 6379;
  int64_t db = 0;
};
// "redis://HOST[:PORT][/DB]"; INVALID_ARGUMENT naming what is wrong.
StatusOr<RedisAddress> ParseRedisUrl(std::string_view url);

struct RedisCacheOptions {
  RedisAddress address;
  int num_connections = 4;
  int64_t timeout_ms = 100;          // connect, and each command
  int64_t backoff_base_ms = 100;     // first reconnect wait after a failure, doubling
  int64_t backoff_max_ms = 2'000;
  size_t max_queued_jobs = 4'096;    // beyond: a lookup is an error, a store is dropped
};

class RedisCache : public CacheBackend {
 public:
  explicit RedisCache(RedisCacheOptions options);
  ~RedisCache() override;  // pending jobs run as failures; the workers join

  const char* name() const override { return "redis"; }
  void Get(const CacheKey& key, std::function<void(CacheLookup)> done) override;
  void Set(const CacheKey& key, std::string value, int64_t ttl_s, std::function<void(StoreResult)> done) override;
  void Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done) override;
  void Scan(const std::string& digest_prefix, size_t max_values,
            std::function<void(StatusOr<std::vector<ScannedValue>>)> done) override;
  bool reachable() const override;

  // "surge:cache:exact:SCOPE_TAG:DIGEST"; SCOPE_TAG is 16 hex digits of SHA-256(scope), so a
  // tenant name never meets Redis's glob syntax.
  static std::string RedisKey(const CacheKey& key);

 private:
  // Does its I/O on the worker's live connection (nullptr when Redis is unreachable) and
  // returns the caller's notification, which runs after the worker has recorded whether
  // the connection failed: a caller told of a failure finds reachable() false.
  using Notify = std::function<void()>;
  using Job = std::function<Notify(redisContext*)>;
  void Enqueue(Job job);
  void WorkerLoop();
  redisContext* Connection(redisContext** owned);  // the worker's, (re)connected when allowed
  void OnFailure(redisContext** owned);
  void OnSuccess();
  bool MayConnect(int64_t now_ms);

  const RedisCacheOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;     // guarded by mu_
  bool stopping_ = false;    // guarded by mu_
  // The outage: whether the last attempt failed, when the next connect may be tried, and
  // the back-off that grows while it lasts. Guarded by mu_.
  bool down_ = false;
  int64_t next_connect_ms_ = 0;
  int64_t backoff_ms_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace surge::router
