// Tier: where a request's tier comes from, in which order, the errors, and what is forwarded.
#include "router/tiers/tier.h"

#include <gtest/gtest.h>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/generation_params.h"

namespace surge::router {
namespace {

using nlohmann::json;

Tier Resolve(std::string_view header, const json& body, std::optional<Tier> key_default = {}) {
  api::ApiResult<Tier> result = ResolveTier(header, body, key_default);
  EXPECT_TRUE(result.ok()) << result.error().status.ToString();
  return result.ok() ? *result : Tier::kNormal;
}

TEST(TierTest, NamesRoundTrip) {
  for (Tier tier : kAllTiers) EXPECT_EQ(ParseTierName(TierName(tier)), tier);
  EXPECT_EQ(ParseTierName("Realtime"), std::nullopt);
  EXPECT_EQ(ParseTierName("-1"), std::nullopt);  // config names tiers by name only
}

TEST(TierTest, PriorityMeansWhatTheEngineMeans) {
  EXPECT_EQ(TierOfPriority(-1), Tier::kRealtime);
  EXPECT_EQ(TierOfPriority(0), Tier::kNormal);
  EXPECT_EQ(TierOfPriority(1), Tier::kBatch);
  EXPECT_EQ(Resolve("", json{{"priority", -3}}), Tier::kRealtime);
  EXPECT_EQ(Resolve("", json{{"priority", 7}}), Tier::kBatch);
  EXPECT_EQ(Resolve("", json{{"priority", "batch"}}), Tier::kBatch);
  EXPECT_EQ(Resolve("", json{{"priority", "-2"}}), Tier::kRealtime);  // the engine accepts it too
  EXPECT_EQ(Resolve("", json{{"priority", 0}}), Tier::kNormal);
}

TEST(TierTest, HeaderThenBodyThenKeyThenNormal) {
  const json body = {{"priority", "batch"}};
  EXPECT_EQ(Resolve("realtime", body, Tier::kNormal), Tier::kRealtime);
  EXPECT_EQ(Resolve("5", json::object(), Tier::kRealtime), Tier::kBatch);
  EXPECT_EQ(Resolve(" batch\t", json::object()), Tier::kBatch);
  EXPECT_EQ(Resolve("  ", body), Tier::kBatch);  // blank: as if absent
  EXPECT_EQ(Resolve("", body, Tier::kRealtime), Tier::kBatch);
  EXPECT_EQ(Resolve("", json::object(), Tier::kRealtime), Tier::kRealtime);
  EXPECT_EQ(Resolve("", json{{"priority", nullptr}}, Tier::kBatch), Tier::kBatch);
  EXPECT_EQ(Resolve("", json::object()), Tier::kNormal);
  EXPECT_EQ(Resolve("", json::array()), Tier::kNormal);  // not an object: the parser's 400, not ours
}

TEST(TierTest, UnknownValuesNameTheFieldAndTheAllowedValues) {
  struct Case {
    std::string header;
    json body;
    std::string field;
  };
  const Case cases[] = {
      {"urgent", json::object(), "X-Priority"},
      {"", json{{"priority", "urgent"}}, "priority"},
      {"", json{{"priority", 1.5}}, "priority"},
      {"", json{{"priority", true}}, "priority"},
      {"", json{{"priority", int64_t{1} << 40}}, "priority"},
      {"", json{{"priority", uint64_t{1} << 63}}, "priority"},
  };
  for (const Case& c : cases) {
    api::ApiResult<Tier> result = ResolveTier(c.header, c.body, std::nullopt);
    ASSERT_FALSE(result.ok()) << c.body.dump();
    EXPECT_EQ(result.error().status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(result.error().param, "priority");
    const std::string& message = result.error().status.message();
    EXPECT_NE(message.find(c.field), std::string::npos) << message;
    EXPECT_NE(message.find("\"realtime\", \"normal\", \"batch\""), std::string::npos) << message;
    EXPECT_EQ(api::MakeErrorReply(result.error()).http_status, 400);
  }
}

TEST(TierTest, ForwardsTheTierOnlyWhenTheBodyHasNoPriority) {
  json body = {{"prompt", "hi"}};
  EXPECT_TRUE(ForwardTier(Tier::kRealtime, &body));
  EXPECT_EQ(body["priority"], "realtime");
  json explicit_body = {{"priority", 3}};
  EXPECT_FALSE(ForwardTier(Tier::kRealtime, &explicit_body));
  EXPECT_EQ(explicit_body["priority"], 3);
  json null_body = {{"priority", nullptr}};
  EXPECT_TRUE(ForwardTier(Tier::kBatch, &null_body));
  EXPECT_EQ(null_body["priority"], "batch");
  json not_object = json::array();
  EXPECT_FALSE(ForwardTier(Tier::kBatch, &not_object));
}

// OpenAI's service_tier, below the header and `priority`; forwarded as written, it parses in
// the engine to the same tier (and the engine echoes it).
TEST(TierTest, ServiceTierNamesATier) {
  EXPECT_EQ(Resolve("", json{{"service_tier", "priority"}}), Tier::kRealtime);
  EXPECT_EQ(Resolve("", json{{"service_tier", "flex"}}, Tier::kRealtime), Tier::kBatch);
  EXPECT_EQ(Resolve("", json{{"service_tier", "auto"}}, Tier::kBatch), Tier::kNormal);
  EXPECT_EQ(Resolve("", json{{"service_tier", "default"}}), Tier::kNormal);
  EXPECT_EQ(Resolve("", json{{"service_tier", "flex"}, {"priority", "realtime"}}), Tier::kRealtime);
  EXPECT_EQ(Resolve("batch", json{{"service_tier", "priority"}}), Tier::kBatch);
  const api::ApiResult<Tier> bad = ResolveTier("", json{{"service_tier", "scale"}}, std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().param, "service_tier");
  json body = {{"prompt", "hi"}, {"service_tier", "flex"}};
  EXPECT_FALSE(ForwardTier(Tier::kBatch, &body));
  api::ApiResult<api::CompletionRequest> parsed = api::ParseCompletionRequest(body.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().status.ToString();
  EXPECT_STREQ(api::PriorityTier(parsed->params.priority), "batch");
  EXPECT_EQ(parsed->params.service_tier, "flex");
}

// What the router forwards parses, with the engine's own request parser, to the priority
// the engine schedules by -- and the engine's tier for it is the router's.
TEST(TierTest, TheEngineReadsTheForwardedTier) {
  for (Tier tier : kAllTiers) {
    json completion = {{"model", "m"}, {"prompt", "hi"}, {"max_tokens", 4}};
    ASSERT_TRUE(ForwardTier(tier, &completion));
    api::ApiResult<api::CompletionRequest> parsed = api::ParseCompletionRequest(completion.dump());
    ASSERT_TRUE(parsed.ok()) << parsed.error().status.ToString();
    EXPECT_STREQ(api::PriorityTier(parsed->params.priority), TierName(tier));
    json chat = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    ASSERT_TRUE(ForwardTier(tier, &chat));
    api::ApiResult<api::ChatCompletionRequest> chat_parsed = api::ParseChatCompletionRequest(chat.dump());
    ASSERT_TRUE(chat_parsed.ok()) << chat_parsed.error().status.ToString();
    EXPECT_STREQ(api::PriorityTier(chat_parsed->params.priority), TierName(tier));
  }
  EXPECT_EQ(api::ParsePriority(TierName(Tier::kRealtime)), api::kRealtimePriority);
}

}  // namespace
}  // namespace surge::router
