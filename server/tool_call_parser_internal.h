// What the tool-call parser families share (tool_call_parser*.cc only): text helpers,
// the {"name", "arguments"} JSON shape, and each family's factory.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "server/tool_call_parser.h"

namespace surge::tool_call_internal {

bool IsSpace(char c);
std::string_view Trim(std::string_view text);
// The longest tail of `text` that is a proper prefix of `tag` (and so may become it).
size_t PartialTagSize(std::string_view text, std::string_view tag);

// A call from `arguments_json`, which must be a JSON object (or a string holding one);
// nullopt otherwise. Index and id are left for the parser to set.
std::optional<ToolCall> MakeCall(std::string_view name, std::string_view arguments_json);
// {"name": "f", "arguments": {...}} (or "parameters", as Llama 3.1 writes it; absent
// means {}) -> a call; any other JSON, or no JSON, is nullopt.
std::optional<ToolCall> CallFromJson(std::string_view text);

std::unique_ptr<ToolCallParser> MakeHermesParser();
std::unique_ptr<ToolCallParser> MakeDeepSeekV3Parser();
std::unique_ptr<ToolCallParser> MakeLlama3JsonParser();

}  // namespace surge::tool_call_internal
