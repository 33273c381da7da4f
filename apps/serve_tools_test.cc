// `surge serve --tool-call-parser hermes` on the real engine and model. stories260K never
// calls tools, so the server gets a tokenizer in which one token of the model's greedy
// answer decodes as a whole <tool_call>…</tool_call> (an added token over that id): the
// model, sampler, detokenizer, stop strings and HTTP server are the real ones, and the
// raw text (from /v1/completions, which is never parsed) says what the answer must be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "apps/serve_test_util.h"
#include "server/tool_call_parser.h"

namespace surge {
namespace {

using nlohmann::json;
using testing_util::JsonBody;
using testing_util::SseData;

constexpr int32_t kMaxTokens = 24;
constexpr char kCall[] = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

const json& Messages() {
  static const json messages = {{{"role", "user"}, {"content", "Tell me a story."}}};
  return messages;
}

const json& Tools() {
  static const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
  return tools;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The greedy answer's token ids for Messages(), from a plain stories260K server.
std::vector<int32_t> GreedyAnswer(std::vector<int32_t>* prompt_ids) {
  auto runtime = testing_util::StartStories(testing_util::StoriesConfig());
  if (runtime == nullptr) return {};
  *prompt_ids = JsonBody(testing_util::Post(*runtime, "/tokenize", json{{"messages", Messages()}}.dump()))["tokens"]
                    .get<std::vector<int32_t>>();
  EngineRequest request;
  request.prompt_ids = *prompt_ids;
  request.sampling.temperature = 0;
  request.stop.max_tokens = kMaxTokens;
  auto stream = runtime->engine().Submit(std::move(request), [] {});
  if (!stream.ok()) return {};
  std::vector<int32_t> ids;
  for (RequestOutput output = (*stream)->Wait();; output = (*stream)->Wait()) {
    for (const ChoiceDelta& delta : output.choices) ids.insert(ids.end(), delta.token_ids.begin(), delta.token_ids.end());
    if (output.finished) return ids;
  }
}

// A tokenizer directory: stories260K's, with token `id` decoding as kCall.
std::string WriteToolTokenizer(int32_t id) {
  const std::string dir = ::testing::TempDir() + "/surge_tool_tokenizer";
  std::filesystem::create_directories(dir);
  json tokenizer = json::parse(ReadFile(std::string(testing_util::kStoriesDir) + "/tokenizer.json"));
  tokenizer["added_tokens"].push_back({{"id", id}, {"content", kCall}, {"special", false}});
  std::ofstream(dir + "/tokenizer.json") << tokenizer.dump();
  for (const char* name : {"tokenizer_config.json", "generation_config.json"}) {
    std::filesystem::copy_file(std::string(testing_util::kStoriesDir) + "/" + name, dir + "/" + name,
                               std::filesystem::copy_options::overwrite_existing);
  }
  return dir;
}

class ServeToolsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::vector<int32_t> ids = GreedyAnswer(&prompt_ids_);
    // The call goes where a token comes that has not come before (so it shows once).
    for (size_t i = 3; i + 6 < ids.size() && call_id_ < 0; ++i) {
      if (std::find(ids.begin(), ids.begin() + i, ids[i]) == ids.begin() + i) call_id_ = ids[i];
    }
    if (call_id_ < 0) return;
    ServeConfig config = testing_util::StoriesConfig();
    config.tokenizer_dir = WriteToolTokenizer(call_id_);
    config.tool_call_parser = ToolCallParserKind::kHermes;  // stories260K is a llama: llama3_json by default
    runtime_ = testing_util::StartStories(config).release();
  }
  static void TearDownTestSuite() { delete std::exchange(runtime_, nullptr); }
  void SetUp() override {
    ASSERT_GE(call_id_, 0) << "no token of the greedy answer fits as the call";
    ASSERT_NE(runtime_, nullptr);
  }

  // The model's raw text (completions are not parsed), cut at `stop` if any.
  static std::string RawText(const std::string& stop = "") {
    json request = {{"prompt", prompt_ids_}, {"max_tokens", kMaxTokens}, {"temperature", 0}};
    if (!stop.empty()) request["stop"] = stop;
    return JsonBody(testing_util::Post(*runtime_, "/v1/completions", request.dump()))["choices"][0]["text"];
  }
  // A stop string a little after the call (first seen there), so that the choice ends
  // on its own; "" when there is none.
  static std::string StopAfterCall() {
    const std::string raw = RawText();
    const size_t call = raw.find(kCall);
    if (call == std::string::npos) return "";
    for (size_t at = call + std::strlen(kCall) + 2; at + 3 <= raw.size(); ++at) {
      if (raw.find(raw.substr(at, 3)) == at) return raw.substr(at, 3);
    }
    return "";
  }
  static net::HttpResponse Chat(const json& extra) {
    json request = {{"messages", Messages()}, {"tools", Tools()}, {"max_tokens", kMaxTokens}, {"temperature", 0}};
    request.update(extra);
    return testing_util::Post(*runtime_, "/v1/chat/completions", request.dump());
  }

  static std::vector<int32_t> prompt_ids_;
  static int32_t call_id_;
  static ServeRuntime* runtime_;
};

std::vector<int32_t> ServeToolsTest::prompt_ids_;
int32_t ServeToolsTest::call_id_ = -1;
ServeRuntime* ServeToolsTest::runtime_ = nullptr;

TEST_F(ServeToolsTest, WholeAnswerCarriesTheCall) {
  const std::string stop = StopAfterCall();
  ASSERT_EQ(stop.size(), 3u);
  const ToolCallDelta expected = ParseToolCalls(ToolCallParserKind::kHermes, RawText(stop));
  ASSERT_EQ(expected.calls.size(), 1u);
  const net::HttpResponse response = Chat({{"stop", stop}});
  ASSERT_EQ(response.status, 200) << response.body;
  const json choice = JsonBody(response)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["content"], expected.content.empty() ? json() : json(expected.content));
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << choice;
  const json& call = choice["message"]["tool_calls"][0];
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"], json({{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}));
}

TEST_F(ServeToolsTest, StreamOfTwoChoicesSendsTheCallEach) {
  const std::string stop = StopAfterCall();
  ASSERT_EQ(stop.size(), 3u);
  const ToolCallDelta expected = ParseToolCalls(ToolCallParserKind::kHermes, RawText(stop));
  const net::HttpResponse response = Chat({{"stop", stop}, {"stream", true}, {"n", 2}});
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.body.find("tool_call>"), std::string::npos);
  std::string content[2], arguments[2], name[2], finish[2];
  for (const std::string& data : SseData(response.body)) {
    if (data == "[DONE]") continue;
    const json choice = json::parse(data)["choices"][0];
    const int index = choice["index"];
    const json& delta = choice["delta"];
    if (delta.contains("content")) content[index] += delta["content"].get<std::string>();
    for (const json& call : delta.value("tool_calls", json::array())) {
      EXPECT_EQ(call["index"], 0);
      if (call.contains("id")) name[index] += call["function"]["name"].get<std::string>();
      arguments[index] += call["function"]["arguments"].get<std::string>();
    }
    if (choice["finish_reason"].is_string()) finish[index] = choice["finish_reason"];
  }
  for (int index : {0, 1}) {
    EXPECT_EQ(content[index], expected.content) << index;
    EXPECT_EQ(name[index], "get_weather") << index;
    EXPECT_EQ(arguments[index], R"({"city":"Paris"})") << index;
    EXPECT_EQ(finish[index], "tool_calls") << index;
  }
}

}  // namespace
}  // namespace surge
