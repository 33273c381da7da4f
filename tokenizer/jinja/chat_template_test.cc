// RenderChatTemplate on real templates with hand-checked prompts.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tokenizer/jinja/template.h"

namespace surge::jinja {
namespace {

using nlohmann::ordered_json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Qwen2.5-style ChatML template (shape of the real one: tools, tool calls, namespace).
constexpr const char* kChatMl = R"({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools><|im_end|>\n" }}
{%- elif messages[0]['role'] == 'system' %}
    {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == "user" or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}{{- tool_call.arguments | tojson }}{{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)";

TEST(ChatTemplateTest, ChatMlWithToolCalls) {
  ordered_json messages = ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [
      {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}}]}
  ])");
  auto prompt = RenderChatTemplate(kChatMl, messages, /*add_generation_prompt=*/true);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(*prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
            "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
            "{\"city\": \"Paris\", \"unit\": \"C\"}}\n</tool_call><|im_end|>\n"
            "<|im_start|>assistant\n");
  ordered_json extra = {{"tools", ordered_json::parse(R"([{"name": "f", "b": 1, "a": 2}])")}};
  auto with_tools = RenderChatTemplate(kChatMl, ordered_json::parse(R"([{"role": "user", "content": "x"}])"), false, extra);
  ASSERT_TRUE(with_tools.ok());
  EXPECT_EQ(*with_tools,
            "<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n<tools>\n"
            "{\"name\": \"f\", \"b\": 1, \"a\": 2}\n</tools><|im_end|>\n<|im_start|>user\nx<|im_end|>\n");
}

TEST(ChatTemplateTest, Llama2TemplateFromTestData) {
  std::string source = ReadFile("tests/data/jinja/llama2_chat_template.jinja");
  ASSERT_FALSE(source.empty()) << "run from the repository root";
  auto parsed = Template::Parse(source);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ordered_json extra = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  ordered_json messages = ordered_json::parse(R"([
    {"role": "system", "content": "Be nice."},
    {"role": "user", "content": " Hi "},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Bye"}
  ])");
  auto prompt = RenderChatTemplate(*parsed, messages, true, extra);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(*prompt, "<s>[INST] <<SYS>>\nBe nice.\n<</SYS>>\n\n Hi [/INST] Hello! </s><s>[INST] Bye [/INST]");
  ordered_json bad = ordered_json::parse(R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])");
  auto refused = RenderChatTemplate(*parsed, bad, true, extra);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "Conversation roles must alternate user/assistant/user/assistant/...");
}

TEST(ChatTemplateTest, RejectsMalformedArguments) {
  EXPECT_FALSE(RenderChatTemplate("{{ messages }}", ordered_json::object(), true).ok());
  EXPECT_FALSE(RenderChatTemplate("{{ messages }}", ordered_json::array(), true, ordered_json::array()).ok());
  EXPECT_FALSE(RenderChatTemplate("{% if %}", ordered_json::array(), true).ok());
}

TEST(ChatTemplateTest, TemplateIsReusableAndCopyable) {
  auto parsed = Template::Parse("{{ messages | length }}{{ add_generation_prompt }}");
  ASSERT_TRUE(parsed.ok());
  Template copy = *parsed;
  EXPECT_EQ(RenderChatTemplate(copy, ordered_json::array({1, 2}), true).value(), "2True");
  EXPECT_EQ(RenderChatTemplate(*parsed, ordered_json::array(), false).value(), "0False");
}

}  // namespace
}  // namespace surge::jinja
