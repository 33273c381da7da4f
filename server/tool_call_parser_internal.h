// What the tool-call parser families share (tool_call_parser*.cc only): text helpers,
// the {"name", "arguments"} JSON shape, and each family's factory.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/tool_call_parser.h"

namespace surge::tool_call_internal {

bool IsSpace(char c);
std::string_view Trim(std::string_view text);
// The first position at or after `at` that is not whitespace (text.size() when none).
size_t SkipSpace(std::string_view text, size_t at);
// The size of the JSON object or array that starts `text`, once it is complete (strings
// and their escapes respected); npos while it is still open.
size_t JsonValueSize(std::string_view text);
// The longest tail of `text` that is a proper prefix of `tag` (and so may become it).
size_t PartialTagSize(std::string_view text, std::string_view tag);

// A call from `arguments_json`, which must be a JSON object (or a string holding one);
// nullopt otherwise. Index and id are left for the parser to set.
std::optional<ToolCall> MakeCall(std::string_view name, std::string_view arguments_json);
// {"name": "f", "arguments": {...}} (or "parameters", as Llama 3.1 writes it; absent
// means {}) -> a call; any other JSON, or no JSON, is nullopt.
std::optional<ToolCall> CallFromJson(std::string_view text);

// A parser over the text received so far (`pending_`): Add scans what can be decided
// now, Finish scans the rest with `final` set.
class BufferedParser : public ToolCallParser {
 public:
  ToolCallDelta Add(std::string_view text) final;
  ToolCallDelta Finish() final;

 protected:
  virtual void Scan(bool final, ToolCallDelta* out) = 0;

  std::string pending_;
};

std::unique_ptr<ToolCallParser> MakeHermesParser();
std::unique_ptr<ToolCallParser> MakeDeepSeekV3Parser();
std::unique_ptr<ToolCallParser> MakeLlama3JsonParser();
std::unique_ptr<ToolCallParser> MakeNamedFunctionParser(std::string name);
std::unique_ptr<ToolCallParser> MakeRequiredCallsParser();

}  // namespace surge::tool_call_internal
