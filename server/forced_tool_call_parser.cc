// The parsers for tool_choice "required" and a named function, whose output is not the
// model's own tool-call format but JSON the constraint held to a schema
// (api/tool_choice_schema.h), so that they work under any --tool-call-parser, none too.
#include <string>

#include "server/tool_call_parser_internal.h"

namespace surge::tool_call_internal {
namespace {

// The whole output is the function's arguments: streamed as it comes, as OpenAI streams a
// call's argument fragments (the first fragment opens the call).
class NamedFunctionParser final : public ToolCallParser {
 public:
  explicit NamedFunctionParser(std::string name) : name_(std::move(name)) {}

  ToolCallDelta Add(std::string_view text) override {
    ToolCallDelta out;
    if (text.empty()) return out;
    ToolCall fragment;
    fragment.arguments = text;
    if (!opened_) {
      fragment.id = NewToolCallId();
      fragment.name = name_;
      opened_ = true;
    }
    out.calls.push_back(std::move(fragment));
    return out;
  }

  ToolCallDelta Finish() override { return {}; }

 private:
  const std::string name_;
  bool opened_ = false;
};

// [{"name": N, "parameters": {...}}, ...]: each call once its object is complete.
class RequiredCallsParser final : public BufferedParser {
 private:
  void Scan(bool final, ToolCallDelta* out) override {
    for (;;) {
      size_t at = SkipSpace(pending_, 0);
      if (at < pending_.size() && (pending_[at] == '[' || pending_[at] == ',')) at = SkipSpace(pending_, at + 1);
      const std::string_view rest = std::string_view(pending_).substr(at);
      const size_t size = rest.starts_with("{") ? scanner_.Size(pending_, at) : std::string_view::npos;
      if (size == std::string_view::npos) break;
      std::optional<ToolCall> call = CallFromJson(rest.substr(0, size));
      if (call) {
        call->index = num_calls_++;
        call->id = NewToolCallId();
        out->calls.push_back(std::move(*call));
      }
      pending_.erase(0, at + size);
    }
    // The constraint allows nothing else; what is left at the end ("]", or a call that
    // max_tokens cut) is no call.
    if (final) pending_.clear();
  }

  JsonValueScanner scanner_;  // the open call's object, scanned once as it grows
  int32_t num_calls_ = 0;
};

}  // namespace

std::unique_ptr<ToolCallParser> MakeNamedFunctionParser(std::string name) {
  return std::make_unique<NamedFunctionParser>(std::move(name));
}

std::unique_ptr<ToolCallParser> MakeRequiredCallsParser() { return std::make_unique<RequiredCallsParser>(); }

}  // namespace surge::tool_call_internal
