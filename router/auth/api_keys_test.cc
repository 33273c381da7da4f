// ApiKeyStore: file and environment formats, errors that name the entry and field (and never
// quote a key), and the Bearer check.
#include "router/auth/api_keys.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

namespace surge::router {
namespace {

constexpr char kTwoKeys[] = R"([
  {"key": "sk-acme-1", "tenant": "acme", "tier": "realtime", "requests_per_minute": 600,
   "tokens_per_minute": 100000},
  {"key": "sk-beta-2", "tenant": "beta"}
])";

ApiKeyStore MustParse(std::string_view text) {
  StatusOr<ApiKeyStore> store = ApiKeyStore::ParseJson(text, "keys.json");
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : ApiKeyStore();
}

std::string ParseError(std::string_view text) {
  StatusOr<ApiKeyStore> store = ApiKeyStore::ParseJson(text, "keys.json");
  EXPECT_FALSE(store.ok()) << text;
  if (store.ok()) return "";
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  return store.status().message();
}

TEST(ApiKeysTest, ParsesTheFileFormat) {
  const ApiKeyStore store = MustParse(kTwoKeys);
  ASSERT_EQ(store.size(), 2u);
  const ApiKeyInfo& acme = store.keys()[0];
  EXPECT_EQ(acme.id, 0);
  EXPECT_EQ(acme.tenant, "acme");
  EXPECT_EQ(acme.tier, Tier::kRealtime);
  EXPECT_EQ(acme.limits.requests_per_minute, 600);
  EXPECT_EQ(acme.limits.tokens_per_minute, 100000);
  const ApiKeyInfo& beta = store.keys()[1];
  EXPECT_EQ(beta.id, 1);
  EXPECT_EQ(beta.tier, Tier::kNormal);
  EXPECT_EQ(beta.limits.requests_per_minute, 0);  // unlimited
  EXPECT_EQ(MustParse(R"([{"key": "k"}])").keys()[0].tenant, kDefaultTenant);
}

TEST(ApiKeysTest, ErrorsNameTheEntryAndTheField) {
  struct Case {
    std::string text;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {R"([{"key": "k", "tokens_per_min": 5}])", {"keys.json[0]", "unknown field \"tokens_per_min\"", "tokens_per_minute"}},
      {R"([{"key": "a"}, {"tenant": "x"}])", {"keys.json[1].key is required"}},
      {R"([{"key": ""}])", {"keys.json[0].key must not be empty"}},
      {R"([{"key": "has space"}])", {"keys.json[0].key must be printable ASCII"}},
      {R"([{"key": "k", "tier": "gold"}])", {"keys.json[0].tier", "\"realtime\", \"normal\", \"batch\"", "gold"}},
      {R"([{"key": "k", "requests_per_minute": 0}])", {"keys.json[0].requests_per_minute must be an integer >= 1"}},
      {R"([{"key": "k", "tokens_per_minute": "many"}])", {"keys.json[0].tokens_per_minute"}},
      {R"([{"key": "k", "tokens_per_minute": 1.5}])", {"keys.json[0].tokens_per_minute"}},
      {R"([{"key": "k", "tenant": 7}])", {"keys.json[0].tenant must be a non-empty string"}},
      {R"([{"key": "k"}, {"key": "k"}])", {"keys.json[1].key is configured twice"}},
      {R"({"key": "k"})", {"keys.json: must be a JSON array"}},
      {R"([])", {"keys.json: holds no keys"}},
      {R"(["k"])", {"keys.json[0] must be an object"}},
  };
  for (const Case& c : cases) {
    const std::string message = ParseError(c.text);
    for (const std::string& part : c.expected) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TEST(ApiKeysTest, AdminFlag) {
  StatusOr<ApiKeyStore> store = ApiKeyStore::ParseJson(R"([{"key": "a", "admin": true}, {"key": "b"}])", "keys.json");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(store->keys()[0].admin);
  EXPECT_FALSE(store->keys()[1].admin);
  EXPECT_EQ(ApiKeyStore::ParseJson(R"([{"key": "a", "admin": "yes"}])", "keys.json").status().message(),
            "keys.json[0].admin must be true or false");
}

TEST(ApiKeysTest, BadJsonDoesNotQuoteTheKeys) {
  const std::string message = ParseError(R"([{"key": "sk-secret-123" "tenant": "x"}])");
  EXPECT_NE(message.find("keys.json: not valid JSON"), std::string::npos) << message;
  EXPECT_EQ(message.find("secret"), std::string::npos) << message;
}

TEST(ApiKeysTest, EnvironmentTakesJsonOrACommaList) {
  StatusOr<ApiKeyStore> list = ApiKeyStore::FromEnvValue(" k1, k2 ,k3 ");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(list->keys()[2].tenant, kDefaultTenant);
  EXPECT_TRUE(list->Authenticate("Bearer k2").ok());
  EXPECT_FALSE(list->Authenticate("Bearer  k2 x").ok());
  StatusOr<ApiKeyStore> json = ApiKeyStore::FromEnvValue(kTwoKeys);
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->size(), 2u);
  for (const char* bad : {"k1,,k2", "k1,", ""}) {
    StatusOr<ApiKeyStore> store = ApiKeyStore::FromEnvValue(bad);
    ASSERT_FALSE(store.ok()) << bad;
    EXPECT_NE(store.status().message().find("SURGE_ROUTE_API_KEYS item"), std::string::npos);
  }
  StatusOr<ApiKeyStore> bad_json = ApiKeyStore::FromEnvValue(R"([{"key": "k", "rpm": 1}])");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_NE(bad_json.status().message().find("SURGE_ROUTE_API_KEYS[0]: unknown field \"rpm\""),
            std::string::npos);
}

class ApiKeysFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "surge_keys_" + std::to_string(::getpid()) + ".json";
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void Write(std::string_view text) { std::ofstream(path_) << text; }
  std::string path_;
};

TEST_F(ApiKeysFileTest, LoadsTheFileAndMergesTheEnvironment) {
  Write(kTwoKeys);
  StatusOr<ApiKeyStore> store = ApiKeyStore::Load(path_, "sk-env-3");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_EQ(store->size(), 3u);
  const AuthDecision env_key = store->Authenticate("Bearer sk-env-3");
  ASSERT_TRUE(env_key.ok());
  EXPECT_EQ(env_key.key->id, 2);
  StatusOr<ApiKeyStore> duplicate = ApiKeyStore::Load(path_, "sk-beta-2");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.status().message().find("also in the keys file"), std::string::npos);
  EXPECT_TRUE(ApiKeyStore::Load("", nullptr)->open());
  Write(R"([{"key": "k", "tier": "fast"}])");
  StatusOr<ApiKeyStore> bad = ApiKeyStore::Load(path_, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path_ + "[0].tier"), std::string::npos);
  StatusOr<ApiKeyStore> missing = ApiKeyStore::FromFile(path_ + ".absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(".absent"), std::string::npos);
}

TEST(ApiKeysTest, OpenWhenNoKeys) {
  const ApiKeyStore store;
  const AuthDecision decision = store.Authenticate("");
  EXPECT_TRUE(decision.ok());
  EXPECT_EQ(decision.key, nullptr);
}

TEST(ApiKeysTest, BearerMustNameAConfiguredKey) {
  const ApiKeyStore store = MustParse(kTwoKeys);
  const AuthDecision acme = store.Authenticate("Bearer sk-acme-1");
  ASSERT_TRUE(acme.ok()) << acme.error;
  EXPECT_EQ(acme.key->tenant, "acme");
  const AuthDecision beta = store.Authenticate("bearer   sk-beta-2 ");
  ASSERT_TRUE(beta.ok()) << beta.error;
  EXPECT_EQ(beta.key->tenant, "beta");
  for (const char* bad : {"", "sk-acme-1", "Basic sk-acme-1", "Bearer", "Bearer ", "Bearer sk-acme-",
                          "Bearer sk-acme-12", "Bearer sk-acme-2", "Bearersk-acme-1", "Bearer SK-ACME-1"}) {
    const AuthDecision decision = store.Authenticate(bad);
    EXPECT_FALSE(decision.ok()) << bad;
    EXPECT_EQ(decision.key, nullptr);
    const api::ErrorReply reply = AuthErrorReply(decision);
    EXPECT_EQ(reply.http_status, 401);
    const nlohmann::json body = nlohmann::json::parse(reply.body);
    EXPECT_EQ(body["error"]["code"], "invalid_api_key");
    EXPECT_EQ(body["error"]["type"], "invalid_request_error");
    EXPECT_EQ(reply.body.find("sk-acme"), std::string::npos) << reply.body;  // never echoed
  }
  EXPECT_NE(store.Authenticate("").error.find("Missing API key"), std::string::npos);
  EXPECT_NE(store.Authenticate("Bearer nope").error.find("Incorrect API key"), std::string::npos);
}

}  // namespace
}  // namespace surge::router
