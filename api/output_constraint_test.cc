// response_format and vLLM's guided_* fields on both endpoints: what each means, and a
// 400 naming the field for every malformed or conflicting one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/chat_request.h"
#include "api/completion_request.h"

namespace surge::api {
namespace {

using ::testing::HasSubstr;

#define MSGS R"("messages": [{"role": "user", "content": "hi"}])"

OutputConstraint Chat(const std::string& fields) {
  ApiResult<ChatCompletionRequest> request = ParseChatCompletionRequest("{" MSGS ", " + fields + "}");
  EXPECT_TRUE(request.ok()) << fields << ": " << request.error().status.message();
  return request.ok() ? request->params.constraint : OutputConstraint{};
}

OutputConstraint Completion(const std::string& fields) {
  ApiResult<CompletionRequest> request = ParseCompletionRequest(R"({"prompt": "x", )" + fields + "}");
  EXPECT_TRUE(request.ok()) << fields << ": " << request.error().status.message();
  return request.ok() ? request->params.constraint : OutputConstraint{};
}

TEST(OutputConstraintTest, ResponseFormat) {
  EXPECT_EQ(Chat(R"("response_format": {"type": "text"})").kind, OutputConstraintKind::kNone);
  EXPECT_EQ(Chat(R"("response_format": null)").kind, OutputConstraintKind::kNone);
  OutputConstraint object = Chat(R"("response_format": {"type": "json_object"})");
  EXPECT_EQ(object.kind, OutputConstraintKind::kJsonObject);
  EXPECT_EQ(object.param, "response_format");
  OutputConstraint schema = Chat(R"("response_format": {"type": "json_schema", "json_schema": {"name": "p",
      "description": "d", "strict": true, "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}})");
  EXPECT_EQ(schema.kind, OutputConstraintKind::kJsonSchema);
  // Key order is kept: properties are emitted in schema order.
  EXPECT_EQ(schema.text, R"({"type":"object","properties":{"b":{},"a":{}}})");
  EXPECT_EQ(Chat(R"("response_format": {"type": "json_schema", "json_schema": {"name": "p"}})").kind,
            OutputConstraintKind::kJsonObject);
  EXPECT_EQ(Completion(R"("response_format": {"type": "json_object"})").kind, OutputConstraintKind::kJsonObject);
}

TEST(OutputConstraintTest, GuidedFields) {
  for (auto parse : {&Chat, &Completion}) {
    OutputConstraint json = parse(R"("guided_json": {"type": "integer"})");
    EXPECT_EQ(json.kind, OutputConstraintKind::kJsonSchema);
    EXPECT_EQ(json.text, R"({"type":"integer"})");
    EXPECT_EQ(json.param, "guided_json");
    EXPECT_EQ(parse(R"("guided_json": "{\"type\": \"string\"}")").text, R"({"type": "string"})");
    OutputConstraint regex = parse(R"("guided_regex": "[a-z]+")");
    EXPECT_EQ(regex.kind, OutputConstraintKind::kRegex);
    EXPECT_EQ(regex.text, "[a-z]+");
    OutputConstraint choice = parse(R"("guided_choice": ["yes", "no"])");
    EXPECT_EQ(choice.kind, OutputConstraintKind::kChoice);
    EXPECT_EQ(choice.choices, (std::vector<std::string>{"yes", "no"}));
    OutputConstraint grammar = parse(R"("guided_grammar": "root ::= \"a\"")");
    EXPECT_EQ(grammar.kind, OutputConstraintKind::kGrammar);
    EXPECT_EQ(grammar.param, "guided_grammar");
    // text does not count as a constraint.
    EXPECT_EQ(parse(R"("response_format": {"type": "text"}, "guided_regex": "a")").kind,
              OutputConstraintKind::kRegex);
  }
}

struct BadCase {
  std::string fields;
  std::string param;
  std::string message;
};

class OutputConstraintErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(OutputConstraintErrorTest, NamesTheField) {
  const BadCase& c = GetParam();
  ApiResult<ChatCompletionRequest> chat = ParseChatCompletionRequest("{" MSGS ", " + c.fields + "}");
  ASSERT_FALSE(chat.ok()) << c.fields;
  EXPECT_EQ(chat.error().param, c.param);
  EXPECT_THAT(std::string(chat.error().status.message()), HasSubstr(c.message));
  ApiResult<CompletionRequest> completion = ParseCompletionRequest(R"({"prompt": "x", )" + c.fields + "}");
  ASSERT_FALSE(completion.ok()) << c.fields;
  EXPECT_EQ(completion.error().param, c.param);
}

INSTANTIATE_TEST_SUITE_P(
    All, OutputConstraintErrorTest,
    ::testing::Values(
        BadCase{R"("response_format": {"type": "yaml"})", "response_format",
                "response_format.type must be one of text, json_object, json_schema"},
        BadCase{R"("response_format": "json")", "response_format", "an object with a string type"},
        BadCase{R"("response_format": {"type": "json_schema"})", "response_format", "json_schema must be an object"},
        BadCase{R"("response_format": {"type": "json_schema", "json_schema": {"schema": {}}})", "response_format",
                "name is required"},
        BadCase{R"("response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": []}})",
                "response_format", "schema must be an object"},
        BadCase{R"("response_format": {"type": "json_schema", "json_schema": {"name": "n", "extra": 1}})",
                "response_format", "extra is not a supported field"},
        BadCase{R"("response_format": {"type": "json_object", "x": 1})", "response_format", "response_format.x"},
        BadCase{R"("guided_regex": 5)", "guided_regex", "must be a string"},
        BadCase{R"("guided_grammar": [])", "guided_grammar", "must be a string"},
        BadCase{R"("guided_choice": [])", "guided_choice", "non-empty list of strings"},
        BadCase{R"("guided_choice": ["a", 1])", "guided_choice", "non-empty list of strings"},
        BadCase{R"("guided_json": {}, "guided_regex": "a")", "guided_regex", "got both guided_json and guided_regex"},
        BadCase{R"("response_format": {"type": "json_object"}, "guided_choice": ["a"])", "guided_choice",
                "at most one output constraint"},
        BadCase{R"("guided_json": {}, "guided_whitespace_pattern": " ")", "guided_whitespace_pattern",
                "not supported"}));

}  // namespace
}  // namespace surge::api
