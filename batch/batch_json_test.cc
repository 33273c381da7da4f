#include "batch/batch_json.h"

#include <gtest/gtest.h>

#include "base/json_access.h"

namespace surge::batch {
namespace {

BatchLine Line() { return {7, "req-7", "/v1/completions", R"({"prompt":"x"})"}; }

TEST(BatchJsonTest, BatchObjectHasOpenAisFieldsAndRoundTrips) {
  BatchRecord batch{.id = "batch_1", .endpoint = "/v1/completions", .input_file_id = "file-1"};
  batch.created_at = 100;
  batch.expires_at = 100 + 86400;
  batch.errors.push_back({"duplicate_custom_id", "custom_id 'a' appears more than once", "custom_id", 3});
  batch.metadata_json = R"({"k":"v"})";
  batch.request_counts = {3, 1, 1};
  const Json json = BatchJson(batch);
  for (const char* key : {"id", "object", "endpoint", "errors", "input_file_id", "completion_window", "status",
                          "output_file_id", "error_file_id", "created_at", "in_progress_at", "expires_at", "finalizing_at",
                          "completed_at", "failed_at", "expired_at", "cancelling_at", "cancelled_at", "request_counts",
                          "metadata"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["object"], "batch");
  EXPECT_EQ(json["status"], "validating");
  EXPECT_TRUE(json["output_file_id"].is_null());
  EXPECT_TRUE(json["completed_at"].is_null());
  EXPECT_EQ(json["errors"]["object"], "list");
  EXPECT_EQ(json["errors"]["data"][0], Json::parse(R"({"code": "duplicate_custom_id", "line": 3, "param": "custom_id",
                                                       "message": "custom_id 'a' appears more than once"})"));
  EXPECT_EQ(json["request_counts"], Json::parse(R"({"total": 3, "completed": 1, "failed": 1})"));
  StatusOr<BatchRecord> back = BatchFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(BatchJson(*back), json);
  EXPECT_TRUE(BatchJson(BatchRecord{})["errors"].is_null());
}

TEST(BatchJsonTest, FileObject) {
  const Json json = FileJson({"file-a", 12, 99, "in.jsonl", "batch"});
  EXPECT_EQ(json, Json::parse(R"({"id": "file-a", "object": "file", "bytes": 12, "created_at": 99,
                                  "filename": "in.jsonl", "purpose": "batch", "status": "processed"})"));
}

TEST(BatchJsonTest, OutputLineOfASuccess) {
  LineResult result = MakeLineResult(Line(), "batch_1", {OkStatus(), 200, "req_abc", R"({"choices": []})"});
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.line_no, 7);
  const Json line = Json::parse(result.output_line);
  EXPECT_TRUE(line["id"].get<std::string>().starts_with("batch_req_"));
  EXPECT_EQ(line["custom_id"], "req-7");
  EXPECT_EQ(line["response"], Json::parse(R"({"status_code": 200, "request_id": "req_abc", "body": {"choices": []}})"));
  EXPECT_TRUE(line["error"].is_null());
}

TEST(BatchJsonTest, ErrorLinesOfAnHttpErrorATransportFailureAndAnUnrunLine) {
  const Json http_error = Json::parse(
      MakeLineResult(Line(), "b", {OkStatus(), 400, "r", R"({"error": {"message": "bad", "code": "x_code"}})"}).output_line);
  EXPECT_EQ(http_error["response"]["status_code"], 400);
  EXPECT_EQ(http_error["response"]["body"]["error"]["message"], "bad");
  EXPECT_EQ(http_error["error"], Json::parse(R"({"code": "x_code", "message": "bad"})"));
  LineResult failed = MakeLineResult(Line(), "b", {UnavailableError("connect refused"), 0, "", ""});
  EXPECT_FALSE(failed.ok);
  const Json transport = Json::parse(failed.output_line);
  EXPECT_TRUE(transport["response"].is_null());
  EXPECT_EQ(transport["error"]["code"], "request_failed");
  const Json not_json = Json::parse(MakeLineResult(Line(), "b", {OkStatus(), 502, "r", "oops"}).output_line);
  EXPECT_EQ(not_json["response"]["body"], "oops");
  EXPECT_EQ(not_json["error"]["code"], "http_502");
  const Json expired = Json::parse(MakeUnrunResult(Line(), "b", "batch_expired", "too late").output_line);
  EXPECT_EQ(expired["error"], Json::parse(R"({"code": "batch_expired", "message": "too late"})"));
  EXPECT_TRUE(expired["response"].is_null());
}

// An engine answer with invalid UTF-8, one nesting 200k deep and error fields of the wrong
// type: each becomes its line (text, U+FFFD), never an exception on the dispatcher's thread.
TEST(BatchJsonTest, OutsideAnswersNeverThrow) {
  const Json bad_utf8 = Json::parse(MakeLineResult(Line(), "b", {OkStatus(), 500, "r", "oops \xff"}).output_line);
  EXPECT_EQ(bad_utf8["response"]["body"], "oops \xEF\xBF\xBD");
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  const Json deep_line = Json::parse(MakeLineResult(Line(), "b", {OkStatus(), 200, "r", deep}).output_line);
  EXPECT_EQ(deep_line["response"]["body"].get<std::string>().size(), deep.size());
  const Json odd = Json::parse(
      MakeLineResult(Line(), "b", {OkStatus(), 400, "r", R"({"error": {"code": 5, "message": ["x"], "type": "t"}})"})
          .output_line);
  EXPECT_EQ(odd["error"], Json::parse(R"({"code": "t", "message": "the request was answered with HTTP 400"})"));
  EXPECT_EQ(Json::parse(MakeLineResult(Line(), "b", {OkStatus(), 400, "r", R"({"error": 1})"}).output_line)["error"]["code"],
            "http_400");
}

TEST(BatchJsonTest, AnUploadNamedInInvalidUtf8StillDumps) {
  EXPECT_NE(json::Dump(FileJson({"file-a", 1, 2, "in\xff.jsonl", "batch"})).find("in\xEF\xBF\xBD.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace surge::batch
