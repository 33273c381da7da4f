#include "router/route_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

namespace surge::router {
namespace {

using Json = nlohmann::json;

StatusOr<RouteConfig> Parse(const char* text) { return RouteConfigFromJson(Json::parse(text)); }

TEST(RouteConfigTest, ParsesEverySection) {
  StatusOr<RouteConfig> config = Parse(R"({
    "listen": {"host": "0.0.0.0", "port": 9000},
    "backends": [{"url": "http://127.0.0.1:8001"}, {"url": "http://127.0.0.1:8002", "pool": "big", "weight": 2.5}],
    "pools": {"default": {"policy": "round-robin"}, "big": {"policy": "p2c", "models": ["llama-70b"]}},
    "policy_options": {"session_header": "x-user", "backend_capacity": 8, "seed": 7},
    "health": {"interval_ms": 200, "timeout_ms": 100, "unhealthy_threshold": 3, "healthy_threshold": 2},
    "breaker": {"failure_threshold": 4, "cooldown_ms": 900, "success_threshold": 3},
    "ejection": {"window_ms": 1000, "min_requests": 5, "max_error_rate": 0.25, "duration_ms": 2000},
    "retry": {"max_retries": 4, "backoff_base_ms": 5, "backoff_max_ms": 50},
    "timeouts": {"connect_ms": 100, "first_byte_ms": 200, "idle_ms": 300, "total_ms": 400},
    "max_body_bytes": 1024, "forward_authorization": true, "drain_timeout_ms": 1500})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->host, "0.0.0.0");
  EXPECT_EQ(config->port, 9000);
  ASSERT_EQ(config->backends.size(), 2u);
  EXPECT_EQ(config->backends[0].pool, "default");
  EXPECT_EQ(config->backends[1].pool, "big");
  EXPECT_DOUBLE_EQ(config->backends[1].weight, 2.5);
  EXPECT_EQ(config->pools.at("big").policy, "p2c");
  EXPECT_EQ(config->pools.at("big").models, std::vector<std::string>{"llama-70b"});
  EXPECT_EQ(config->policy_options.session_header, "x-user");
  EXPECT_EQ(config->policy_options.seed, 7u);
  EXPECT_EQ(config->health.unhealthy_threshold, 3);
  EXPECT_EQ(config->breaker.cooldown_ms, 900);
  EXPECT_DOUBLE_EQ(config->ejection.max_error_rate, 0.25);
  EXPECT_EQ(config->retry.max_retries, 4);
  EXPECT_EQ(config->timeouts.first_byte_ms, 200);
  EXPECT_EQ(config->timeouts.total_ms, 400);
  EXPECT_EQ(config->max_body_bytes, 1024);
  EXPECT_TRUE(config->forward_authorization);
  EXPECT_EQ(config->drain_timeout_ms, 1500);
  EXPECT_TRUE(ValidateRouteConfig(*config).ok());
}

TEST(RouteConfigTest, EmptyTreeGivesDefaultsAndTheDefaultPool) {
  StatusOr<RouteConfig> config = Parse("{}");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->pools.count(kDefaultPool), 1u);
  EXPECT_EQ(config->pools.at(kDefaultPool).policy, "least-load");
  EXPECT_EQ(config->port, 8080);
}

void ExpectError(const char* text, const std::string& fragment) {
  StatusOr<RouteConfig> config = Parse(text);
  ASSERT_FALSE(config.ok()) << text;
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(fragment), std::string::npos)
      << "'" << config.status().message() << "' lacks '" << fragment << "'";
}

TEST(RouteConfigTest, UnknownKeysAreRefusedByTheirPath) {
  ExpectError(R"({"backendz": []})", "'backendz'");
  ExpectError(R"({"health": {"interval": 5}})", "'health.interval'");
  ExpectError(R"({"backends": [{"url": "http://a:1", "wieght": 2}]})", "'backends[0].wieght'");
  ExpectError(R"({"pools": {"big": {"polcy": "p2c"}}})", "'pools.big.polcy'");
  ExpectError(R"({"timeouts": {"read_ms": 1}})", "'timeouts.read_ms'");
}

TEST(RouteConfigTest, BadValuesAreRefusedByName) {
  ExpectError(R"({"listen": {"port": "80"}})", "'listen.port' must be an integer");
  ExpectError(R"({"health": {"interval_ms": 0}})", "'health.interval_ms' must be >= 1");
  // Past int64: named as out of range (it was read as -1 and refused as "must be >= 0").
  ExpectError(R"({"listen": {"port": 18446744073709551615}})",
              "'listen.port' must be an integer in [-9223372036854775808, 9223372036854775807], got 18446744073709551615");
  ExpectError(R"({"health": {"timeout_ms": 1e300}})", "'health.timeout_ms' must be an integer in [");
  ExpectError(R"({"backends": [{"url": "http://a:1", "weight": 0}]})", "'backends[0].weight' must be > 0");
  ExpectError(R"({"backends": [{"pool": "x"}]})", "'backends[0].url' is required");
  ExpectError(R"({"backends": {"url": "x"}})", "'backends' must be an array");
  ExpectError(R"({"forward_authorization": "yes"})", "'forward_authorization' must be true or false");
  ExpectError(R"({"ejection": {"max_error_rate": -1}})", "'ejection.max_error_rate'");
  ExpectError(R"({"pools": {"a": {"models": "m"}}})", "'pools.a.models' must be an array");
  ExpectError(R"([1, 2])", "must be an object");
}

TEST(RouteConfigTest, ValidateCatchesUndeclaredPoolsAndBadRanges) {
  StatusOr<RouteConfig> config = Parse(R"({"backends": [{"url": "http://a:1", "pool": "nope"}]})");
  ASSERT_TRUE(config.ok());
  Status status = ValidateRouteConfig(*config);
  EXPECT_NE(status.message().find("'nope'"), std::string::npos) << status.ToString();
  config = Parse(R"({"listen": {"port": 70000}})");
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(ValidateRouteConfig(*config).ok());
}

// cache.semantic.embeddings_spawn: the router serves the encoder itself; with a URL too it
// is refused, naming both.
TEST(RouteConfigTest, SemanticEmbeddingsSpawn) {
  StatusOr<RouteConfig> config = Parse(R"({"backends": [{"url": "http://a:1"}], "cache": {"backend": "memory",
      "semantic": {"all": true, "embeddings_spawn": "models/all-MiniLM-L6-v2"}}})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->cache.semantic.embeddings_spawn, "models/all-MiniLM-L6-v2");
  EXPECT_TRUE(config->cache.semantic.on());
  EXPECT_TRUE(ValidateRouteConfig(*config).ok());
  EXPECT_DOUBLE_EQ(config->cache.semantic.threshold, 0.94);  // the default, chosen with MiniLM
  config->cache.semantic.embeddings_url = "http://127.0.0.1:9/v1";
  const Status both = ValidateRouteConfig(*config);
  EXPECT_NE(both.message().find("--embeddings-spawn"), std::string::npos) << both.ToString();
}

TEST(RouteConfigTest, CacheSection) {
  StatusOr<RouteConfig> config = Parse(R"({"cache": {"backend": "redis://127.0.0.1:6379/2", "ttl_s": 60,
                                                     "max_entry_bytes": 4096, "redis_pool": 2, "redis_timeout_ms": 50}})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->cache.on());
  EXPECT_TRUE(config->cache.is_redis());
  EXPECT_EQ(config->cache.ttl_s, 60);
  EXPECT_EQ(config->cache.max_entry_bytes, 4096);
  EXPECT_EQ(config->cache.redis_pool, 2);
  EXPECT_EQ(config->cache.redis_timeout_ms, 50);
  EXPECT_FALSE(config->cache.max_bytes.has_value());  // unset: the memory default, and not refused with redis
  EXPECT_FALSE(Parse("{}")->cache.on());
  EXPECT_EQ(Parse(R"({"cache": {"max_entries": 0}})").status().message(),
            "config key 'cache.max_entries' must be >= 1");
  EXPECT_EQ(Parse(R"({"cache": {"ttl": 5}})").status().message(), "unknown config key 'cache.ttl'");
}

TEST(RouteConfigTest, LayersOverABaseAndReadsFiles) {
  RouteConfig base;
  base.port = 1234;
  base.retry.max_retries = 9;
  StatusOr<RouteConfig> config = RouteConfigFromJson(Json::parse(R"({"retry": {"backoff_base_ms": 1}})"), base);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->port, 1234);
  EXPECT_EQ(config->retry.max_retries, 9);
  EXPECT_EQ(config->retry.backoff_base_ms, 1);

  const std::string path = ::testing::TempDir() + "/route_config_test.json";
  std::ofstream(path) << R"({"listen": {"port": 4321}})";
  config = LoadRouteConfigFile(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->port, 4321);
  std::ofstream(path) << "{not json";
  EXPECT_NE(LoadRouteConfigFile(path).status().message().find(path), std::string::npos);
  std::ofstream(path) << R"({"listen": {"prot": 1}})";
  EXPECT_NE(LoadRouteConfigFile(path).status().message().find("'listen.prot'"), std::string::npos);
  EXPECT_EQ(LoadRouteConfigFile(path + ".missing").status().code(), StatusCode::kNotFound);
  std::remove(path.c_str());
}

TEST(RouteConfigTest, FlagSpecs) {
  StatusOr<BackendConfig> backend = ParseBackendSpec("http://127.0.0.1:8001,pool=big,weight=3");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ(backend->url, "http://127.0.0.1:8001");
  EXPECT_EQ(backend->pool, "big");
  EXPECT_DOUBLE_EQ(backend->weight, 3);
  EXPECT_EQ(ParseBackendSpec("http://a:1").value().pool, kDefaultPool);
  EXPECT_NE(ParseBackendSpec("http://a:1,color=red").status().message().find("'color'"), std::string::npos);
  EXPECT_NE(ParseBackendSpec("http://a:1,weight=-1").status().message().find("weight"), std::string::npos);
  EXPECT_FALSE(ParseBackendSpec(",pool=x").ok());

  RouteConfig config;
  ASSERT_TRUE(ApplyPoolSpec("big,policy=session,models=a|b", &config).ok());
  EXPECT_EQ(config.pools.at("big").policy, "session");
  EXPECT_EQ(config.pools.at("big").models, (std::vector<std::string>{"a", "b"}));
  EXPECT_NE(ApplyPoolSpec("big,size=3", &config).message().find("'size'"), std::string::npos);
}

}  // namespace
}  // namespace surge::router
