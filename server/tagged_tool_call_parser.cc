// The families whose calls sit between a begin and an end tag: hermes
// (<tool_call>{json}</tool_call>) and deepseek_v3 (<｜tool▁call▁begin｜>...<｜tool▁call▁end｜>
// inside <｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜>). One scanner, a body parser each.
#include <algorithm>
#include <string>
#include <vector>

#include "server/tool_call_parser_internal.h"

namespace surge::tool_call_internal {
namespace {

constexpr std::string_view kHermesBegin = "<tool_call>";
constexpr std::string_view kHermesEnd = "</tool_call>";
constexpr std::string_view kDeepSeekCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepSeekEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";

struct TaggedFormat {
  std::string_view begin;
  std::string_view end;
  // Markers that, like whitespace, only separate calls (DeepSeek's section tags).
  std::vector<std::string_view> separators;
  std::optional<ToolCall> (*parse_body)(std::string_view body);
};

class TaggedParser final : public BufferedParser {
 public:
  explicit TaggedParser(TaggedFormat format) : format_(std::move(format)) {}

 private:
  void Scan(bool final, ToolCallDelta* out) override {
    while (in_call_ ? ScanCall(final, out) : ScanText(final, out)) {
    }
    if (!final) return;
    if (!after_call_) out->content += held_;  // separators after the last call are dropped
    held_.clear();
  }

  // Text up to the next begin tag; true when one was found (a call is open now).
  bool ScanText(bool final, ToolCallDelta* out) {
    const size_t begin = pending_.find(format_.begin);
    if (begin == std::string::npos) {
      const size_t keep = final ? 0 : HeldTailSize();
      AddText(std::string_view(pending_).substr(0, pending_.size() - keep), out);
      pending_.erase(0, pending_.size() - keep);
      return false;
    }
    AddText(std::string_view(pending_).substr(0, begin), out);
    pending_.erase(0, begin + format_.begin.size());
    in_call_ = true;
    return true;
  }

  // The open call's body up to its end tag (or the output's end); true once it is done.
  bool ScanCall(bool final, ToolCallDelta* out) {
    const size_t end = pending_.find(format_.end, searched_);
    if (end == std::string::npos && !final) {  // hold the whole call; search only new bytes next
      searched_ = pending_.size() - std::min(pending_.size(), format_.end.size() - 1);
      return false;
    }
    searched_ = 0;
    const size_t body_size = end == std::string::npos ? pending_.size() : end;
    const size_t consumed = end == std::string::npos ? pending_.size() : end + format_.end.size();
    std::optional<ToolCall> call = format_.parse_body(std::string_view(pending_).substr(0, body_size));
    if (call) {
      call->index = num_calls_++;
      call->id = NewToolCallId();
      out->calls.push_back(std::move(*call));
      held_.clear();  // the separators before it
      after_call_ = true;
    } else {
      AddText(std::string(format_.begin) + pending_.substr(0, consumed), out);  // malformed: text
    }
    pending_.erase(0, consumed);
    in_call_ = false;
    return true;
  }

  // Text outside calls. Separator runs are held until what follows tells: before a
  // call they are dropped; before text they are content, less any section markers when
  // they follow a call (those closed the calls).
  void AddText(std::string_view text, ToolCallDelta* out) {
    const size_t lead = SeparatorSize(text, /*from_end=*/false);
    held_ += text.substr(0, lead);
    text.remove_prefix(lead);
    if (text.empty()) return;
    if (after_call_) DropMarkers(&held_);
    const size_t trail = SeparatorSize(text, /*from_end=*/true);
    out->content += held_;
    out->content += text.substr(0, text.size() - trail);
    held_ = text.substr(text.size() - trail);
    after_call_ = false;
  }

  void DropMarkers(std::string* text) const {
    for (std::string_view marker : format_.separators) {
      for (size_t at = text->find(marker); at != std::string::npos; at = text->find(marker, at)) {
        text->erase(at, marker.size());
      }
    }
  }

  // The size of the run of whitespace and separator markers at one end of `text`.
  size_t SeparatorSize(std::string_view text, bool from_end) const {
    size_t size = 0;
    for (;;) {
      const std::string_view rest = from_end ? text.substr(0, text.size() - size) : text.substr(size);
      if (!rest.empty() && IsSpace(from_end ? rest.back() : rest.front())) {
        ++size;
        continue;
      }
      auto marker = std::find_if(format_.separators.begin(), format_.separators.end(), [&](std::string_view m) {
        return from_end ? rest.ends_with(m) : rest.starts_with(m);
      });
      if (marker == format_.separators.end()) return size;
      size += marker->size();
    }
  }

  // A tail that may begin the begin tag or a separator marker.
  size_t HeldTailSize() const {
    size_t size = PartialTagSize(pending_, format_.begin);
    for (std::string_view marker : format_.separators) size = std::max(size, PartialTagSize(pending_, marker));
    return size;
  }

  const TaggedFormat format_;
  std::string held_;        // a separator run whose fate is not known yet
  bool in_call_ = false;
  bool after_call_ = false;  // nothing but separators since the last call
  size_t searched_ = 0;  // the open call's body holds no end tag before this offset
  int32_t num_calls_ = 0;
};

// {"name": "f", "arguments": {...}}, with whitespace around.
std::optional<ToolCall> ParseHermesBody(std::string_view body) { return CallFromJson(Trim(body)); }

// "```json\nX\n```" -> X (the fence DeepSeek-V3's template writes); false when unfenced.
bool Unfence(std::string_view text, std::string_view* inside) {
  text = Trim(text);
  if (!text.starts_with("```") || !text.ends_with("```") || text.size() < 6) return false;
  text = text.substr(3, text.size() - 6);
  if (text.starts_with("json")) text.remove_prefix(4);
  *inside = Trim(text);
  return true;
}

// V3 / R1 (their template): "function<｜tool▁sep｜>NAME\n```json\nARGS\n```";
// V3.1 and later: "NAME<｜tool▁sep｜>ARGS" (a fence tolerated).
std::optional<ToolCall> ParseDeepSeekBody(std::string_view body) {
  const size_t sep = body.find(kDeepSeekSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view head = Trim(body.substr(0, sep));
  const std::string_view tail = body.substr(sep + kDeepSeekSep.size());
  const size_t newline = tail.find('\n');
  std::string_view arguments;
  if (newline != std::string_view::npos) {
    const std::string_view rest = tail.substr(newline + 1);
    if (Unfence(rest, &arguments)) return MakeCall(tail.substr(0, newline), arguments);
    if (head == "function") return MakeCall(tail.substr(0, newline), rest);
  }
  if (!Unfence(tail, &arguments)) arguments = tail;
  return MakeCall(head, arguments);
}

}  // namespace

std::unique_ptr<ToolCallParser> MakeHermesParser() {
  return std::make_unique<TaggedParser>(TaggedFormat{kHermesBegin, kHermesEnd, {}, ParseHermesBody});
}

std::unique_ptr<ToolCallParser> MakeDeepSeekV3Parser() {
  return std::make_unique<TaggedParser>(
      TaggedFormat{kDeepSeekBegin, kDeepSeekEnd, {kDeepSeekCallsBegin, kDeepSeekCallsEnd}, ParseDeepSeekBody});
}

}  // namespace surge::tool_call_internal
