// The OpenAI routes on a real engine (stories260K): goldens through the HTTP API, chat
// through the test template, /tokenize, /detokenize, /v1/models, /health, /metrics, and
// every kind of bad input answered with its status and the parameter at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "apps/serve_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::JsonBody;
using testing_util::MetricValue;
using testing_util::SseData;

class ServeTest : public testing_util::StoriesServerTest {};

json Goldens() { return json::parse(std::ifstream("models/stories260K/goldens.json")); }

// The golden's output_text decodes the output alone, so the decoder's "strip one leading
// space" rule applies to its first token. A completion continues its prompt (as vLLM and
// OpenAI return it), so there that space stays: " One day" after "...in the park.".
void ExpectGoldenText(const std::string& text, const json& golden) {
  const std::string expected = golden["output_text"];
  if (text.starts_with(" ") && !expected.starts_with(" ")) {
    EXPECT_EQ(text.substr(1), expected) << golden["prompt"];
    EXPECT_EQ(golden["full_text"], golden["prompt"].get<std::string>() + text) << "the space continues the prompt";
  } else {
    EXPECT_EQ(text, expected) << golden["prompt"];
  }
}

// The golden prompt as the request carries it: the empty prompt goes as its token ids
// (an empty string is refused), which exercises the token-id path as well.
json GoldenPrompt(const json& golden) {
  return golden["prompt"] == "" ? golden["input_ids"] : golden["prompt"];
}

TEST_F(ServeTest, GreedyGoldensThroughCompletions) {
  const json goldens = Goldens();
  ASSERT_EQ(goldens["cases"].size(), 8u);
  for (const json& golden : goldens["cases"]) {
    json request = {{"model", "stories260K"}, {"prompt", GoldenPrompt(golden)}, {"max_tokens", 128},
                    {"temperature", 0}};
    net::HttpResponse response = Post("/v1/completions", request.dump());
    ASSERT_EQ(response.status, 200) << response.body;
    json body = JsonBody(response);
    EXPECT_EQ(body["object"], "text_completion");
    EXPECT_THAT(body["id"].get<std::string>(), ::testing::StartsWith("cmpl-"));
    EXPECT_EQ(body["model"], "stories260K");
    ExpectGoldenText(body["choices"][0]["text"], golden);
    EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(body["choices"][0]["logprobs"], nullptr);
    EXPECT_EQ(body["usage"]["prompt_tokens"], golden["input_ids"].size());
    EXPECT_EQ(body["usage"]["completion_tokens"], 128);
    EXPECT_EQ(body["usage"]["total_tokens"], golden["input_ids"].size() + 128);
  }
}

TEST_F(ServeTest, StreamedDeltasConcatenateToTheGolden) {
  const json goldens = Goldens();
  ASSERT_EQ(goldens["cases"].size(), 8u);
  for (const json& golden : goldens["cases"]) {
    json request = {{"prompt", GoldenPrompt(golden)}, {"max_tokens", 128}, {"temperature", 0}, {"stream", true}};
    net::HttpResponse response = Post("/v1/completions", request.dump());
    ASSERT_EQ(response.status, 200) << response.body;
    EXPECT_THAT(response.headers.Get("Content-Type"), HasSubstr("text/event-stream"));
    std::vector<std::string> events = SseData(response.body);
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.back(), "[DONE]");
    std::string text;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
      json chunk = json::parse(events[i]);
      EXPECT_EQ(chunk["object"], "text_completion");
      EXPECT_FALSE(chunk.contains("usage"));
      text += chunk["choices"][0]["text"].get<std::string>();
      EXPECT_EQ(chunk["choices"][0]["finish_reason"], i + 2 == events.size() ? json("length") : json()) << i;
    }
    ExpectGoldenText(text, golden);
  }
}

TEST_F(ServeTest, ListOfPromptsGivesPromptMajorChoices) {
  json request = {{"prompt", {"Once upon a time", "The little dog was sad because"}}, {"max_tokens", 20},
                  {"temperature", 0}, {"n", 2}};
  json body = JsonBody(Post("/v1/completions", request.dump()));
  ASSERT_EQ(body["choices"].size(), 4u) << body;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(body["choices"][i]["index"], i);
  EXPECT_EQ(body["choices"][0]["text"], body["choices"][1]["text"]);  // greedy: n copies
  EXPECT_NE(body["choices"][0]["text"], body["choices"][2]["text"]);
  EXPECT_EQ(body["usage"]["completion_tokens"], 80);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 5 + 13);
}

TEST_F(ServeTest, CompletionLogprobs) {
  json request = {{"prompt", "Once upon a time"}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 2}};
  json body = JsonBody(Post("/v1/completions", request.dump()));
  const json& logprobs = body["choices"][0]["logprobs"];
  ASSERT_EQ(logprobs["tokens"].size(), 5u) << body;
  ASSERT_EQ(logprobs["token_logprobs"].size(), 5u);
  ASSERT_EQ(logprobs["top_logprobs"].size(), 5u);
  EXPECT_EQ(logprobs["text_offset"][0], 0);
  EXPECT_LE(logprobs["token_logprobs"][0].get<double>(), 0.0);
  EXPECT_GE(logprobs["top_logprobs"][0].size(), 2u);
}

TEST_F(ServeTest, ChatRendersTheTemplateAndAnswers) {
  json messages = {{{"role", "user"}, {"content", "Tell me a story."}}};
  json tokenized = JsonBody(Post("/tokenize", json{{"messages", messages}}.dump()));
  EXPECT_EQ(tokenized["prompt"], "<s>user: Tell me a story.\nassistant:");
  EXPECT_EQ(tokenized["tokens"][0], 1);  // BOS from the template, and only once
  EXPECT_NE(tokenized["tokens"][1], 1);
  EXPECT_EQ(tokenized["max_model_len"], 512);

  json request = {{"model", "stories260K"}, {"messages", messages}, {"max_completion_tokens", 16},
                  {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 2}};
  net::HttpResponse response = Post("/v1/chat/completions", request.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  json body = JsonBody(response);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_THAT(body["id"].get<std::string>(), ::testing::StartsWith("chatcmpl-"));
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_FALSE(body["choices"][0]["message"]["content"].get<std::string>().empty());
  EXPECT_EQ(body["choices"][0]["logprobs"]["content"].size(), 16u);
  EXPECT_EQ(body["choices"][0]["logprobs"]["content"][0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(body["usage"]["prompt_tokens"], tokenized["count"]);
  EXPECT_EQ(body["usage"]["completion_tokens"], 16);
}

TEST_F(ServeTest, StopStringsEndTheChoiceWithoutBeingSent) {
  json request = {{"prompt", "Once upon a time"}, {"max_tokens", 64}, {"temperature", 0}, {"stop", " girl"}};
  json body = JsonBody(Post("/v1/completions", request.dump()));
  EXPECT_EQ(body["choices"][0]["text"], ", there was a little");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServeTest, ContinueFinalMessageLeavesTheAssistantTurnOpen) {
  json request = {{"messages", {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", "Once upon"}}}},
                  {"add_generation_prompt", false}, {"continue_final_message", true}};
  json tokenized = JsonBody(Post("/tokenize", request.dump()));
  EXPECT_EQ(tokenized["prompt"], "<s>user: Hi\nassistant: Once upon");
  request["max_tokens"] = 4;
  request["temperature"] = 0;
  json body = JsonBody(Post("/v1/chat/completions", request.dump()));
  EXPECT_EQ(body["usage"]["prompt_tokens"], tokenized["count"]);
  EXPECT_EQ(body["usage"]["completion_tokens"], 4);
}

TEST_F(ServeTest, TokenizeAndDetokenize) {
  json tokenized = JsonBody(Post("/tokenize", R"({"model": "stories260K", "prompt": "Once upon a time"})"));
  EXPECT_EQ(tokenized["tokens"], json({1, 403, 407, 261, 378}));
  EXPECT_EQ(tokenized["count"], 5);
  EXPECT_FALSE(tokenized.contains("prompt"));
  json plain = JsonBody(Post("/tokenize", R"({"prompt": "Once upon a time", "add_special_tokens": false})"));
  EXPECT_EQ(plain["tokens"], json({403, 407, 261, 378}));
  json text = JsonBody(Post("/detokenize", R"({"tokens": [403, 407, 261, 378]})"));
  EXPECT_EQ(text["prompt"], "Once upon a time");
}

TEST_F(ServeTest, ModelsAndHealth) {
  json models = JsonBody(Get("/v1/models"));
  EXPECT_EQ(models["object"], "list");
  ASSERT_EQ(models["data"].size(), 1u);
  EXPECT_EQ(models["data"][0]["id"], "stories260K");
  EXPECT_EQ(models["data"][0]["object"], "model");
  EXPECT_EQ(Get("/health").status, 200);
}

// What sgl-router and vllm-router read and send (docs/GATEWAYS.md): an absolute model_path
// (sgl-router looks a relative one up on Hugging Face), and the body they forward answered.
TEST_F(ServeTest, AnswersWhatTheRoutersAskAndForward) {
  const json info = JsonBody(Get("/server_info"));
  EXPECT_TRUE(std::filesystem::path(info["model_path"].get<std::string>()).is_absolute()) << info;
  EXPECT_TRUE(JsonBody(Get("/get_load")).is_array());
  const net::HttpResponse answer = Post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}],
      "model":"stories260K","logprobs":false,"max_completion_tokens":2,"stream":false,"no_stop_trim":false,
      "ignore_eos":false,"continue_final_message":false,"skip_special_tokens":true,"separate_reasoning":true,
      "stream_reasoning":true,"return_hidden_states":false,"include_reasoning":true})");
  EXPECT_EQ(answer.status, 200) << answer.body;
}

TEST_F(ServeTest, MetricsParseAndCountersMove) {
  const std::string before = Get("/metrics").body;
  const double requests_before = MetricValue(before, R"(surge_http_requests_total{endpoint="/v1/completions",code="200"})");
  const double tokens_before = MetricValue(before, "surge_generation_tokens_total");
  ASSERT_EQ(Post("/v1/completions", R"({"prompt": "Tim", "max_tokens": 7, "ignore_eos": true})").status, 200);
  net::HttpResponse after = Get("/metrics");
  EXPECT_THAT(after.headers.Get("Content-Type"), HasSubstr("text/plain"));
  EXPECT_EQ(MetricValue(after.body, R"(surge_http_requests_total{endpoint="/v1/completions",code="200"})"),
            std::max(requests_before, 0.0) + 1);
  EXPECT_EQ(MetricValue(after.body, "surge_generation_tokens_total"), tokens_before + 7);
  EXPECT_GE(MetricValue(after.body, "surge_time_to_first_token_seconds_count"), 1);
  EXPECT_GE(MetricValue(after.body, "surge_e2e_request_latency_seconds_count"), 1);
  EXPECT_GE(MetricValue(after.body, "surge_time_per_output_token_seconds_count"), 1);
  EXPECT_EQ(MetricValue(after.body, "surge_num_requests_running"), 0);
  EXPECT_EQ(MetricValue(after.body, "surge_num_requests_waiting"), 0);
  EXPECT_EQ(MetricValue(after.body, "surge_kv_cache_usage_ratio"), 0);
  EXPECT_GE(MetricValue(after.body, "surge_num_preemptions_total"), 0);
  EXPECT_GE(MetricValue(after.body, "surge_prompt_tokens_total"), 2);
  // 7 tokens took at least 7 steps, and their time is busy time; the fraction is one.
  EXPECT_GE(MetricValue(after.body, "surge_engine_steps_total") - std::max(MetricValue(before, "surge_engine_steps_total"), 0.0), 7);
  EXPECT_GT(MetricValue(after.body, "surge_engine_busy_seconds_total"), 0);
  const double busy = MetricValue(after.body, "surge_engine_busy_fraction");
  EXPECT_GT(busy, 0);
  EXPECT_LE(busy, 1);
  EXPECT_GT(MetricValue(after.body, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GE(MetricValue(after.body, "process_cpu_seconds_total"), 0);  // present (CPU ticks are 10 ms)
}

// A prompt sent again reuses its cached full blocks: the answer is the same, its usage
// reports them as cached_tokens, and the prefix-cache metrics count them.
TEST_F(ServeTest, ARepeatedPromptIsServedFromThePrefixCache) {
  std::string prompt;
  for (int i = 0; i < 12; ++i) prompt += "Lily and Ben went to the park to play. ";
  const std::string body = json{{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 0}}.dump();
  const double hits_before = std::max(MetricValue(Get("/metrics").body, "surge_prefix_cache_hits_total"), 0.0);
  net::HttpResponse first = Post("/v1/completions", body, {{"X-Priority", "realtime"}});
  net::HttpResponse second = Post("/v1/completions", body);
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(second.status, 200);
  const json a = json::parse(first.body), b = json::parse(second.body);
  EXPECT_EQ(a["choices"][0]["text"], b["choices"][0]["text"]);
  const int64_t num_prompt = b["usage"]["prompt_tokens"];
  const int64_t cached = b["usage"]["prompt_tokens_details"]["cached_tokens"];
  EXPECT_EQ(cached, (num_prompt - 1) / 16 * 16) << "every full block but the one with the last token";
  EXPECT_GT(cached, 0);
  const std::string metrics = Get("/metrics").body;
  EXPECT_GE(MetricValue(metrics, "surge_prefix_cache_hits_total"), hits_before + cached);
  EXPECT_GT(MetricValue(metrics, "surge_prefix_cache_hit_rate"), 0);
  EXPECT_GE(MetricValue(metrics, R"(surge_request_queue_time_seconds_count{tier="realtime"})"), 1);
}

// About 800 tokens: more than the model's 512 positions.
std::string LongPrompt() {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "Once upon a time ";
  return text;
}

struct BadInput {
  const char* path;
  std::string body;
  int status;
  const char* param;  // nullptr: null
  const char* message;
};

TEST_F(ServeTest, BadInputGetsAnOpenAiErrorAndTheServerKeepsServing) {
  const std::vector<BadInput> cases = {
      {"/v1/completions", "{not json", 400, nullptr, "not valid JSON"},
      {"/v1/completions", "{\"prompt\": \"\xc3\x28\"}", 400, nullptr, "UTF-8"},
      {"/v1/completions", R"({"prompt": 42})", 400, "prompt", "prompt must be"},
      {"/v1/completions", R"({"prompt": ""})", 400, "prompt", "must not be empty"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": -1})", 400, "max_tokens", "max_tokens"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": 100000000000})", 400, "max_tokens", "512"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": "ten"})", 400, "max_tokens", "integer"},
      {"/v1/completions", R"({"prompt": "x", "temperature": -1})", 400, "temperature", ">= 0"},
      {"/v1/completions", R"({"prompt": [600]})", 400, "prompt", "vocabulary"},
      {"/v1/completions", R"({"prompt": "x", "model": "gpt-4"})", 404, "model", "gpt-4"},
      {"/v1/completions", R"({"prompt": ")" + LongPrompt() + R"("})", 400, "prompt", "512"},
      {"/v1/completions", R"({"prompt": "Once", "max_tokens": 511})", 400, "max_tokens", "512"},
      {"/v1/chat/completions", R"({"messages": []})", 400, "messages", "must not be empty"},
      {"/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "model": "nope"})", 404,
       "model", "nope"},
      {"/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 3})", 400,
       "top_logprobs", "logprobs"},
      {"/tokenize", R"({"prompt": 1})", 400, "prompt", "string"},
      {"/detokenize", R"({"tokens": [1, 99999]})", 400, "tokens", "vocabulary"},
  };
  for (const BadInput& c : cases) {
    net::HttpResponse response = Post(c.path, c.body);
    EXPECT_EQ(response.status, c.status) << c.path << " " << c.body.substr(0, 80) << ": " << response.body;
    json error = JsonBody(response)["error"];
    EXPECT_EQ(error["param"], c.param ? json(c.param) : json()) << c.body.substr(0, 80);
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr(c.message)) << c.body.substr(0, 80);
    EXPECT_EQ(error["type"], "invalid_request_error");
    if (c.status == 404) {
      EXPECT_EQ(error["code"], "model_not_found");
    }
  }
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": "Still here", "max_tokens": 3})").status, 200);
}

TEST_F(ServeTest, LogitBiasSteersTheOutput) {
  json request = {{"prompt", "Once upon a time"}, {"max_tokens", 5}, {"temperature", 0},
                  {"logit_bias", {{"300", 100}}}};
  net::HttpResponse forced = Post("/v1/completions", request.dump());
  ASSERT_EQ(forced.status, 200) << forced.body;
  net::HttpResponse piece = Post("/detokenize", R"({"tokens": [300, 300, 300, 300, 300]})");
  ASSERT_EQ(piece.status, 200);
  const std::string text = JsonBody(forced)["choices"][0]["text"];
  // The decoder drops the first token's leading space; the completion continues its prompt.
  EXPECT_EQ(text, " " + JsonBody(piece)["prompt"].get<std::string>()) << "every token is 300";
  request["logit_bias"] = {{"512", 1}};
  net::HttpResponse outside = Post("/v1/completions", request.dump());
  ASSERT_EQ(outside.status, 400);
  EXPECT_EQ(JsonBody(outside)["error"]["param"], "logit_bias");
  EXPECT_THAT(JsonBody(outside)["error"]["message"].get<std::string>(), HasSubstr("vocabulary of 512"));
}

TEST_F(ServeTest, OneModelById) {
  net::HttpResponse model = Get("/v1/models/stories260K");
  ASSERT_EQ(model.status, 200) << model.body;
  EXPECT_EQ(JsonBody(model)["id"], "stories260K");
  EXPECT_EQ(JsonBody(model)["object"], "model");
  net::HttpResponse missing = Get("/v1/models/org%2Fother");
  ASSERT_EQ(missing.status, 404);
  EXPECT_EQ(JsonBody(missing)["error"]["code"], "model_not_found");
  EXPECT_THAT(JsonBody(missing)["error"]["message"].get<std::string>(), HasSubstr("org/other"));
}

// OpenAI's code for a context overflow, and the field the request used for its limit.
TEST_F(ServeTest, ContextOverflowSaysContextLengthExceeded) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"prompt": "Once", "max_tokens": 100000})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 100000})", "max_completion_tokens"},
      {R"({"prompt": ")" + LongPrompt() + R"("})", "prompt"},
  };
  for (const auto& [body, param] : cases) {
    net::HttpResponse response = Post(body.find("messages") != std::string::npos ? "/v1/chat/completions"
                                                                                   : "/v1/completions", body);
    ASSERT_EQ(response.status, 400) << response.body;
    const json error = JsonBody(response)["error"];
    EXPECT_EQ(error["code"], "context_length_exceeded") << response.body;
    EXPECT_EQ(error["param"], param) << response.body;
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("maximum context length is 512 tokens"));
  }
}

std::string NestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Issue 12's crash inputs: 100,000 nested arrays (200 KB, far under the body limit) in a
// message's content, in an extra message field, and through /tokenize. Each used to
// overflow the stack of a worker thread and kill the server.
TEST_F(ServeTest, HostileNestingIs400AndTheServerKeepsServing) {
  const std::string deep = NestedArrays(100000);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/v1/chat/completions", R"({"model": "stories260K", "messages": [{"role": "user", "content": )" + deep + "}]}"},
      {"/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x", "name": )" + deep + "}]}"},
      {"/tokenize", R"({"messages": [{"role": "user", "content": )" + deep + "}]}"},
      {"/v1/completions", R"({"prompt": "x", "stop": )" + deep + "}"},
      {"/detokenize", R"({"tokens": )" + deep + "}"},
  };
  for (const auto& [path, body] : cases) {
    net::HttpResponse response = Post(path, body);
    ASSERT_EQ(response.status, 400) << path << ": " << response.body.substr(0, 200);
    EXPECT_THAT(JsonBody(response)["error"]["message"].get<std::string>(),
                HasSubstr("nests arrays and objects deeper than the limit of 64 levels"));
    EXPECT_EQ(Get("/health").status, 200);
  }
  const std::string fine = R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3,
                                "chat_template_kwargs": {"deep": )" + NestedArrays(60) + "}}";
  net::HttpResponse served = Post("/v1/chat/completions", fine);
  EXPECT_EQ(served.status, 200) << served.body;
}

TEST_F(ServeTest, BodyOverTheLimitIs413) {
  ServeConfig config = testing_util::StoriesConfig();
  config.server.max_body_bytes = 1024;
  auto small = testing_util::StartStories(config);
  ASSERT_NE(small, nullptr);
  net::HttpResponse response =
      testing_util::Post(*small, "/v1/completions", R"({"prompt": ")" + std::string(4096, 'a') + R"("})");
  EXPECT_EQ(response.status, 413) << response.body;
  EXPECT_TRUE(JsonBody(response).contains("error"));
  EXPECT_EQ(testing_util::Get(*small, "/health").status, 200);
}


// --speculative ngram and draft (the bundled model's own weights in int8): the same greedy
// text as without, and vLLM-named spec_decode counters on /metrics.
TEST_F(ServeTest, SpeculativeDecodingKeepsGreedyOutputAndCountsDrafts) {
  const std::string body = R"({"prompt": "Once upon a time", "max_tokens": 48, "temperature": 0})";
  net::HttpResponse plain = Post("/v1/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  for (SpeculativeMethod method : {SpeculativeMethod::kNgram, SpeculativeMethod::kDraft}) {
    ServeConfig config = testing_util::StoriesConfig();
    config.speculative.method = method;
    config.speculative.draft_quantize = Quantization::kInt8;
    auto runtime = testing_util::StartStories(config);
    ASSERT_NE(runtime, nullptr);
    net::HttpResponse speculated = testing_util::Post(*runtime, "/v1/completions", body);
    ASSERT_EQ(speculated.status, 200) << speculated.body;
    EXPECT_EQ(JsonBody(speculated)["choices"][0]["text"], JsonBody(plain)["choices"][0]["text"]);
    const std::string metrics = testing_util::Get(*runtime, "/metrics").body;
    const std::string label = "{method=\"" + std::string(SpeculativeMethodName(method)) + "\"}";
    const double drafts = testing_util::MetricValue(metrics, "surge_spec_decode_num_drafts_total" + label);
    const double proposed = testing_util::MetricValue(metrics, "surge_spec_decode_num_draft_tokens_total" + label);
    const double accepted = testing_util::MetricValue(metrics, "surge_spec_decode_num_accepted_tokens_total" + label);
    EXPECT_GT(drafts, 0) << metrics;
    EXPECT_GT(accepted, 0) << metrics;
    EXPECT_LE(accepted, proposed);
    EXPECT_NEAR(testing_util::MetricValue(metrics, "surge_spec_decode_acceptance_rate" + label), accepted / proposed, 1e-9);
    EXPECT_GE(testing_util::MetricValue(metrics, "surge_spec_decode_num_accepted_tokens_per_pos_total{method=\"" +
                                                     std::string(SpeculativeMethodName(method)) + "\",position=\"0\"}"),
              0);
  }
}

}  // namespace
}  // namespace surge
