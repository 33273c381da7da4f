// `surge serve --reasoning-parser deepseek-r1` on the real engine and model. stories260K
// never writes "</think>", so the server gets a tokenizer in which one token of the
// model's greedy answer decodes as "</think>" (an added token over that id, special or
// not): the model, sampler, detokenizer, stop strings and HTTP server are the real ones,
// and the raw text (from /v1/completions, which the parser leaves alone) says where the
// answer must split.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/serve_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using testing_util::JsonBody;
using testing_util::SseData;

constexpr int32_t kMaxTokens = 24;
constexpr size_t kMinReasoningTokens = 4;

const json& Messages() {
  static const json messages = {{{"role", "user"}, {"content", "Tell me a story."}}};
  return messages;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

struct Greedy {
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> output_ids;
};

// The chat prompt and its greedy answer, token by token, from a plain stories260K server.
Greedy GreedyAnswer() {
  Greedy greedy;
  auto runtime = testing_util::StartStories(testing_util::StoriesConfig());
  if (runtime == nullptr) return greedy;
  const json tokenized = JsonBody(testing_util::Post(*runtime, "/tokenize", json{{"messages", Messages()}}.dump()));
  greedy.prompt_ids = tokenized["tokens"].get<std::vector<int32_t>>();
  EngineRequest request;
  request.prompt_ids = greedy.prompt_ids;
  request.sampling.temperature = 0;
  request.stop.max_tokens = kMaxTokens;
  auto stream = runtime->engine().Submit(std::move(request), [] {});
  if (!stream.ok()) return greedy;
  for (RequestOutput output = (*stream)->Wait();; output = (*stream)->Wait()) {
    for (const ChoiceDelta& delta : output.choices) {
      greedy.output_ids.insert(greedy.output_ids.end(), delta.token_ids.begin(), delta.token_ids.end());
    }
    if (output.finished) break;
  }
  return greedy;
}

// The first position, after a few tokens of thinking, whose token has not come before.
size_t PickCloseTagPosition(const std::vector<int32_t>& ids) {
  for (size_t i = kMinReasoningTokens; i + 4 < ids.size(); ++i) {
    if (std::find(ids.begin(), ids.begin() + i, ids[i]) == ids.begin() + i) return i;
  }
  return 0;
}

// A tokenizer directory: stories260K's, with token `id` decoding as "</think>".
std::string WriteThinkingTokenizer(int32_t id, bool special) {
  const std::string dir = ::testing::TempDir() + "/surge_think_tokenizer_" + (special ? "special" : "plain");
  std::filesystem::create_directories(dir);
  json tokenizer = json::parse(ReadFile(std::string(testing_util::kStoriesDir) + "/tokenizer.json"));
  tokenizer["added_tokens"].push_back({{"id", id}, {"content", "</think>"}, {"special", special}});
  std::ofstream(dir + "/tokenizer.json") << tokenizer.dump();
  for (const char* name : {"tokenizer_config.json", "generation_config.json"}) {
    std::filesystem::copy_file(std::string(testing_util::kStoriesDir) + "/" + name, dir + "/" + name,
                               std::filesystem::copy_options::overwrite_existing);
  }
  return dir;
}

struct Split {
  std::string reasoning;
  json content;  // null when there is no answer
};

class ServeReasoningTest : public ::testing::TestWithParam<bool> {  // param: the tag is special
 protected:
  static void SetUpTestSuite() {
    greedy_ = new Greedy(GreedyAnswer());
    close_at_ = PickCloseTagPosition(greedy_->output_ids);
    if (close_at_ == 0) return;
    for (bool special : {false, true}) {
      ServeConfig config = testing_util::StoriesConfig();
      config.tokenizer_dir = WriteThinkingTokenizer(greedy_->output_ids[close_at_], special);
      config.server.reasoning_parser = ReasoningParserKind::kDeepSeekR1;
      runtimes_[special] = testing_util::StartStories(config).release();
    }
  }
  static void TearDownTestSuite() {
    for (ServeRuntime*& runtime : runtimes_) delete std::exchange(runtime, nullptr);
    delete std::exchange(greedy_, nullptr);
  }
  void SetUp() override {
    ASSERT_EQ(greedy_->output_ids.size(), static_cast<size_t>(kMaxTokens));
    ASSERT_NE(close_at_, 0u) << "no token of the greedy answer fits as the close tag";
    ASSERT_NE(runtimes_[GetParam()], nullptr);
  }
  net::HttpResponse Post(const std::string& path, const json& body) const {
    return testing_util::Post(*runtimes_[GetParam()], path, body.dump());
  }
  json Chat(const json& extra) const {
    json request = {{"messages", Messages()}, {"max_tokens", kMaxTokens}, {"temperature", 0}};
    request.update(extra);
    net::HttpResponse response = Post("/v1/chat/completions", request);
    EXPECT_EQ(response.status, 200) << response.body;
    return request.value("stream", false) ? json(response.body) : JsonBody(response);
  }
  // The model's text with the tag in it (completions are not parsed), cut at `stop`.
  std::string RawText(const std::string& stop = "") const {
    json request = {{"prompt", greedy_->prompt_ids}, {"max_tokens", kMaxTokens}, {"temperature", 0},
                    {"skip_special_tokens", false}};
    if (!stop.empty()) request["stop"] = stop;
    return JsonBody(Post("/v1/completions", request))["choices"][0]["text"];
  }
  static Split Expected(const std::string& raw) {
    const size_t at = raw.find("</think>");
    if (at == std::string::npos) return {raw, nullptr};
    const std::string content = raw.substr(at + 8);
    return {raw.substr(0, at), content.empty() ? json() : json(content)};
  }

  static Greedy* greedy_;
  static size_t close_at_;
  static ServeRuntime* runtimes_[2];
};

Greedy* ServeReasoningTest::greedy_ = nullptr;
size_t ServeReasoningTest::close_at_ = 0;
ServeRuntime* ServeReasoningTest::runtimes_[2] = {nullptr, nullptr};

TEST_P(ServeReasoningTest, WholeAnswerSplitsAtTheCloseTag) {
  const std::string raw = RawText();
  ASSERT_THAT(raw, HasSubstr("</think>"));
  const Split expected = Expected(raw);
  ASSERT_FALSE(expected.reasoning.empty());
  ASSERT_TRUE(expected.content.is_string());
  const json body = Chat(json::object());
  const json& message = body["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], expected.reasoning) << raw;
  EXPECT_EQ(message["content"], expected.content) << raw;
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], kMaxTokens);
  EXPECT_EQ(body["usage"]["completion_tokens_details"]["reasoning_tokens"], close_at_);
}

TEST_P(ServeReasoningTest, StreamOfTwoChoicesSendsReasoningThenContentEach) {
  const Split expected = Expected(RawText());
  const std::string body =
      Chat({{"stream", true}, {"n", 2}, {"stream_options", {{"include_usage", true}}}}).get<std::string>();
  EXPECT_THAT(body, Not(HasSubstr("think>")));
  std::string reasoning[2], content[2];
  json usage;
  for (const std::string& data : SseData(body)) {
    if (data == "[DONE]") continue;
    const json chunk = json::parse(data);
    if (chunk["choices"].empty()) {
      usage = chunk["usage"];
      continue;
    }
    const int index = chunk["choices"][0]["index"];
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) {
      EXPECT_EQ(content[index], "") << "reasoning after content: " << data;
      reasoning[index] += delta["reasoning_content"].get<std::string>();
    }
    if (delta.contains("content")) content[index] += delta["content"].get<std::string>();
  }
  for (int index : {0, 1}) {
    EXPECT_EQ(reasoning[index], expected.reasoning) << index;
    EXPECT_EQ(content[index], expected.content.get<std::string>()) << index;
  }
  EXPECT_EQ(usage["completion_tokens_details"]["reasoning_tokens"], 2 * close_at_);
}

// Stop strings act on the model's text, tag included, before the parser splits it.
TEST_P(ServeReasoningTest, StopStringsCutTheTextBeforeItIsSplit) {
  const std::string raw = RawText();
  const size_t tag_at = raw.find("</think>");
  const std::string in_reasoning = raw.substr(tag_at / 2, 3);
  const std::string in_content = raw.substr(tag_at + 8 + 2, 3);
  for (const std::string& stop : {in_reasoning, in_content, std::string("</think>")}) {
    SCOPED_TRACE("stop \"" + stop + "\" in \"" + raw + "\"");
    const Split expected = Expected(RawText(stop));
    const json choice = Chat({{"stop", stop}})["choices"][0];
    EXPECT_EQ(choice["message"]["reasoning_content"], expected.reasoning);
    EXPECT_EQ(choice["message"]["content"], expected.content);
    EXPECT_EQ(choice["finish_reason"], "stop");
  }
}

INSTANTIATE_TEST_SUITE_P(TagTokens, ServeReasoningTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Special" : "Plain";
                         });

}  // namespace
}  // namespace surge
