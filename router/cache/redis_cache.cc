#include "router/cache/redis_cache.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>

#include "base/crypto.h"
#include "base/logging.h"

namespace surge::router {
namespace {

constexpr char kKeyPrefix[] = "surge:cache:exact:";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

timeval ToTimeval(int64_t ms) { return {static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)}; }

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Reply Command(redisContext* context, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const std::string& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return Reply(static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(args.size()), argv.data(), lengths.data())));
}

std::string ScopeTag(const std::string& scope) { return Sha256Hex(scope, 8); }

// SCAN MATCH pattern, deleting what it finds; the number deleted, or -1 on a lost connection.
int64_t DeleteMatching(redisContext* context, const std::string& pattern) {
  int64_t num_deleted = 0;
  std::string cursor = "0";
  do {
    Reply reply = Command(context, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) return -1;
    cursor.assign(reply->element[0]->str, reply->element[0]->len);
    const redisReply* keys = reply->element[1];
    if (keys->elements == 0) continue;
    std::vector<std::string> del{"DEL"};
    for (size_t i = 0; i < keys->elements; ++i) del.emplace_back(keys->element[i]->str, keys->element[i]->len);
    Reply deleted = Command(context, del);
    if (!deleted) return -1;
    if (deleted->type == REDIS_REPLY_INTEGER) num_deleted += deleted->integer;
  } while (cursor != "0");
  return num_deleted;
}

// SCAN MATCH pattern with each value and its PTTL, up to `max_values`; false on a lost connection.
bool ReadMatching(redisContext* context, const std::string& pattern, size_t max_values,
                  std::vector<ScannedValue>* out) {
  std::string cursor = "0";
  do {
    Reply reply = Command(context, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) return false;
    cursor.assign(reply->element[0]->str, reply->element[0]->len);
    const redisReply* keys = reply->element[1];
    for (size_t i = 0; i < keys->elements && out->size() < max_values; ++i) {
      const std::string key(keys->element[i]->str, keys->element[i]->len);
      Reply value = Command(context, {"GET", key});
      Reply ttl = Command(context, {"PTTL", key});
      if (!value || !ttl) return false;
      if (value->type != REDIS_REPLY_STRING || ttl->type != REDIS_REPLY_INTEGER || ttl->integer <= 0) continue;
      out->push_back({std::string(value->str, value->len), ttl->integer});
    }
  } while (cursor != "0" && out->size() < max_values);
  return true;
}

}  // namespace

StatusOr<RedisAddress> ParseRedisUrl(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, kScheme.size()) != kScheme) return InvalidArgumentError("'" + std::string(url) + "' is not redis://HOST[:PORT][/DB]");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find('@') != std::string_view::npos) return InvalidArgumentError("redis URL: credentials (user:password@) are not supported");
  RedisAddress address;
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string db(rest.substr(slash + 1));
    char* end = nullptr;
    address.db = std::strtoll(db.c_str(), &end, 10);
    if (db.empty() || *end != '\0' || address.db < 0) return InvalidArgumentError("redis URL: database '" + db + "' is not an integer >= 0");
    rest = rest.substr(0, slash);
  }
  if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    const std::string port(rest.substr(colon + 1));
    char* end = nullptr;
    const long value = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || value < 1 || value > 65535) return InvalidArgumentError("redis URL: port '" + port + "' is out of range");
    address.port = static_cast<int>(value);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return InvalidArgumentError("redis URL '" + std::string(url) + "' names no host");
  address.host = std::string(rest);
  return address;
}

std::string RedisCache::RedisKey(const CacheKey& key) { return kKeyPrefix + ScopeTag(key.scope) + ":" + key.digest; }

RedisCache::RedisCache(RedisCacheOptions options) : options_(std::move(options)) {
  for (int i = 0; i < std::max(1, options_.num_connections); ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

RedisCache::~RedisCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  for (Job& job : jobs_) job(nullptr)();  // what was still queued fails as it would with Redis down
}

void RedisCache::Enqueue(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && jobs_.size() < options_.max_queued_jobs) {
      jobs_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  }
  job(nullptr)();  // overloaded or stopping: as if Redis were down
}

void RedisCache::WorkerLoop() {
  redisContext* owned = nullptr;
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) break;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    redisContext* context = Connection(&owned);
    Notify notify = job(context);
    if (context != nullptr && context->err != 0) OnFailure(&owned);
    else if (context != nullptr) OnSuccess();
    notify();
  }
  if (owned != nullptr) redisFree(owned);
}

// One connect per back-off period while Redis is down, whichever worker gets there first.
bool RedisCache::MayConnect(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!down_) return true;
  if (now_ms < next_connect_ms_) return false;
  next_connect_ms_ = now_ms + backoff_ms_;
  backoff_ms_ = std::min(options_.backoff_max_ms, backoff_ms_ * 2);
  return true;
}

redisContext* RedisCache::Connection(redisContext** owned) {
  if (*owned != nullptr) return *owned;
  if (!MayConnect(NowMs())) return nullptr;
  const timeval timeout = ToTimeval(options_.timeout_ms);
  redisContext* context = redisConnectWithTimeout(options_.address.host.c_str(), options_.address.port, timeout);
  *owned = context;
  if (context == nullptr || context->err != 0 || redisSetTimeout(context, timeout) != REDIS_OK) {
    OnFailure(owned);
    return nullptr;
  }
  if (options_.address.db != 0) {
    Reply reply = Command(context, {"SELECT", std::to_string(options_.address.db)});
    if (!reply || reply->type == REDIS_REPLY_ERROR) {
      OnFailure(owned);
      return nullptr;
    }
  }
  return context;
}

void RedisCache::OnFailure(redisContext** owned) {
  const std::string why = *owned != nullptr && (*owned)->err != 0 ? (*owned)->errstr : "connection failed";
  if (*owned != nullptr) redisFree(*owned);
  *owned = nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  if (down_) return;
  down_ = true;  // logged once per outage
  backoff_ms_ = options_.backoff_base_ms;
  next_connect_ms_ = NowMs() + backoff_ms_;
  LOG(WARNING) << "response cache: redis " << options_.address.host << ":" << options_.address.port
               << " unreachable (" << why << "); caching is off until it answers again";
}

bool RedisCache::reachable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !down_;
}

void RedisCache::OnSuccess() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!down_) return;
  down_ = false;
  LOG(INFO) << "response cache: redis " << options_.address.host << ":" << options_.address.port
            << " reachable again; caching resumes";
}

void RedisCache::Get(const CacheKey& key, std::function<void(CacheLookup)> done) {
  Enqueue([redis_key = RedisKey(key), done = std::move(done)](redisContext* context) -> Notify {
    CacheLookup lookup{CacheLookup::kError, {}};
    if (context != nullptr) {
      Reply reply = Command(context, {"GET", redis_key});
      if (reply && reply->type == REDIS_REPLY_STRING) lookup = {CacheLookup::kHit, std::string(reply->str, reply->len)};
      else if (reply && reply->type != REDIS_REPLY_ERROR) lookup.result = CacheLookup::kMiss;
    }
    return [done, lookup = std::move(lookup)]() mutable { done(std::move(lookup)); };
  });
}

void RedisCache::Set(const CacheKey& key, std::string value, int64_t ttl_s, std::function<void(StoreResult)> done) {
  Enqueue([redis_key = RedisKey(key), value = std::move(value), ttl_s, done = std::move(done)](redisContext* context) -> Notify {
    StoreResult result = StoreResult::kError;
    if (context != nullptr) {
      Reply reply = Command(context, {"SET", redis_key, value, "EX", std::to_string(ttl_s)});
      if (reply && reply->type == REDIS_REPLY_STATUS) result = StoreResult::kStored;
    }
    return [done, result] {
      if (done) done(result);
    };
  });
}

void RedisCache::Flush(std::optional<std::string> scope, std::function<void(StatusOr<int64_t>)> done) {
  const std::string pattern = std::string(kKeyPrefix) + (scope ? ScopeTag(*scope) + ":*" : "*");
  Enqueue([pattern, done = std::move(done)](redisContext* context) -> Notify {
    const int64_t num_deleted = context != nullptr ? DeleteMatching(context, pattern) : -1;
    return [done, num_deleted] {
      if (num_deleted < 0) return done(UnavailableError("the response cache's redis is unreachable"));
      done(num_deleted);
    };
  });
}

}  // namespace surge::router

namespace surge::router {

void RedisCache::Scan(const std::string& digest_prefix, size_t max_values,
                      std::function<void(StatusOr<std::vector<ScannedValue>>)> done) {
  const std::string pattern = std::string(kKeyPrefix) + "*:" + digest_prefix + "*";
  Enqueue([pattern, max_values, done = std::move(done)](redisContext* context) -> Notify {
    auto values = std::make_shared<std::vector<ScannedValue>>();
    const bool ok = context != nullptr && ReadMatching(context, pattern, max_values, values.get());
    return [done, values, ok] {
      if (!ok) return done(UnavailableError("the response cache's redis is unreachable"));
      done(std::move(*values));
    };
  });
}

}  // namespace surge::router
