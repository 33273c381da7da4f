// Which requests the semantic cache looks up, their scope (everything but the last user
// message) and their query text.
#include "router/cache/semantic_request.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace surge::router {
namespace {

using Json = nlohmann::json;
constexpr char kChat[] = "/v1/chat/completions";

Json Chat(const std::string& question, const std::string& system = "Be brief.") {
  return {{"model", "m"}, {"temperature", 0}, {"max_tokens", 16},
          {"messages", {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", question}}}}};
}

SemanticQuery Query(const Json& body, const std::string& tenant = "acme") {
  std::optional<SemanticQuery> query = SemanticQueryFor(tenant, kChat, body, "");
  EXPECT_TRUE(query.has_value());
  return query.value_or(SemanticQuery{});
}

TEST(SemanticRequestTest, QueryIsTheLastUserMessageAndScopeIsTheRest) {
  const SemanticQuery a = Query(Chat("  How do I   reset my password? "));
  EXPECT_EQ(a.text, "How do I reset my password?");
  EXPECT_EQ(a.embed_input, "how do i reset my password");
  EXPECT_EQ(a.model, "m");
  EXPECT_EQ(a.scope.tenant, "acme");
  EXPECT_EQ(Query(Chat("Something else entirely")).scope.digest, a.scope.digest);  // the question is not the scope
  EXPECT_NE(Query(Chat("How do I reset my password?", "Be verbose.")).scope.digest, a.scope.digest);
  EXPECT_NE(Query(Chat("How do I reset my password?"), "beta").scope.digest, a.scope.digest);
  Json other_params = Chat("How do I reset my password?");
  other_params["max_tokens"] = 32;
  EXPECT_NE(Query(other_params).scope.digest, a.scope.digest);
  Json other_model = Chat("How do I reset my password?");
  other_model["model"] = "n";
  EXPECT_NE(Query(other_model).scope.digest, a.scope.digest);
  Json streamed = Chat("How do I reset my password?");  // transport is outside the scope, as outside the key
  streamed["stream"] = true;
  EXPECT_EQ(Query(streamed).scope.digest, a.scope.digest);
}

TEST(SemanticRequestTest, TextPartsAreJoined) {
  Json body = Chat("");
  body["messages"][1]["content"] = Json::array({{{"type", "text"}, {"text", "Hello"}}, {{"type", "text"}, {"text", "there"}}});
  EXPECT_EQ(Query(body).text, "Hello there");
}

TEST(SemanticRequestTest, IneligibleRequestsSayWhy) {
  EXPECT_STREQ(SemanticIneligibleReason("/v1/completions", Json{{"prompt", "x"}}), "not_chat");
  Json tool_result = Chat("x");
  tool_result["messages"].push_back({{"role", "tool"}, {"tool_call_id", "1"}, {"content", "42"}});
  EXPECT_STREQ(SemanticIneligibleReason(kChat, tool_result), "last_not_user");
  Json tools = Chat("x");
  tools["tools"] = Json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}});
  EXPECT_STREQ(SemanticIneligibleReason(kChat, tools), "tools");
  Json image = Chat("");
  image["messages"][1]["content"] = Json::array({{{"type", "image_url"}, {"image_url", {{"url", "data:"}}}}});
  EXPECT_STREQ(SemanticIneligibleReason(kChat, image), "multimodal");
  EXPECT_STREQ(SemanticIneligibleReason(kChat, Chat(" ?! ")), "empty");
  EXPECT_STREQ(SemanticIneligibleReason(kChat, Json{{"messages", Json::array()}}), "empty");
  EXPECT_EQ(SemanticIneligibleReason(kChat, Chat("ok")), nullptr);
  EXPECT_FALSE(SemanticQueryFor("acme", kChat, tools, "").has_value());
}

}  // namespace
}  // namespace surge::router
