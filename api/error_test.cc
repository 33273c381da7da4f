// Status -> HTTP status and OpenAI's error object.
#include "api/error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace surge::api {
namespace {

TEST(ErrorTest, StatusCodesMapToHttp) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kOutOfRange), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDataLoss), 500);
}

TEST(ErrorTest, BodyIsOpenAiShaped) {
  ErrorReply reply = MakeErrorReply(InvalidParam("max_tokens", "max_tokens must be >= 1"));
  EXPECT_EQ(reply.http_status, 400);
  EXPECT_EQ(reply.body,
            R"({"error":{"message":"max_tokens must be >= 1","type":"invalid_request_error",)"
            R"("param":"max_tokens","code":null}})");
  ErrorReply not_found = MakeErrorReply(ApiError{NotFoundError("no model x"), "model", "model_not_found"});
  EXPECT_EQ(not_found.http_status, 404);
  auto body = nlohmann::json::parse(not_found.body);
  EXPECT_EQ(body["error"]["code"], "model_not_found");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  ErrorReply busy = MakeErrorReply(ResourceExhaustedError("queue full"));
  EXPECT_EQ(busy.http_status, 429);
  EXPECT_EQ(nlohmann::json::parse(busy.body)["error"]["param"], nullptr);
  EXPECT_EQ(MakeErrorReply(UnavailableError("draining")).http_status, 503);
  ErrorReply timeout = MakeErrorReply(Status(StatusCode::kDeadlineExceeded, "the request's timeout of 2 s passed"));
  EXPECT_EQ(timeout.http_status, 504);
  EXPECT_EQ(nlohmann::json::parse(timeout.body)["error"]["type"], "timeout_error");
  EXPECT_EQ(nlohmann::json::parse(ErrorBody(413, "too big"))["error"]["message"], "too big");
}

TEST(ErrorTest, InvalidUtf8InMessagesNeverThrows) {
  ErrorReply reply = MakeErrorReply(InvalidParam("stop", "bad \xff byte"));
  EXPECT_TRUE(nlohmann::json::accept(reply.body));
}

}  // namespace
}  // namespace surge::api
