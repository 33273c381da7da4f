// llama3_json (Llama 3.1 / 3.2 JSON tool calling, as vLLM's parser of that name): the
// output is one or more {"name": ..., "parameters": {...}} objects separated by "; ",
// optionally after <|python_tag|>. An output that starts otherwise is plain content, and
// so is everything from the first object that is not a call.
#include <string>

#include "server/tool_call_parser_internal.h"

namespace surge::tool_call_internal {
namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";

class Llama3JsonParser final : public BufferedParser {
 private:
  // kStart: nothing decided; kCall: an object (after optional whitespace and tag) is
  // open; kBetween: after a call, expecting "; {" or the end; kText: content from here on.
  enum class State { kStart, kCall, kBetween, kText };
  enum class Step { kWait, kNext };

  void Scan(bool final, ToolCallDelta* out) override {
    for (;;) {
      Step step = Step::kWait;
      switch (state_) {
        case State::kText:
          out->content += pending_;
          pending_.clear();
          return;
        case State::kStart: step = ScanStart(final); break;
        case State::kCall: step = ScanCall(final, out); break;
        case State::kBetween: step = ScanBetween(final); break;
      }
      if (step == Step::kWait) return;
    }
  }

  Step ScanStart(bool final) {
    const std::string_view rest = std::string_view(pending_).substr(SkipSpace(pending_, 0));
    if (rest.starts_with(kPythonTag) || rest.starts_with("{")) {
      state_ = State::kCall;
      return Step::kNext;
    }
    if (!final && kPythonTag.starts_with(rest)) return Step::kWait;  // "" or "<|pyth"
    state_ = State::kText;
    return Step::kNext;
  }

  Step ScanCall(bool final, ToolCallDelta* out) {
    size_t start = SkipSpace(pending_, 0);
    if (std::string_view(pending_).substr(start).starts_with(kPythonTag)) start = SkipSpace(pending_, start + kPythonTag.size());
    if (start == pending_.size() && !final) return Step::kWait;
    const std::string_view object = std::string_view(pending_).substr(start);
    const size_t size = object.starts_with("{") ? scanner_.Size(pending_, start) : 0;
    if (size == std::string_view::npos && !final) return Step::kWait;
    std::optional<ToolCall> call;
    if (size != 0 && size != std::string_view::npos) call = CallFromJson(object.substr(0, size));
    if (!call) {
      state_ = State::kText;  // not a call: it and all that follows are content
      return Step::kNext;
    }
    call->index = num_calls_++;
    call->id = NewToolCallId();
    out->calls.push_back(std::move(*call));
    pending_.erase(0, start + size);
    state_ = State::kBetween;
    return Step::kNext;
  }

  Step ScanBetween(bool final) {
    const size_t at = SkipSpace(pending_, 0);
    if (at == pending_.size()) {
      if (!final) return Step::kWait;
      pending_.clear();  // whitespace after the last call
      state_ = State::kText;
      return Step::kNext;
    }
    if (pending_[at] == ';') {
      const size_t next = SkipSpace(pending_, at + 1);
      if (next == pending_.size() && !final) return Step::kWait;
      if (next < pending_.size() && pending_[next] == '{') {
        pending_.erase(0, next);
        state_ = State::kCall;
        return Step::kNext;
      }
    }
    state_ = State::kText;
    return Step::kNext;
  }

  State state_ = State::kStart;
  JsonValueScanner scanner_;  // the open call's object, scanned once as it grows
  int32_t num_calls_ = 0;
};

}  // namespace

std::unique_ptr<ToolCallParser> MakeLlama3JsonParser() { return std::make_unique<Llama3JsonParser>(); }

}  // namespace surge::tool_call_internal
