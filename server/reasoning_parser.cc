#include "server/reasoning_parser.h"

#include <algorithm>

namespace surge {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The longest tail of `text` that is a proper prefix of `tag` (and so may become it).
size_t PartialTagSize(std::string_view text, std::string_view tag) {
  for (size_t size = std::min(text.size(), tag.size() - 1); size > 0; --size) {
    if (tag.starts_with(text.substr(text.size() - size))) return size;
  }
  return 0;
}

}  // namespace

StatusOr<ReasoningParserKind> ParseReasoningParserName(std::string_view name) {
  if (name == "deepseek-r1" || name == "deepseek_r1") return ReasoningParserKind::kDeepSeekR1;
  return InvalidArgumentError("unknown reasoning parser '" + std::string(name) + "' (valid: " +
                              kReasoningParserNames + ")");
}

ReasoningDelta ReasoningParser::Add(std::string_view text) {
  ReasoningDelta out;
  if (!in_reasoning_) {
    out.content = text;
    return out;
  }
  pending_ += text;
  Scan(/*final=*/false, &out);
  return out;
}

ReasoningDelta ReasoningParser::Finish() {
  ReasoningDelta out;
  Scan(/*final=*/true, &out);
  return out;
}

void ReasoningParser::Scan(bool final, ReasoningDelta* out) {
  if (!in_reasoning_) {
    out->content += pending_;
    pending_.clear();
    return;
  }
  if (open_tag_possible_ && TakeOpenTag(final)) return;
  const size_t close = pending_.find(kThinkCloseTag);
  if (close != std::string::npos) {
    out->reasoning += pending_.substr(0, close);
    out->content += pending_.substr(close + kThinkCloseTag.size());
    pending_.clear();
    in_reasoning_ = false;
    return;
  }
  const size_t held = final ? 0 : PartialTagSize(pending_, kThinkCloseTag);
  out->reasoning += pending_.substr(0, pending_.size() - held);
  pending_.erase(0, pending_.size() - held);
}

bool ReasoningParser::TakeOpenTag(bool final) {
  const size_t start = std::find_if_not(pending_.begin(), pending_.end(), IsSpace) - pending_.begin();
  const std::string_view rest = std::string_view(pending_).substr(start);
  if (rest.starts_with(kThinkOpenTag)) {
    pending_.erase(0, start + kThinkOpenTag.size());
    open_tag_possible_ = false;
    return false;
  }
  // Only whitespace, or whitespace and the beginning of "<think>": wait for more.
  if (!final && kThinkOpenTag.starts_with(rest)) return true;
  open_tag_possible_ = false;
  return false;
}

ReasoningDelta SplitReasoning(std::string_view text) {
  ReasoningParser parser;
  ReasoningDelta out = parser.Add(text);
  ReasoningDelta rest = parser.Finish();
  out.reasoning += rest.reasoning;
  out.content += rest.content;
  return out;
}

}  // namespace surge
