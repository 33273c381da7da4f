#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "queue/amqp_url.h"
#include "queue/dedup_window.h"
#include "queue/queue_message.h"

namespace surge::queue {
namespace {

TEST(AmqpUrlTest, ParsesEveryPart) {
  StatusOr<AmqpUrl> url = ParseAmqpUrl("amqp://bob:s%40cret@broker.local:5673/prod");
  ASSERT_TRUE(url.ok()) << url.status().message();
  EXPECT_EQ(url->host, "broker.local");
  EXPECT_EQ(url->port, 5673);
  EXPECT_EQ(url->user, "bob");
  EXPECT_EQ(url->password, "s@cret");
  EXPECT_EQ(url->vhost, "prod");
}

TEST(AmqpUrlTest, DefaultsAndRefusals) {
  StatusOr<AmqpUrl> url = ParseAmqpUrl("amqp://localhost");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port, 5672);
  EXPECT_EQ(url->user, "guest");
  EXPECT_EQ(url->vhost, "/");
  EXPECT_EQ(ParseAmqpUrl("amqp://localhost/")->vhost, "/");
  EXPECT_EQ(ParseAmqpUrl("amqp://localhost/%2f")->vhost, "/");
  EXPECT_FALSE(ParseAmqpUrl("amqps://localhost").ok());
  EXPECT_FALSE(ParseAmqpUrl("http://localhost").ok());
  EXPECT_FALSE(ParseAmqpUrl("amqp://host:notaport").ok());
}

QueueMessage Message(std::string body) {
  return {.message_id = "m1", .correlation_id = "c1", .reply_to = "replies", .endpoint = "", .body = std::move(body)};
}

TEST(ValidateMessageTest, AcceptsARequest) {
  StatusOr<QueueRequest> r = ValidateMessage(Message(R"({"model": "x", "max_tokens": 2})"), "/v1/completions");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->key, "m1");
  EXPECT_EQ(r->url, "/v1/completions");
  EXPECT_EQ(r->body, R"({"model":"x","max_tokens":2})");
  QueueMessage no_id = Message("{}");
  no_id.message_id = "";
  no_id.endpoint = "/v1/embeddings";
  r = ValidateMessage(no_id, "/v1/completions");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->key, "c1");
  EXPECT_EQ(r->url, "/v1/embeddings");
}

TEST(ValidateMessageTest, RefusesPoison) {
  EXPECT_FALSE(ValidateMessage(Message("not json"), "/v1/completions").ok());
  EXPECT_FALSE(ValidateMessage(Message("[1]"), "/v1/completions").ok());
  EXPECT_FALSE(ValidateMessage(Message(R"({"stream": true})"), "/v1/completions").ok());
  EXPECT_FALSE(ValidateMessage(Message(std::string(100, '[')), "/v1/completions").ok());
  QueueMessage m = Message("{}");
  m.endpoint = "/v1/models";
  EXPECT_FALSE(ValidateMessage(m, "/v1/completions").ok());
  m = Message("{}");
  m.header_error = "the x-surge-endpoint header must be a string";
  EXPECT_EQ(ValidateMessage(m, "/v1/completions").status().message(), m.header_error);
  m = Message("{}");
  m.reply_to = "";
  EXPECT_FALSE(ValidateMessage(m, "/v1/completions").ok());
  m = Message("{}");
  m.correlation_id = "";
  EXPECT_FALSE(ValidateMessage(m, "/v1/completions").ok());
}

// Issue 31: a "stream" of the wrong type threw inside OnDelivery; now it is poison, with the
// field named (the consumer dead-letters it).
TEST(ValidateMessageTest, WrongTypesArePoisonNamingTheField) {
  for (const char* body : {R"({"stream":"yes"})", R"({"stream":1})", R"({"stream":{}})"}) {
    StatusOr<QueueRequest> r = ValidateMessage(Message(body), "/v1/completions");
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("stream must be a boolean"), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(ValidateMessage(Message(R"({"stream":false})"), "/v1/completions").ok());
  EXPECT_FALSE(ValidateMessage(Message(std::string(200'000, '[') + std::string(200'000, ']')), "/v1/completions").ok());
}

// An answer that is not JSON and holds invalid UTF-8, or nests 200k deep, is passed on as
// text (it threw in dump() / overflowed the stack on the dispatcher's thread).
TEST(ReplyBodyTest, InvalidUtf8AndDeepAnswersBecomeText) {
  const nlohmann::json bad = nlohmann::json::parse(ReplyBody(500, "oops \xff\xfe end", ""));
  EXPECT_EQ(bad["body"], "oops \xEF\xBF\xBD\xEF\xBF\xBD end");
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  const std::string reply = ReplyBody(200, deep, "");
  EXPECT_EQ(nlohmann::json::parse(reply)["body"].get<std::string>().size(), deep.size());
  EXPECT_TRUE(nlohmann::json::parse(ReplyBody(0, "", "refused \xc3"))["status_code"].is_null());
}

TEST(ReplyBodyTest, Shapes) {
  EXPECT_EQ(nlohmann::json::parse(ReplyBody(200, R"({"a":1})", "")),
            nlohmann::json::parse(R"({"status_code":200,"body":{"a":1}})"));
  EXPECT_EQ(nlohmann::json::parse(ReplyBody(502, "oops", ""))["body"], "oops");
  EXPECT_TRUE(nlohmann::json::parse(ReplyBody(0, "", "refused"))["status_code"].is_null());
}

TEST(DedupWindowTest, RunningThenDoneThenForgotten) {
  DedupWindow window(/*ttl_ms=*/1000, /*max_entries=*/10);
  EXPECT_EQ(window.Find("k", 0), nullptr);
  window.StartRunning("k", {.reply_to = "r", .correlation_id = "c", .waiting = Delivery{7, 1}});
  ASSERT_NE(window.Find("k", 5000), nullptr);  // running keys never expire
  EXPECT_FALSE(window.Find("k", 5000)->done);
  DedupEntry* done = window.MarkDone("k", "reply", 5000);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->waiting->tag, 7u);
  EXPECT_EQ(window.MarkDone("k", "again", 5000), nullptr);  // done once
  ASSERT_NE(window.Find("k", 5999), nullptr);
  EXPECT_EQ(window.Find("k", 5999)->reply, "reply");
  EXPECT_EQ(window.Find("k", 6000), nullptr);
}

TEST(DedupWindowTest, MaxEntriesDropsOldestDone) {
  DedupWindow window(/*ttl_ms=*/1'000'000, /*max_entries=*/2);
  for (std::string key : {"a", "b", "c"}) {
    window.StartRunning(key, {});
    window.MarkDone(key, key, 0);
  }
  window.StartRunning("running", {});
  EXPECT_EQ(window.Find("a", 0), nullptr);
  EXPECT_NE(window.Find("b", 0), nullptr);
  EXPECT_NE(window.Find("c", 0), nullptr);
  EXPECT_NE(window.Find("running", 0), nullptr);
  // A key forgotten and run again counts from its new time.
  window.StartRunning("a", {});
  window.MarkDone("a", "a2", 10);
  EXPECT_EQ(window.Find("a", 10)->reply, "a2");
  EXPECT_EQ(window.size(), 3u);  // c, a and running: b went when a came back
}

}  // namespace
}  // namespace surge::queue
