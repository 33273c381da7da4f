// Workloads and request bodies: reproducible, sized as asked, shared prefixes shared,
// conversations resent whole, datasets read as vLLM's benchmark reads them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "bench/request_builder.h"
#include "bench/word_list.h"
#include "bench/workload.h"

namespace surge::bench {
namespace {

using Json = nlohmann::json;

int64_t NumWords(const std::string& text) {
  return text.empty() ? 0 : 1 + static_cast<int64_t>(std::count(text.begin(), text.end(), ' '));
}

std::unique_ptr<Workload> Make(const WorkloadConfig& config) {
  StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(config);
  EXPECT_TRUE(workload.ok()) << workload.status().ToString();
  return std::move(workload).value();
}

std::string TempFile(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << content;
  return path;
}

TEST(WorkloadTest, RandomPromptsAreReproducibleAndSized) {
  WorkloadConfig config;
  config.input = {100, 0.2};
  config.output = {50, 0};
  config.seed = 7;
  config.tokens_per_word = 2.0;
  std::unique_ptr<Workload> workload = Make(config);
  Session a = workload->MakeSession(1, 3), b = workload->MakeSession(1, 3);
  EXPECT_EQ(a.turns[0].text, b.turns[0].text);
  EXPECT_NE(a.turns[0].text, workload->MakeSession(1, 4).turns[0].text);
  EXPECT_NE(a.turns[0].text, workload->MakeSession(2, 3).turns[0].text);  // another round
  for (int i = 0; i < 50; ++i) {
    Session s = workload->MakeSession(1, i);
    ASSERT_EQ(s.turns.size(), 1u);
    EXPECT_GE(s.turns[0].prompt_tokens, 80);
    EXPECT_LE(s.turns[0].prompt_tokens, 120);
    EXPECT_EQ(NumWords(s.turns[0].text), WordsForTokens(s.turns[0].prompt_tokens, 2.0));
    EXPECT_EQ(s.turns[0].max_tokens, 50);
  }
  config.seed = 8;
  EXPECT_NE(Make(config)->MakeSession(1, 3).turns[0].text, a.turns[0].text);
}

TEST(WorkloadTest, SharedPrefixGroups) {
  WorkloadConfig config;
  config.kind = WorkloadKind::kSharedPrefix;
  config.num_groups = 3;
  config.prefix_len_tokens = 64;
  config.input = {16, 0};
  std::unique_ptr<Workload> workload = Make(config);
  std::set<std::string> prefixes, suffixes;
  for (int i = 0; i < 60; ++i) {
    Session s = workload->MakeSession(1, i);
    EXPECT_EQ(NumWords(s.system_prompt), 64);
    EXPECT_EQ(s.system_tokens, 64);
    prefixes.insert(s.system_prompt);
    suffixes.insert(s.turns[0].text);
  }
  EXPECT_EQ(prefixes.size(), 3u);
  EXPECT_EQ(suffixes.size(), 60u);
  RequestOptions options{Endpoint::kCompletions, "m", true};
  Session s = workload->MakeSession(1, 0);
  Json body = Json::parse(BuildRequest(options, s, 0, {}, 0).body);
  EXPECT_EQ(body["prompt"], s.system_prompt + " " + s.turns[0].text);
  options.endpoint = Endpoint::kChat;
  body = Json::parse(BuildRequest(options, s, 0, {}, 0).body);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][0]["content"], s.system_prompt);
}

TEST(WorkloadTest, CompletionBodyAsksForAStreamWithUsage) {
  Session s;
  s.turns.push_back({"hello there", 32, 2});
  BuiltRequest built = BuildRequest({Endpoint::kCompletions, "tiny", true}, s, 0, {}, 0);
  EXPECT_EQ(built.path, "/v1/completions");
  EXPECT_EQ(built.prompt_tokens_estimate, 2);
  Json body = Json::parse(built.body);
  EXPECT_EQ(body["model"], "tiny");
  EXPECT_EQ(body["prompt"], "hello there");
  EXPECT_EQ(body["max_tokens"], 32);
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  body = Json::parse(BuildRequest({Endpoint::kCompletions, "", false}, s, 0, {}, 0).body);
  EXPECT_FALSE(body.contains("model"));
  EXPECT_FALSE(body.contains("ignore_eos"));
  EXPECT_FALSE(body.contains("temperature"));  // unset: the server's default
  body = Json::parse(BuildRequest({Endpoint::kCompletions, "", false, 0.0}, s, 0, {}, 0).body);
  EXPECT_EQ(body["temperature"], 0.0);
}

TEST(WorkloadTest, MultiTurnResendsTheHistory) {
  WorkloadConfig config;
  config.kind = WorkloadKind::kMultiTurn;
  config.turns = 3;
  config.input = {8, 0};
  config.output = {4, 0};
  Session s = Make(config)->MakeSession(1, 0);
  ASSERT_EQ(s.turns.size(), 3u);
  std::vector<std::string> answers = {"first answer", "second answer"};
  BuiltRequest built = BuildRequest({Endpoint::kChat, "m", true}, s, 2, answers, 10);
  EXPECT_EQ(built.path, "/v1/chat/completions");
  EXPECT_EQ(built.prompt_tokens_estimate, 8 * 3 + 10);
  Json messages = Json::parse(built.body)["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0]["content"], s.turns[0].text);
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"], "first answer");
  EXPECT_EQ(messages[3]["content"], "second answer");
  EXPECT_EQ(messages[4]["role"], "user");
  EXPECT_EQ(messages[4]["content"], s.turns[2].text);
}

TEST(WorkloadTest, ShareGptTakesTheFirstHumanTurn) {
  std::string path = TempFile("sharegpt.json", R"([
    {"id": "a", "conversations": [{"from": "human", "value": "one two three"},
                                  {"from": "gpt", "value": "four five six seven"}]},
    {"id": "b", "conversations": [{"from": "gpt", "value": "no human here"}]},
    {"id": "c", "conversations": [{"from": "system", "value": "x"}, {"from": "human", "value": "hi"},
                                  {"from": "gpt", "value": "hello"}]}])");
  WorkloadConfig config;
  config.kind = WorkloadKind::kShareGpt;
  config.dataset_path = path;
  std::unique_ptr<Workload> workload = Make(config);
  std::set<std::string> prompts;
  for (int i = 0; i < 4; ++i) {
    Session s = workload->MakeSession(1, i);
    prompts.insert(s.turns[0].text);
    EXPECT_EQ(s.turns[0].max_tokens, s.turns[0].text == "hi" ? 1 : 4);
  }
  EXPECT_EQ(prompts, (std::set<std::string>{"one two three", "hi"}));
  config.output_len_set = true;
  config.output = {9, 0};
  EXPECT_EQ(Make(config)->MakeSession(1, 0).turns[0].max_tokens, 9);
  config.dataset_path = TempFile("bad.json", "{\"not\": \"an array\"}");
  EXPECT_FALSE(MakeWorkload(config).ok());
  config.dataset_path = "/nonexistent/file.json";
  EXPECT_EQ(MakeWorkload(config).status().code(), StatusCode::kNotFound);
}

TEST(WorkloadTest, JsonlBodiesAreSentAsGiven) {
  std::string path = TempFile("bodies.jsonl",
                              "{\"prompt\": \"a b c\", \"max_tokens\": 5, \"temperature\": 0.5}\n\n"
                              "{\"messages\": [{\"role\": \"user\", \"content\": \"hi there\"}], \"model\": \"own\"}\n");
  WorkloadConfig config;
  config.kind = WorkloadKind::kJsonl;
  config.dataset_path = path;
  std::unique_ptr<Workload> workload = Make(config);
  int num_chat = 0;
  for (int i = 0; i < 2; ++i) {
    BuiltRequest built = BuildRequest({Endpoint::kCompletions, "m", true}, workload->MakeSession(1, i), 0, {}, 0);
    Json body = Json::parse(built.body);
    EXPECT_EQ(body["stream"], true);
    EXPECT_EQ(body["stream_options"]["include_usage"], true);
    if (body.contains("messages")) {
      ++num_chat;
      EXPECT_EQ(built.path, "/v1/chat/completions");
      EXPECT_EQ(body["model"], "own");  // the body's own model stays
    } else {
      EXPECT_EQ(built.path, "/v1/completions");
      EXPECT_EQ(body["model"], "m");
      EXPECT_EQ(body["temperature"], 0.5);
      EXPECT_EQ(body["max_tokens"], 5);
    }
  }
  EXPECT_EQ(num_chat, 1);
  config.dataset_path = TempFile("broken.jsonl", "{\"prompt\": \"ok\"}\n[1, 2]\n");
  StatusOr<std::unique_ptr<Workload>> broken = MakeWorkload(config);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find(":2:"), std::string::npos) << broken.status().message();
}

}  // namespace
}  // namespace surge::bench
