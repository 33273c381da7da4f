// Keys (canonical form, scoping, every output-changing field), cacheability and controls.
#include "router/cache/cache_request.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace surge::router {
namespace {

using Json = nlohmann::json;

const Json kChat = Json::parse(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0,
                                   "max_tokens": 8})");

std::string Key(const Json& body, std::string_view scope = "acme", std::string_view path = "/v1/chat/completions") {
  return ExactCacheKey(scope, path, body).value();
}

TEST(CacheKeyTest, FieldOrderAndNumberSpellingDoNotMatter) {
  const Json reordered = Json::parse(R"({"max_tokens": 8, "temperature": 0.0,
                                         "messages": [{"content": "hi", "role": "user"}], "model": "m"})");
  EXPECT_EQ(Key(kChat), Key(reordered));
  EXPECT_EQ(Key(kChat).size(), 64u);
}

TEST(CacheKeyTest, FieldsOutsideTheKeyDoNotChangeIt) {
  Json body = kChat;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["user"] = "u1";
  body["priority"] = "batch";
  body["timeout"] = 30;
  EXPECT_EQ(Key(kChat), Key(body));
}

TEST(CacheKeyTest, EveryOutputChangingFieldChangesIt) {
  const std::pair<const char*, Json> changes[] = {
      {"model", "other"},      {"max_tokens", 9},          {"temperature", 0.5},       {"seed", 1},
      {"top_p", 0.9},          {"top_k", 5},               {"stop", Json::array({"."})}, {"n", 2},
      {"logprobs", true},      {"presence_penalty", 0.1},  {"response_format", {{"type", "json_object"}}},
      {"tools", Json::array()}, {"logit_bias", {{"1", 5}}}, {"ignore_eos", true}};
  for (const auto& [field, value] : changes) {
    Json body = kChat;
    body[field] = value;
    EXPECT_NE(Key(kChat), Key(body)) << field;
  }
  Json message = kChat;
  message["messages"][0]["content"] = "hi!";
  EXPECT_NE(Key(kChat), Key(message));
}

TEST(CacheKeyTest, ScopedByTenantAndPath) {
  EXPECT_NE(Key(kChat, "acme"), Key(kChat, "globex"));
  EXPECT_NE(Key(kChat, "acme", "/v1/chat/completions"), Key(kChat, "acme", "/v1/completions"));
  // The length prefixes: no scope/path split reads two ways.
  EXPECT_NE(Key(kChat, "a", "b/v1"), Key(kChat, "ab", "/v1"));
}

TEST(CacheKeyTest, ClientModelNameReplacesAnAliasRewrite) {
  Json rewritten = kChat;
  rewritten.erase("model");
  EXPECT_EQ(ExactCacheKey("acme", "/v1/chat/completions", rewritten, "m"), Key(kChat));
}

TEST(CacheKeyTest, TooDeepIsNotCached) {
  Json deep = 1;
  for (int i = 0; i < 100; ++i) deep = Json::array({deep});
  Json body = kChat;
  body["messages"][0]["content"] = deep;
  EXPECT_FALSE(ExactCacheKey("acme", "/v1/chat/completions", body).has_value());
}

TEST(CacheabilityTest, GreedyOrSeededOnly) {
  EXPECT_EQ(UncacheableReason(kChat), nullptr);
  Json body = kChat;
  body.erase("temperature");  // the engine's default is 1: sampling
  EXPECT_STREQ(UncacheableReason(body), "sampling");
  body["temperature"] = 0.8;
  EXPECT_STREQ(UncacheableReason(body), "sampling");
  body["n"] = 3;
  EXPECT_STREQ(UncacheableReason(body), "sampling");
  body["seed"] = 7;
  EXPECT_EQ(UncacheableReason(body), nullptr);
  EXPECT_STREQ(UncacheableReason(Json()), "not_json");
  EXPECT_TRUE(IsCachedPath("/v1/completions"));
  EXPECT_FALSE(IsCachedPath("/v1/embeddings"));
}

TEST(CacheControlTest, HeaderDirectives) {
  CacheControl control;
  ApplyCacheControlHeader("No-Cache", &control);
  EXPECT_TRUE(control.no_cache);
  EXPECT_FALSE(control.no_store);
  control = {};
  ApplyCacheControlHeader("private, no-store , max-age=0", &control);
  EXPECT_TRUE(control.no_cache);
  EXPECT_TRUE(control.no_store);
}

TEST(CacheControlTest, BodyFieldIsTakenOut) {
  Json body = kChat;
  body["cache"] = {{"no_store", true}, {"ttl_s", 60}};
  CacheControl control;
  ASSERT_TRUE(TakeCacheBodyField(&body, &control).ok());
  EXPECT_FALSE(body.contains("cache"));
  EXPECT_TRUE(control.no_store);
  EXPECT_FALSE(control.no_cache);
  EXPECT_EQ(control.ttl_s, 60);
}

TEST(CacheControlTest, BadBodyFieldsAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"cache": {"no_cahce": true}})", "cache.no_cahce"},
      {R"({"cache": {"ttl_s": 0}})", "cache.ttl_s"},
      {R"({"cache": {"ttl_s": 1.5}})", "cache.ttl_s"},
      {R"({"cache": {"no_store": "yes"}})", "cache.no_store"},
      {R"({"cache": true})", "cache must be an object"}};
  for (const auto& [text, named] : cases) {
    Json body = Json::parse(text);
    CacheControl control;
    Status status = TakeCacheBodyField(&body, &control);
    ASSERT_FALSE(status.ok()) << text;
    EXPECT_NE(status.message().find(named), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace surge::router
