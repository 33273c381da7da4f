// libFuzzer target: the Jinja interpreter for chat templates (tokenizer/jinja/). The
// input is a template source, then optionally a NUL and a JSON object used as the render
// context; without one (or when it does not parse to an object) a fixed chat context
// renders instead. Default Limits: every template must fail or finish within them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.h"

namespace {

const nlohmann::ordered_json& DefaultContext() {
  static const auto* context = new nlohmann::ordered_json(nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "héllo 世界 🙂"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
      {"role": "user", "content": "thanks"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "description": "Weather by city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer"}}, "required": ["city"]}}}],
    "add_generation_prompt": true,
    "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false})"));
  return *context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  std::string_view source = input.substr(0, nul);
  auto parsed = surge::jinja::Template::Parse(source);
  if (!parsed.ok()) return 0;
  if (nul != std::string_view::npos) {
    auto context = nlohmann::ordered_json::parse(input.substr(nul + 1), nullptr, /*allow_exceptions=*/false);
    if (context.is_object()) {
      (void)parsed->Render(context).ok();
      return 0;
    }
  }
  (void)parsed->Render(DefaultContext()).ok();
  return 0;
}
