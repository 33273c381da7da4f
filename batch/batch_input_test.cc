#include "batch/batch_input.h"

#include <gtest/gtest.h>

namespace surge::batch {
namespace {

std::string Line(std::string custom_id, std::string url = "/v1/completions", std::string body = R"({"prompt":"x"})") {
  return R"({"custom_id": ")" + custom_id + R"(", "method": "POST", "url": ")" + url + R"(", "body": )" + body + "}";
}

TEST(BatchInputTest, ValidLinesKeepOrderAndBody) {
  const std::string jsonl = Line("a") + "\n\n" + Line("b", "/v1/completions", R"({"prompt":"y","max_tokens":3})") + "\r\n";
  ParsedBatchInput parsed = ParseBatchInput(jsonl, "/v1/completions");
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors[0].message;
  ASSERT_EQ(parsed.lines.size(), 2u);
  EXPECT_EQ(parsed.lines[0].line_no, 1);
  EXPECT_EQ(parsed.lines[1].line_no, 3) << "blank lines keep their numbers";
  EXPECT_EQ(parsed.lines[1].custom_id, "b");
  EXPECT_EQ(parsed.lines[1].body, R"({"prompt":"y","max_tokens":3})");
}

TEST(BatchInputTest, EachProblemIsAnErrorWithItsLineAndCode) {
  struct Case {
    std::string line;
    std::string code;
    std::string param;
  };
  const std::vector<Case> cases = {
      {"{not json", "invalid_json_line", ""},
      {"[1, 2]", "invalid_json_line", ""},
      {R"({"method": "POST", "url": "/v1/completions", "body": {}})", "missing_custom_id", "custom_id"},
      {R"({"custom_id": "", "method": "POST", "url": "/v1/completions", "body": {}})", "missing_custom_id", "custom_id"},
      {R"({"custom_id": "x", "method": "GET", "url": "/v1/completions", "body": {}})", "invalid_method", "method"},
      {Line("x", "/v1/images/generations"), "invalid_url", "url"},
      {Line("x", "/v1/chat/completions", R"({"messages": []})"), "mismatched_url", "url"},
      {Line("x", "/v1/completions", "[1]"), "invalid_body", "body"},
      {Line("x", "/v1/completions", R"({"prompt": "x", "stream": true})"), "invalid_body", "body.stream"},
      {R"({"custom_id": "x", "method": "POST", "url": "/v1/completions", "body": {}, "extra": 1})", "invalid_request", "extra"},
      // Values of the wrong type are errors of their line (they used to throw on the runner's
      // thread: issue 31, `"stream": 1` aborted surge route on every restart).
      {Line("x", "/v1/completions", R"({"prompt": "x", "stream": 1})"), "invalid_body", "body.stream"},
      {Line("x", "/v1/completions", R"({"prompt": "x", "stream": "yes"})"), "invalid_body", "body.stream"},
      {R"({"custom_id": 7, "method": "POST", "url": "/v1/completions", "body": {}})", "missing_custom_id", "custom_id"},
      {R"({"custom_id": "x", "method": 1, "url": "/v1/completions", "body": {}})", "invalid_method", "method"},
      {R"({"custom_id": "x", "method": "POST", "url": ["/v1/completions"], "body": {}})", "invalid_url", "url"},
      {R"({"custom_id": "x", "method": "POST", "url": "/v1/completions", "body": null})", "invalid_body", "body"},
  };
  for (const Case& c : cases) {
    ParsedBatchInput parsed = ParseBatchInput(Line("ok") + "\n" + c.line + "\n", "/v1/completions");
    ASSERT_EQ(parsed.errors.size(), 1u) << c.line;
    EXPECT_EQ(parsed.errors[0].code, c.code) << c.line;
    EXPECT_EQ(parsed.errors[0].param, c.param) << c.line;
    EXPECT_EQ(parsed.errors[0].line, 2) << c.line;
    EXPECT_TRUE(parsed.lines.empty()) << "one bad line fails the whole batch";
  }
}

TEST(BatchInputTest, WrongTypeErrorsNameTheField) {
  ParsedBatchInput parsed = ParseBatchInput(Line("x", "/v1/completions", R"({"prompt": "x", "stream": 1})"), "");
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_NE(parsed.errors[0].message.find("stream must be a boolean, got an integer"), std::string::npos)
      << parsed.errors[0].message;
  EXPECT_TRUE(ParseBatchInput(Line("x", "/v1/completions", R"({"prompt": "x", "stream": false})"), "").errors.empty());
}

TEST(BatchInputTest, DuplicateCustomIdsEmptyFilesAndLimits) {
  ParsedBatchInput duplicate = ParseBatchInput(Line("a") + "\n" + Line("b") + "\n" + Line("a"), "/v1/completions");
  ASSERT_EQ(duplicate.errors.size(), 1u);
  EXPECT_EQ(duplicate.errors[0].code, "duplicate_custom_id");
  EXPECT_EQ(duplicate.errors[0].line, 3);
  EXPECT_EQ(ParseBatchInput("\n  \n", "/v1/completions").errors.at(0).code, "empty_file");
  std::string many;
  for (int i = 0; i < 5; ++i) many += Line("c" + std::to_string(i)) + "\n";
  EXPECT_EQ(ParseBatchInput(many, "/v1/completions", {.max_lines = 4}).errors.at(0).code, "too_many_requests");
  std::string bad;
  for (int i = 0; i < 10; ++i) bad += "nope\n";
  EXPECT_EQ(ParseBatchInput(bad, "/v1/completions", {.max_errors = 3}).errors.size(), 3u);
  const std::string deep = Line("d", "/v1/completions", std::string(100, '[') + std::string(100, ']'));
  EXPECT_EQ(ParseBatchInput(deep, "/v1/completions").errors.at(0).code, "invalid_json_line");
}

TEST(BatchInputTest, NoEndpointTakesEveryBatchEndpoint) {
  const std::string jsonl = Line("a") + "\n" + Line("b", "/v1/chat/completions", R"({"messages": []})") + "\n" +
                            Line("c", "/v1/embeddings", R"({"input": "x"})");
  ParsedBatchInput parsed = ParseBatchInput(jsonl, "");
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.lines.size(), 3u);
}

}  // namespace
}  // namespace surge::batch
