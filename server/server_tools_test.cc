// Tool calling through the server against a scripted engine: each parser family's text,
// whole and streamed, comes back in OpenAI's shapes (message.tool_calls, content null,
// finish_reason "tool_calls"; delta.tool_calls with id/type/name first, then arguments);
// n > 1, the reasoning parser before it, parallel_tool_calls, tool_choice none, and
// tool_choice required / named (constrained JSON, parsed whatever the parser).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using testing_util::Delta;
using testing_util::FakeEngine;

constexpr char kTools[] = R"("tools": [{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "get_time"}}])";
constexpr char kCall[] = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

// One streamed choice put together the way an OpenAI client does it.
struct StreamedChoice {
  std::string content;
  std::vector<json> calls;  // {"id", "type", "function": {"name", "arguments"}}
  json finish_reason;
};

// Also checks the shape of each tool-call delta: the first of a call carries id, type,
// name and "arguments": ""; the later ones only index and function.arguments.
std::map<int, StreamedChoice> Collect(const std::string& body) {
  std::map<int, StreamedChoice> choices;
  for (const json& event : testing_util::SseEvents(body)) {
    for (const json& choice : event["choices"]) {
      StreamedChoice& out = choices[choice["index"].get<int>()];
      const json& delta = choice["delta"];
      if (delta.contains("content")) out.content += delta["content"].get<std::string>();
      if (!choice["finish_reason"].is_null()) out.finish_reason = choice["finish_reason"];
      for (const json& call : delta.value("tool_calls", json::array())) {
        const size_t index = call["index"].get<size_t>();
        if (index == out.calls.size()) {
          EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_")) << call;
          EXPECT_EQ(call["type"], "function") << call;
          EXPECT_EQ(call["function"]["arguments"], "") << call;
          out.calls.push_back({{"id", call["id"]}, {"type", "function"}, {"function", call["function"]}});
          continue;
        }
        EXPECT_EQ(index + 1, out.calls.size()) << call;
        EXPECT_FALSE(call.contains("id") || call.contains("type") || call["function"].contains("name")) << call;
        out.calls.at(index)["function"]["arguments"] =
            out.calls.at(index)["function"]["arguments"].get<std::string>() + call["function"]["arguments"].get<std::string>();
      }
    }
  }
  return choices;
}

class ToolServerTest : public testing_util::FakeServerTest {
 public:
  void StartServer(ToolCallParserKind parser, bool special_tags = false,
                   ReasoningParserKind reasoning = ReasoningParserKind::kNone) {
    tokenizer_ = testing_util::TokenizerWithTags({"<tool_call>", "</tool_call>"}, special_tags);
    ASSERT_NE(tokenizer_, nullptr);
    ServerOptions options = testing_util::FakeServerOptions();
    options.chat_template = testing_util::ReadFile("tests/data/chat_template_simple.jinja");
    options.tool_call_parser = parser;
    options.reasoning_parser = reasoning;
    FakeServerTest::StartServer(*tokenizer_, options);
  }
  std::future<net::HttpResponse> Chat(const std::string& extra) {
    const std::string url = Url("/v1/chat/completions");
    const std::string body =
        R"({"messages": [{"role": "user", "content": "Weather?"}], "max_tokens": 50, )" + extra + "}";
    return std::async(std::launch::async, [url, body] {
      auto response = net::Fetch("POST", url, body);
      return response.ok() ? *response : net::HttpResponse{};
    });
  }
  using FakeServerTest::engine_;
};

TEST_F(ToolServerTest, HermesWholeResponseCarriesToolCalls) {
  StartServer(ToolCallParserKind::kHermes);
  auto response = Chat(std::string(kTools) + R"(, "n": 2)");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_TRUE(engine_.submitted(0).request.skip_special_tokens) << "the tags are not special here";
  engine_.Emit(0, Delta(0, "Let me check.\n" + std::string(kCall) + "\n", {4, 5}, FinishReason::kStop));
  engine_.Emit(0, Delta(1, kCall, {6}, FinishReason::kStop, /*finished=*/true));
  const net::HttpResponse http = response.get();
  ASSERT_EQ(http.status, 200) << http.body;
  const json body = json::parse(http.body);
  for (int i = 0; i < 2; ++i) {
    const json& choice = body["choices"][i];
    EXPECT_EQ(choice["finish_reason"], "tool_calls");
    const json& calls = choice["message"]["tool_calls"];
    ASSERT_EQ(calls.size(), 1u) << choice;
    EXPECT_TRUE(calls[0]["id"].get<std::string>().starts_with("call_"));
    EXPECT_EQ(calls[0]["type"], "function");
    EXPECT_EQ(calls[0]["function"], json({{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}));
  }
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Let me check.");
  EXPECT_TRUE(body["choices"][1]["message"]["content"].is_null()) << body;
  EXPECT_NE(body["choices"][0]["message"]["tool_calls"][0]["id"], body["choices"][1]["message"]["tool_calls"][0]["id"]);
}

TEST_F(ToolServerTest, HermesStreamPerChoice) {
  StartServer(ToolCallParserKind::kHermes);
  auto response = Chat(std::string(kTools) + R"(, "n": 2, "stream": true)");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  const std::string two_calls = std::string(kCall) + "\n<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>";
  for (size_t at = 0; at < two_calls.size(); at += 7) {
    engine_.Emit(0, Delta(0, two_calls.substr(at, 7), {4}));
    if (at == 14) engine_.Emit(0, Delta(1, "No <tool", {5}));
  }
  engine_.Emit(0, Delta(1, "s> needed.", {6}, FinishReason::kStop));
  engine_.Emit(0, Delta(0, "", {}, FinishReason::kStop, /*finished=*/true));
  const net::HttpResponse http = response.get();
  EXPECT_THAT(http.body, Not(HasSubstr("tool_call>")));
  std::map<int, StreamedChoice> choices = Collect(http.body);
  EXPECT_EQ(choices[0].content, "");
  ASSERT_EQ(choices[0].calls.size(), 2u);
  EXPECT_EQ(choices[0].calls[0]["function"], json({{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}));
  EXPECT_EQ(choices[0].calls[1]["function"], json({{"name", "get_time"}, {"arguments", "{}"}}));
  EXPECT_EQ(choices[0].finish_reason, "tool_calls");
  EXPECT_EQ(choices[1].content, "No <tools> needed.");
  EXPECT_TRUE(choices[1].calls.empty());
  EXPECT_EQ(choices[1].finish_reason, "stop");
}

// The other families, streamed in small pieces: the same OpenAI shapes.
void ExpectStreamedCall(ToolServerTest& test, const std::string& text, const std::string& content) {
  auto response = test.Chat(std::string(kTools) + R"(, "stream": true)");
  ASSERT_TRUE(test.engine_.WaitForSubmitted(1));
  // Pieces of about 5 bytes, whole characters each (engine text is complete UTF-8).
  for (size_t at = 0, end = 0; at < text.size(); at = end) {
    end = std::min(text.size(), at + 5);
    while (end < text.size() && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) ++end;
    test.engine_.Emit(0, Delta(0, text.substr(at, end - at), {4}));
  }
  test.engine_.Emit(0, Delta(0, "", {}, FinishReason::kStop, /*finished=*/true));
  std::map<int, StreamedChoice> choices = Collect(response.get().body);
  EXPECT_EQ(choices[0].content, content);
  ASSERT_EQ(choices[0].calls.size(), 1u);
  EXPECT_EQ(choices[0].calls[0]["function"], json({{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}));
  EXPECT_EQ(choices[0].finish_reason, "tool_calls");
}

TEST_F(ToolServerTest, DeepSeekV3Stream) {
  StartServer(ToolCallParserKind::kDeepSeekV3);
  ExpectStreamedCall(*this,
                     "好的。<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
                     "```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                     "好的。");
}

TEST_F(ToolServerTest, Llama3JsonStream) {
  StartServer(ToolCallParserKind::kLlama3Json);
  ExpectStreamedCall(*this, R"({"name": "get_weather", "parameters": {"city": "Paris"}})", "");
}

TEST_F(ToolServerTest, CutByLengthKeepsLengthAndSpecialTagsAreDecoded) {
  StartServer(ToolCallParserKind::kHermes, /*special_tags=*/true);
  auto response = Chat(kTools);
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_FALSE(engine_.submitted(0).request.skip_special_tokens) << "<tool_call> is special: it must be decoded";
  engine_.Emit(0, Delta(0, kCall, {4}, FinishReason::kLength, /*finished=*/true));
  const json choice = json::parse(response.get().body)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "length");
  EXPECT_EQ(choice["message"]["tool_calls"].size(), 1u);
}

TEST_F(ToolServerTest, ParallelToolCallsFalseKeepsTheFirstCall) {
  StartServer(ToolCallParserKind::kHermes);
  auto response = Chat(std::string(kTools) + R"(, "parallel_tool_calls": false)");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, std::string(kCall) + kCall, {4}, FinishReason::kStop, /*finished=*/true));
  const json message = json::parse(response.get().body)["choices"][0]["message"];
  EXPECT_EQ(message["tool_calls"].size(), 1u) << message;
  EXPECT_TRUE(message["content"].is_null());
}

// Without tools, with tool_choice none, or under parser none, the text stays as it is.
TEST_F(ToolServerTest, TextIsNotParsedWithoutToolsOrWithToolChoiceNone) {
  StartServer(ToolCallParserKind::kHermes);
  const std::vector<std::string> requests = {R"("n": 1)", std::string(kTools) + R"(, "tool_choice": "none")",
                                             R"("tool_choice": "auto")"};
  for (size_t i = 0; i < requests.size(); ++i) {
    auto response = Chat(requests[i]);
    ASSERT_TRUE(engine_.WaitForSubmitted(i + 1));
    engine_.Emit(i, Delta(0, kCall, {4}, FinishReason::kStop, /*finished=*/true));
    const json choice = json::parse(response.get().body)["choices"][0];
    EXPECT_EQ(choice["message"]["content"], kCall) << requests[i];
    EXPECT_FALSE(choice["message"].contains("tool_calls"));
    EXPECT_EQ(choice["finish_reason"], "stop");
  }
}

// tool_choice naming a function: the engine holds the output to the function's
// parameters, and that output is the call's arguments, streamed in fragments -- under any
// --tool-call-parser, none too.
TEST_F(ToolServerTest, NamedToolChoiceStreamsTheConstrainedArguments) {
  StartServer(ToolCallParserKind::kNone);
  auto response = Chat(std::string(kTools) + R"(, "stream": true,
      "tool_choice": {"type": "function", "function": {"name": "get_weather"}})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_NE(engine_.submitted(0).request.constraint, nullptr);
  for (const char* piece : {"{\"city\"", ": \"Par", "is\"}"}) engine_.Emit(0, Delta(0, piece, {4}));
  engine_.Emit(0, Delta(0, "", {}, FinishReason::kStop, /*finished=*/true));
  const std::string body = response.get().body;
  std::map<int, StreamedChoice> choices = Collect(body);
  EXPECT_EQ(choices[0].content, "");
  ASSERT_EQ(choices[0].calls.size(), 1u);
  EXPECT_EQ(choices[0].calls[0]["function"], json({{"name", "get_weather"}, {"arguments", R"({"city": "Paris"})"}}));
  EXPECT_EQ(choices[0].finish_reason, "tool_calls");
  size_t num_fragments = 0;
  for (size_t at = body.find("\"arguments\""); at != std::string::npos; at = body.find("\"arguments\"", at + 1)) ++num_fragments;
  EXPECT_EQ(num_fragments, 4u) << "the opening delta with \"\", then one per piece";
}

TEST_F(ToolServerTest, NamedToolChoiceWholeResponse) {
  StartServer(ToolCallParserKind::kHermes);
  auto response = Chat(std::string(kTools) + R"(, "tool_choice": {"type": "function", "function": {"name": "get_time"}})");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "{}", {4}, FinishReason::kStop, /*finished=*/true));
  const json choice = json::parse(response.get().body)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null());
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"], json({{"name", "get_time"}, {"arguments", "{}"}}));
}

// "required": the output is a JSON list of calls, each sent once its object is complete.
TEST_F(ToolServerTest, RequiredToolChoiceParsesTheListOfCalls) {
  StartServer(ToolCallParserKind::kLlama3Json);
  auto response = Chat(std::string(kTools) + R"(, "stream": true, "tool_choice": "required")");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_NE(engine_.submitted(0).request.constraint, nullptr);
  const std::string text = R"([{"name": "get_weather", "parameters": {"city": "Pa]ris"}}, {"name": "get_time", "parameters": {}}])";
  for (size_t at = 0; at < text.size(); at += 3) engine_.Emit(0, Delta(0, text.substr(at, 3), {4}));
  engine_.Emit(0, Delta(0, "", {}, FinishReason::kStop, /*finished=*/true));
  std::map<int, StreamedChoice> choices = Collect(response.get().body);
  EXPECT_EQ(choices[0].content, "");
  ASSERT_EQ(choices[0].calls.size(), 2u);
  EXPECT_EQ(choices[0].calls[0]["function"], json({{"name", "get_weather"}, {"arguments", R"({"city":"Pa]ris"})"}}));
  EXPECT_EQ(choices[0].calls[1]["function"], json({{"name", "get_time"}, {"arguments", "{}"}}));
  EXPECT_EQ(choices[0].finish_reason, "tool_calls");
}

TEST_F(ToolServerTest, BadToolChoicesAreRefused) {
  StartServer(ToolCallParserKind::kHermes);
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {R"("tool_choice": {"type": "function", "function": {"name": "nope"}})", "tool_choice", "not in tools"},
      {R"("tool_choice": "sometimes")", "tool_choice", "tool_choice must be"},
      {R"("tool_choice": "required", "response_format": {"type": "json_object"})", "response_format",
       "cannot be combined"}};
  for (const auto& [field, param, message] : cases) {
    const net::HttpResponse http = Chat(std::string(kTools) + ", " + field).get();
    EXPECT_EQ(http.status, 400) << field;
    const json error = json::parse(http.body)["error"];
    EXPECT_EQ(error["param"], param) << field;
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr(message)) << field;
  }
  EXPECT_EQ(engine_.num_submitted(), 0u);
}

// Under --reasoning-parser, calls are parsed in the answer only, after </think>.
TEST_F(ToolServerTest, CallsAreParsedAfterTheReasoning) {
  StartServer(ToolCallParserKind::kHermes, false, ReasoningParserKind::kDeepSeekR1);
  auto response = Chat(std::string(kTools) + R"(, "stream": true)");
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  engine_.Emit(0, Delta(0, "Maybe " + std::string(kCall) + "?</th", {4}));
  engine_.Emit(0, Delta(0, "ink>\n\n" + std::string(kCall), {5}, FinishReason::kStop, /*finished=*/true));
  const std::string body = response.get().body;
  std::string reasoning;
  for (const json& event : testing_util::SseEvents(body)) {
    for (const json& choice : event["choices"]) reasoning += choice["delta"].value("reasoning_content", "");
  }
  EXPECT_EQ(reasoning, "Maybe " + std::string(kCall) + "?");
  std::map<int, StreamedChoice> choices = Collect(body);
  EXPECT_EQ(choices[0].content, "");
  EXPECT_EQ(choices[0].calls.size(), 1u);
  EXPECT_EQ(choices[0].finish_reason, "tool_calls");
}

}  // namespace
}  // namespace surge
