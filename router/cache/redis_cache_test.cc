// The Redis backend against a real redis-server on a free port (skipped, saying so, when
// none is installed): get / set / flush by scope, expiry in Redis, and an outage: errors
// (never a hang) while it is down, caching again once it is back on the same port.
#include "router/cache/redis_cache.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

namespace surge::router {
namespace {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

pid_t StartRedis(int port) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string port_text = std::to_string(port);
    execlp("redis-server", "redis-server", "--port", port_text.c_str(), "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "no", "--loglevel", "warning", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

void Kill(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

CacheLookup GetNow(RedisCache& cache, const CacheKey& key) {
  std::promise<CacheLookup> result;
  cache.Get(key, [&](CacheLookup lookup) { result.set_value(std::move(lookup)); });
  return result.get_future().get();
}

StoreResult SetNow(RedisCache& cache, const CacheKey& key, std::string value, int64_t ttl_s) {
  std::promise<StoreResult> result;
  cache.Set(key, std::move(value), ttl_s, [&](StoreResult r) { result.set_value(r); });
  return result.get_future().get();
}

// Retries `op` (Redis may still be starting, or the back-off still running) for up to 5 s.
template <typename Op>
bool Eventually(Op op) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!op()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

TEST(RedisUrlTest, ParsesAndNamesWhatIsWrong) {
  StatusOr<RedisAddress> address = ParseRedisUrl("redis://cache.local:6380/2");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->host, "cache.local");
  EXPECT_EQ(address->port, 6380);
  EXPECT_EQ(address->db, 2);
  EXPECT_EQ(ParseRedisUrl("redis://h")->port, 6379);
  EXPECT_NE(ParseRedisUrl("redis://h:99999").status().message().find("port"), std::string::npos);
  EXPECT_NE(ParseRedisUrl("redis://h/x").status().message().find("database"), std::string::npos);
  EXPECT_NE(ParseRedisUrl("redis://u:p@h").status().message().find("credentials"), std::string::npos);
  EXPECT_FALSE(ParseRedisUrl("http://h").ok());
}

TEST(RedisCacheTest, AgainstARealServer) {
  if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)";
  }
  const int port = FreePort();
  pid_t redis = StartRedis(port);
  RedisCache cache({.address = {"127.0.0.1", port, 3}, .num_connections = 2, .timeout_ms = 200,
                    .backoff_base_ms = 50, .backoff_max_ms = 200});
  ASSERT_TRUE(Eventually([&] { return SetNow(cache, {"acme", "k"}, "A", 60) == StoreResult::kStored; }));
  ASSERT_EQ(SetNow(cache, {"globex", "k"}, "G", 1), StoreResult::kStored);
  EXPECT_EQ(GetNow(cache, {"acme", "k"}).value, "A");
  EXPECT_EQ(GetNow(cache, {"acme", "other"}).result, CacheLookup::kMiss);
  EXPECT_TRUE(Eventually([&] { return GetNow(cache, {"globex", "k"}).result == CacheLookup::kMiss; }));  // EX 1

  std::promise<StatusOr<int64_t>> flushed;
  cache.Flush("acme", [&](StatusOr<int64_t> n) { flushed.set_value(n); });
  EXPECT_EQ(*flushed.get_future().get(), 1);
  EXPECT_EQ(GetNow(cache, {"acme", "k"}).result, CacheLookup::kMiss);

  Kill(redis);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(GetNow(cache, {"acme", "k"}).result, CacheLookup::kError);
  EXPECT_EQ(SetNow(cache, {"acme", "k"}, "A", 60), StoreResult::kError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_FALSE(cache.reachable());

  redis = StartRedis(port);
  EXPECT_TRUE(Eventually([&] { return SetNow(cache, {"acme", "k"}, "B", 60) == StoreResult::kStored; }));
  EXPECT_EQ(GetNow(cache, {"acme", "k"}).value, "B");
  EXPECT_TRUE(cache.reachable());
  Kill(redis);
}

}  // namespace
}  // namespace surge::router
