// ParseCompletionRequest: every prompt shape, every parameter, and an error naming the
// parameter for each malformed one.
#include "api/completion_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge::api {
namespace {

using ::testing::HasSubstr;

CompletionRequest Parse(std::string_view body) {
  ApiResult<CompletionRequest> request = ParseCompletionRequest(body);
  EXPECT_TRUE(request.ok()) << body << ": " << request.error().status.message();
  return request.ok() ? std::move(request).value() : CompletionRequest{};
}

TEST(CompletionRequestTest, PromptShapes) {
  CompletionRequest text = Parse(R"({"model": "m", "prompt": "Once"})");
  ASSERT_EQ(text.prompts.size(), 1u);
  EXPECT_FALSE(text.prompts[0].is_tokens);
  EXPECT_EQ(text.prompts[0].text, "Once");
  EXPECT_EQ(text.params.model, "m");

  CompletionRequest texts = Parse(R"({"prompt": ["a", "b", "c"]})");
  ASSERT_EQ(texts.prompts.size(), 3u);
  EXPECT_EQ(texts.prompts[2].text, "c");

  CompletionRequest ids = Parse(R"({"prompt": [1, 2, 3.0]})");
  ASSERT_EQ(ids.prompts.size(), 1u);
  EXPECT_TRUE(ids.prompts[0].is_tokens);
  EXPECT_EQ(ids.prompts[0].token_ids, (std::vector<int32_t>{1, 2, 3}));

  CompletionRequest lists = Parse(R"({"prompt": [[1, 2], [3]]})");
  ASSERT_EQ(lists.prompts.size(), 2u);
  EXPECT_EQ(lists.prompts[1].token_ids, (std::vector<int32_t>{3}));
}

TEST(CompletionRequestTest, Defaults) {
  CompletionRequest request = Parse(R"({"prompt": "x"})");
  const GenerationParams& p = request.params;
  EXPECT_EQ(p.model, "");
  EXPECT_FALSE(p.max_tokens.has_value());
  EXPECT_EQ(p.temperature, 1.0);
  EXPECT_EQ(p.top_p, 1.0);
  EXPECT_EQ(p.top_k, -1);
  EXPECT_EQ(p.min_p, 0.0);
  EXPECT_FALSE(p.seed.has_value());
  EXPECT_TRUE(p.stop.empty());
  EXPECT_EQ(p.top_logprobs, -1);
  EXPECT_EQ(p.n, 1);
  EXPECT_FALSE(p.stream);
  EXPECT_FALSE(p.include_usage);
  EXPECT_TRUE(p.skip_special_tokens);
  EXPECT_FALSE(p.ignore_eos);
  EXPECT_EQ(p.priority, 0);
  EXPECT_FALSE(p.timeout_s.has_value());
  EXPECT_TRUE(request.add_special_tokens);
}

TEST(CompletionRequestTest, EveryParameter) {
  CompletionRequest request = Parse(R"({
    "model": "m", "prompt": "x", "max_tokens": 7, "temperature": 0.5, "top_p": 0.9,
    "top_k": 40, "min_p": 0.05, "seed": 42, "stop": ["a", "bc"], "stop_token_ids": [5, 6],
    "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.2,
    "logprobs": 3, "ignore_eos": true, "n": 2, "stream": true,
    "stream_options": {"include_usage": true, "continuous_usage_stats": false}, "skip_special_tokens": false,
    "user": "u1", "priority": -3, "add_special_tokens": false, "logit_bias": {"300": 100, "7": -2.5},
    "timeout": 2.5})");
  const GenerationParams& p = request.params;
  EXPECT_EQ(p.max_tokens, 7);
  EXPECT_EQ(p.temperature, 0.5);
  EXPECT_EQ(p.top_p, 0.9);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_EQ(p.min_p, 0.05);
  EXPECT_EQ(p.seed, 42);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(p.stop_token_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(p.presence_penalty, 0.5);
  EXPECT_EQ(p.frequency_penalty, -0.5);
  EXPECT_EQ(p.repetition_penalty, 1.2);
  EXPECT_EQ(p.top_logprobs, 3);
  EXPECT_TRUE(p.ignore_eos);
  EXPECT_EQ(p.n, 2);
  EXPECT_TRUE(p.stream);
  EXPECT_TRUE(p.include_usage);
  EXPECT_FALSE(p.skip_special_tokens);
  EXPECT_EQ(p.user, "u1");
  EXPECT_EQ(p.priority, -3);
  EXPECT_FALSE(request.add_special_tokens);
  EXPECT_EQ(p.logit_bias, (std::vector<std::pair<int32_t, double>>{{300, 100}, {7, -2.5}}));
  EXPECT_EQ(p.timeout_s, 2.5);
}

TEST(CompletionRequestTest, StopAsOneStringAndNullsAsAbsent) {
  CompletionRequest request = Parse(R"({"prompt": "x", "stop": "END", "max_tokens": null,
                                        "temperature": null, "stream_options": null})");
  EXPECT_EQ(request.params.stop, (std::vector<std::string>{"END"}));
  EXPECT_FALSE(request.params.max_tokens.has_value());
  EXPECT_EQ(request.params.temperature, 1.0);
}

struct BadCase {
  const char* body;
  const char* param;
  const char* message;
};

class CompletionRequestErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(CompletionRequestErrorTest, NamesTheParameter) {
  const BadCase& c = GetParam();
  ApiResult<CompletionRequest> request = ParseCompletionRequest(c.body);
  ASSERT_FALSE(request.ok()) << c.body;
  EXPECT_EQ(request.error().status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(request.error().param, c.param) << c.body;
  EXPECT_THAT(request.error().status.message(), HasSubstr(c.message)) << c.body;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CompletionRequestErrorTest,
    ::testing::Values(
        BadCase{R"({"prompt": "x",)", "", "not valid JSON"},
        BadCase{"[1, 2]", "", "must be a JSON object"},
        BadCase{"{\"prompt\": \"\xff\xfe\"}", "", "not valid UTF-8"},
        BadCase{R"({"max_tokens": 3})", "prompt", "prompt is required"},
        BadCase{R"({"prompt": ""})", "prompt", "must not be empty"},
        BadCase{R"({"prompt": []})", "prompt", "must not be empty"},
        BadCase{R"({"prompt": [[]]})", "prompt", "must not be empty"},
        BadCase{R"({"prompt": ["a", ""]})", "prompt", "must not be empty"},
        BadCase{R"({"prompt": 5})", "prompt", "got an integer"},
        BadCase{R"({"prompt": [1, "a"]})", "prompt", "token ids"},
        BadCase{R"({"prompt": [-1]})", "prompt", "non-negative"},
        BadCase{R"({"prompt": [1.5]})", "prompt", "token ids"},
        BadCase{R"({"prompt": ["a", [1]]})", "prompt", "must not mix"},
        BadCase{R"({"prompt": "x", "model": 3})", "model", "model must be a string, got an integer"},
        BadCase{R"({"prompt": "x", "max_tokens": "5"})", "max_tokens", "must be an integer, got a string"},
        BadCase{R"({"prompt": "x", "max_tokens": 0})", "max_tokens", "max_tokens must be >= 1, got 0"},
        BadCase{R"({"prompt": "x", "max_tokens": -5})", "max_tokens", "got -5"},
        BadCase{R"({"prompt": "x", "max_tokens": 1e30})", "max_tokens", "must be an integer"},
        BadCase{R"({"prompt": "x", "max_tokens": 2.5})", "max_tokens", "must be an integer"},
        BadCase{R"({"prompt": "x", "temperature": -0.1})", "temperature", ">= 0"},
        BadCase{R"({"prompt": "x", "temperature": "hot"})", "temperature", "must be a number"},
        BadCase{R"({"prompt": "x", "temperature": 1e400})", "", "not valid JSON"},
        BadCase{R"({"prompt": "x", "top_p": 0})", "top_p", "(0, 1]"},
        BadCase{R"({"prompt": "x", "top_p": 1.5})", "top_p", "(0, 1]"},
        BadCase{R"({"prompt": "x", "top_k": -2})", "top_k", "must be in [-1,"},
        BadCase{R"({"prompt": "x", "top_k": true})", "top_k", "got a boolean"},
        BadCase{R"({"prompt": "x", "min_p": 2})", "min_p", "[0, 1]"},
        BadCase{R"({"prompt": "x", "seed": "s"})", "seed", "must be an integer"},
        BadCase{R"({"prompt": "x", "stop": 3})", "stop", "string or a list of strings"},
        BadCase{R"({"prompt": "x", "stop": ["a", 3]})", "stop", "string or a list of strings"},
        BadCase{R"({"prompt": "x", "stop": ""})", "stop", "must not be empty"},
        BadCase{R"({"prompt": "x", "stop_token_ids": 3})", "stop_token_ids", "list of token ids"},
        BadCase{R"({"prompt": "x", "stop_token_ids": [-3]})", "stop_token_ids", "non-negative"},
        BadCase{R"({"prompt": "x", "presence_penalty": 3})", "presence_penalty", "[-2, 2]"},
        BadCase{R"({"prompt": "x", "frequency_penalty": -2.5})", "frequency_penalty", "[-2, 2]"},
        BadCase{R"({"prompt": "x", "repetition_penalty": 0})", "repetition_penalty", "> 0"},
        BadCase{R"({"prompt": "x", "logprobs": 21})", "logprobs", "[0, 20]"},
        BadCase{R"({"prompt": "x", "logprobs": true})", "logprobs", "must be an integer"},
        BadCase{R"({"prompt": "x", "ignore_eos": 1})", "ignore_eos", "must be a boolean"},
        BadCase{R"({"prompt": "x", "n": 0})", "n", "[1, 128]"},
        BadCase{R"({"prompt": "x", "n": 129})", "n", "[1, 128]"},
        BadCase{R"({"prompt": "x", "stream": "yes"})", "stream", "must be a boolean"},
        BadCase{R"({"prompt": "x", "stream_options": {"include_usage": true}})", "stream_options",
                "only allowed when stream is true"},
        BadCase{R"({"prompt": "x", "stream": true, "stream_options": 1})", "stream_options", "must be an object"},
        BadCase{R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": 1}})",
                "stream_options.include_usage", "must be a boolean"},
        BadCase{R"({"prompt": "x", "stream": true, "stream_options": {"continuous_usage_stats": true}})",
                "stream_options.continuous_usage_stats", "continuous_usage_stats: true is not supported"},
        BadCase{R"({"prompt": "x", "skip_special_tokens": "no"})", "skip_special_tokens", "must be a boolean"},
        BadCase{R"({"prompt": "x", "user": 5})", "user", "must be a string"},
        BadCase{R"({"prompt": "x", "priority": 1.5})", "priority", "must be an integer"},
        BadCase{R"({"prompt": "x", "add_special_tokens": 0})", "add_special_tokens", "must be a boolean"},
        BadCase{R"({"prompt": "x", "max_tokens": 0})", "max_tokens", "must be >= 1"},
        BadCase{R"({"prompt": "x", "echo": true, "max_tokens": -1})", "max_tokens", "must be >= 0, got -1"},
        BadCase{R"({"prompt": "x", "suffix": "s"})", "suffix", "not supported"},
        BadCase{R"({"prompt": "x", "best_of": 3})", "best_of", "not supported"},
        BadCase{R"({"prompt": "x", "logit_bias": {"300": 500}})", "logit_bias", "in [-100, 100], got 500"},
        BadCase{R"({"prompt": "x", "logit_bias": {"abc": 1}})", "logit_bias", "keys must be token ids, got 'abc'"},
        BadCase{R"({"prompt": "x", "logit_bias": {"-1": 1}})", "logit_bias", "keys must be token ids"},
        BadCase{R"({"prompt": "x", "logit_bias": {"1": "5"}})", "logit_bias", "must be numbers"},
        BadCase{R"({"prompt": "x", "logit_bias": [1]})", "logit_bias", "must be an object"},
        BadCase{R"({"prompt": "x", "max_completion_tokens": 3})", "max_completion_tokens", "not a supported field"},
        BadCase{R"({"prompt": "x", "guided_json": 3})", "guided_json", "must be a JSON schema"},
        BadCase{R"({"prompt": "x", "guided_decoding_backend": "xgrammar"})", "guided_decoding_backend",
                "not a supported field"},
        BadCase{R"({"prompt": "x", "timeout": 0})", "timeout", "timeout must be a number of seconds in (0, 86400]"},
        BadCase{R"({"prompt": "x", "timeout": -1})", "timeout", "(0, 86400]"},
        BadCase{R"({"prompt": "x", "timeout": 1e9})", "timeout", "(0, 86400]"},
        BadCase{R"({"prompt": "x", "timeout": "5"})", "timeout", "must be a number, got a string"},
        BadCase{R"({"prompt": "x", "timeout": true})", "timeout", "must be a number"},
        BadCase{R"({"prompt": "x", "no_stop_trim": true})", "no_stop_trim", "stop string is always cut"},
        BadCase{R"({"prompt": "x", "return_hidden_states": true})", "return_hidden_states", "no hidden states"}));

// The body sgl-router 0.3.2 and vllm-router 0.1.17 forward for {"model", "prompt", "max_tokens": 1}.
TEST(CompletionRequestTest, TheBodyTheRoutersForwardIsAccepted) {
  const std::string body = R"({"model":"m","prompt":"hi","max_tokens":1,"stream":false,"echo":false,
      "no_stop_trim":false,"ignore_eos":false,"skip_special_tokens":true,"return_hidden_states":false})";
  ApiResult<CompletionRequest> request = ParseCompletionRequest(body);
  ASSERT_TRUE(request.ok()) << request.error().status.ToString();
  EXPECT_EQ(request->params.max_tokens, 1);
}


TEST(CompletionRequestTest, EchoAllowsMaxTokensZero) {
  ApiResult<CompletionRequest> parsed = ParseCompletionRequest(R"({"prompt": "x", "echo": true, "max_tokens": 0, "logprobs": 2})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().status.ToString();
  EXPECT_TRUE(parsed->echo);
  EXPECT_EQ(parsed->params.max_tokens, 0);
  EXPECT_EQ(parsed->params.top_logprobs, 2);
  EXPECT_FALSE(ParseCompletionRequest(R"({"prompt": "x"})")->echo);
}

}  // namespace
}  // namespace surge::api
