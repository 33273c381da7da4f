// ParseEmbeddingRequest: every input shape and field, an error naming the field for each
// bad one; dimensions, base64 and the response body.
#include "api/embedding_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace surge::api {
namespace {

using ::testing::HasSubstr;

EmbeddingRequest Parse(std::string_view body, const RequestLimits& limits = {}) {
  ApiResult<EmbeddingRequest> request = ParseEmbeddingRequest(body, limits);
  EXPECT_TRUE(request.ok()) << body << ": " << request.error().status.message();
  return request.ok() ? std::move(request).value() : EmbeddingRequest{};
}

void ExpectError(std::string_view body, const std::string& param, const std::string& message,
                 const RequestLimits& limits = {}) {
  ApiResult<EmbeddingRequest> request = ParseEmbeddingRequest(body, limits);
  ASSERT_FALSE(request.ok()) << body;
  EXPECT_EQ(request.error().status.code(), StatusCode::kInvalidArgument) << body;
  EXPECT_EQ(request.error().param, param) << body;
  EXPECT_THAT(std::string(request.error().status.message()), HasSubstr(message)) << body;
}

TEST(EmbeddingRequestTest, InputShapes) {
  EmbeddingRequest text = Parse(R"({"model": "m", "input": "Once"})");
  ASSERT_EQ(text.inputs.size(), 1u);
  EXPECT_FALSE(text.inputs[0].is_tokens);
  EXPECT_EQ(text.inputs[0].text, "Once");
  EXPECT_EQ(text.model, "m");
  EXPECT_FALSE(text.base64);
  EXPECT_FALSE(text.dimensions.has_value());

  EmbeddingRequest texts = Parse(R"({"input": ["a", "b", "c"]})");
  ASSERT_EQ(texts.inputs.size(), 3u);
  EXPECT_EQ(texts.inputs[2].text, "c");

  EmbeddingRequest ids = Parse(R"({"input": [1, 2, 3.0]})");
  ASSERT_EQ(ids.inputs.size(), 1u);
  EXPECT_TRUE(ids.inputs[0].is_tokens);
  EXPECT_EQ(ids.inputs[0].token_ids, (std::vector<int32_t>{1, 2, 3}));

  EmbeddingRequest lists = Parse(R"({"input": [[1, 2], [3]]})");
  ASSERT_EQ(lists.inputs.size(), 2u);
  EXPECT_EQ(lists.inputs[1].token_ids, (std::vector<int32_t>{3}));
}

TEST(EmbeddingRequestTest, EveryField) {
  EmbeddingRequest request =
      Parse(R"({"model": "m", "input": "x", "encoding_format": "base64", "dimensions": 8, "user": "u-1"})");
  EXPECT_TRUE(request.base64);
  EXPECT_EQ(request.dimensions, 8);
  EXPECT_FALSE(Parse(R"({"input": "x", "encoding_format": "float"})").base64);
  // null means unset, as OpenAI clients send it.
  EmbeddingRequest nulls = Parse(R"({"input": "x", "encoding_format": null, "dimensions": null, "user": null})");
  EXPECT_FALSE(nulls.base64);
  EXPECT_FALSE(nulls.dimensions.has_value());
}

TEST(EmbeddingRequestTest, BadInputs) {
  ExpectError(R"({"model": "m"})", "input", "input is required");
  ExpectError(R"({"input": ""})", "input", "input must not be empty");
  ExpectError(R"({"input": []})", "input", "input must not be empty");
  ExpectError(R"({"input": [[]]})", "input", "input must not be empty");
  ExpectError(R"({"input": ["a", ""]})", "input", "input must not be empty");
  ExpectError(R"({"input": 3})", "input", "input must be a string, a list of strings");
  ExpectError(R"({"input": {"text": "a"}})", "input", "got an object");
  ExpectError(R"({"input": [1, -2]})", "input", "non-negative integers");
  ExpectError(R"({"input": [1, 2.5]})", "input", "non-negative integers");
  ExpectError(R"({"input": ["a", [1]]})", "input", "must not mix");
  ExpectError(R"({"input": [[1], "a"]})", "input", "must not mix");
}

TEST(EmbeddingRequestTest, BadFields) {
  ExpectError(R"({"input": "x", "encoding_format": "int8"})", "encoding_format", "\"float\" or \"base64\"");
  ExpectError(R"({"input": "x", "encoding_format": 1})", "encoding_format", "string");
  ExpectError(R"({"input": "x", "dimensions": 0})", "dimensions", "dimensions must be in [1,");
  ExpectError(R"({"input": "x", "dimensions": -3})", "dimensions", "dimensions must be in [1,");
  ExpectError(R"({"input": "x", "dimensions": "8"})", "dimensions", "integer");
  ExpectError(R"({"input": "x", "model": 7})", "model", "string");
  ExpectError(R"({"input": "x", "user": 7})", "user", "string");
  // Unknown fields, and the metadata fields of other endpoints, are refused by name.
  ExpectError(R"({"input": "x", "pooling": "mean"})", "pooling", "pooling");
  ExpectError(R"({"input": "x", "metadata": {"a": "b"}})", "metadata", "metadata");
  ExpectError(R"({"input": "x", "max_tokens": 3})", "max_tokens", "max_tokens");
  ExpectError(R"([1, 2])", "", "object");
  ExpectError(R"({"input": "x")", "", "JSON");
}

TEST(EmbeddingRequestTest, InputCountIsBounded) {
  RequestLimits limits;
  limits.max_embedding_inputs = 2;
  ExpectError(R"({"input": ["a", "b", "c"]})", "input", "input holds 3 inputs; the limit is 2", limits);
  ExpectError(R"({"input": [[1], [2], [3]]})", "input", "input holds 3 inputs; the limit is 2", limits);
  EXPECT_EQ(Parse(R"({"input": ["a", "b"]})", limits).inputs.size(), 2u);
  // One list of token ids is one input, however long.
  EXPECT_EQ(Parse(R"({"input": [1, 2, 3, 4, 5]})", limits).inputs.size(), 1u);
  EXPECT_EQ(RequestLimits{}.max_embedding_inputs, 2048u);
}

TEST(EmbeddingRequestTest, DimensionsAreCheckedAgainstTheModel) {
  EmbeddingRequest request = Parse(R"({"input": "x", "dimensions": 65})");
  std::optional<ApiError> error = CheckDimensions(request, 64);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "dimensions");
  EXPECT_THAT(std::string(error->status.message()), HasSubstr("[1, 64]"));
  EXPECT_FALSE(CheckDimensions(request, 65).has_value());
  EXPECT_FALSE(CheckDimensions(Parse(R"({"input": "x"})"), 64).has_value());
}

TEST(EmbeddingRequestTest, TruncateRenormalizes) {
  const std::vector<float> v = {0.6f, 0.0f, 0.8f};
  EXPECT_EQ(TruncateEmbedding(v, 1), (std::vector<float>{1.0f}));
  const std::vector<float> two = TruncateEmbedding(std::vector<float>{3, 4, 12}, 2);
  EXPECT_FLOAT_EQ(two[0], 0.6f);
  EXPECT_FLOAT_EQ(two[1], 0.8f);
  EXPECT_EQ(TruncateEmbedding(v, 3), v);
  EXPECT_EQ(TruncateEmbedding(std::vector<float>{0, 0, 1}, 2), (std::vector<float>{0, 0}));
}

TEST(EmbeddingRequestTest, Base64IsLittleEndianFloat32) {
  // 1.0f = 00 00 80 3f; -2.0f = 00 00 00 c0.
  EXPECT_EQ(EmbeddingToBase64(std::vector<float>{1.0f}), "AACAPw==");
  EXPECT_EQ(EmbeddingToBase64(std::vector<float>{1.0f, -2.0f}), "AACAPwAAAMA=");
  EXPECT_EQ(EmbeddingToBase64(std::vector<float>{1.0f, -2.0f, 0.5f}), "AACAPwAAAMAAAAA/");
  EXPECT_EQ(EmbeddingToBase64({}), "");
}

TEST(EmbeddingRequestTest, ResponseJson) {
  const Json floats = Json::parse(EmbeddingResponseJson("m", {{0.5f, -0.25f}, {1.0f, 0.0f}}, false, 7));
  EXPECT_EQ(floats["object"], "list");
  EXPECT_EQ(floats["model"], "m");
  ASSERT_EQ(floats["data"].size(), 2u);
  EXPECT_EQ(floats["data"][1]["object"], "embedding");
  EXPECT_EQ(floats["data"][1]["index"], 1);
  EXPECT_EQ(floats["data"][0]["embedding"], Json::parse("[0.5, -0.25]"));
  EXPECT_EQ(floats["usage"], Json::parse(R"({"prompt_tokens": 7, "total_tokens": 7})"));
  const Json base64 = Json::parse(EmbeddingResponseJson("m", {{1.0f}}, true, 1));
  EXPECT_EQ(base64["data"][0]["embedding"], "AACAPw==");
}

}  // namespace
}  // namespace surge::api
