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

// JsonValueSize over a buffer that grows at its end, resumed where the last call stopped so
// that a value streamed in n deltas costs O(its size), not O(n x size). `start` is where the
// value begins in `buffer`; a different start than last time begins a new scan, and so does
// every call after one that found the value complete (its bytes are then consumed).
class JsonValueScanner {
 public:
  size_t Size(std::string_view buffer, size_t start);
  // Bytes looked at over this scanner's life (each byte of a value once).
  int64_t bytes_scanned() const { return bytes_scanned_; }

 private:
  int64_t bytes_scanned_ = 0;
  size_t start_ = std::string_view::npos;
  size_t scanned_ = 0;  // bytes of the value looked at
  int64_t depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
};
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
