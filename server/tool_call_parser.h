// ToolCallParser: finds the tool calls in one chat choice's output text, for `surge serve
// --tool-call-parser` (hermes | deepseek_v3 | llama3_json), with the semantics of vLLM's
// parsers of the same names. Fed the text deltas of one choice (its answer part, after
// any reasoning) as they come; everything it returns is final:
//   - text outside calls is content; a call is returned once it is complete (its closing
//     tag seen, or the output ended) and parses: {index, id, name, arguments}, where
//     `arguments` is the call's JSON object re-serialized compactly (so it is always
//     valid JSON text; it is sent whole, never in raw fragments that might not parse);
//   - a malformed call (bad JSON, no name, an unknown shape) is not dropped: its text,
//     tags included, stays in the content, as vLLM leaves it;
//   - whitespace (and DeepSeek's section markers) right before a call, or after the last
//     one at the end of the output, only separates calls and is dropped;
//   - tags never leak into content, not even in pieces split across deltas: a tail that
//     may begin a tag, and a whole call until it closes, are held back until the next
//     delta tells, or Finish.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge {

enum class ToolCallParserKind { kNone, kHermes, kDeepSeekV3, kLlama3Json };

// The values --tool-call-parser accepts.
inline constexpr char kToolCallParserNames[] = "hermes | deepseek_v3 | llama3_json | none";
// A name above -> its kind (vLLM's spellings; "deepseek-v3" and "llama3-json" too);
// anything else is InvalidArgument naming the valid values.
StatusOr<ToolCallParserKind> ParseToolCallParserName(std::string_view name);
const char* ToolCallParserName(ToolCallParserKind kind);
// The parser a model's chat template asks for, from config.json's model_type:
// deepseek_v2/v3 (GGUF: deepseek2) -> deepseek_v3, qwen2/qwen3 (and their MoE) -> hermes, llama ->
// llama3_json, anything else -> none.
ToolCallParserKind DefaultToolCallParser(std::string_view model_type);
// Marker strings of a family that must reach the parser as text (the server decodes
// special tokens when the tokenizer marks one of them special).
std::vector<std::string_view> ToolCallMarkers(ToolCallParserKind kind);

// One complete call, as OpenAI's tool_calls[i] carries it -- or, with an empty id, a
// fragment of the previous call's arguments (streamed as they come: the forced parsers).
struct ToolCall {
  int32_t index = 0;       // 0, 1, ... within the choice
  std::string id;          // "call_" + 24 random alphanumerics
  std::string name;
  std::string arguments;   // a JSON object, compact
};

// What one delta adds (either may be empty).
struct ToolCallDelta {
  std::string content;
  std::vector<ToolCall> calls;

  void Append(ToolCallDelta more);
};

class ToolCallParser {
 public:
  virtual ~ToolCallParser() = default;
  virtual ToolCallDelta Add(std::string_view text) = 0;
  // The end of the choice: a call still open is tried as it stands; what was held back
  // comes out as content.
  virtual ToolCallDelta Finish() = 0;
};

// kNone gives nullptr.
std::unique_ptr<ToolCallParser> MakeToolCallParser(ToolCallParserKind kind);
// tool_choice "required" (`function_name` empty) or a named function: the output is JSON
// held to api::ToolChoiceSchema, not a model's own format. A named function's call
// streams its arguments in fragments; required's calls come whole.
std::unique_ptr<ToolCallParser> MakeForcedToolCallParser(std::string function_name);

// The whole text at once, as the streaming parser splits it.
ToolCallDelta ParseToolCalls(ToolCallParserKind kind, std::string_view text);

// "call_" + 24 random characters of [A-Za-z0-9].
std::string NewToolCallId();

}  // namespace surge
