// ReasoningParser: splits one chat choice's output text into its reasoning (the thinking
// inside <think>…</think>) and its answer, for `surge serve --reasoning-parser
// deepseek-r1` (DeepSeek-R1 and its distills, QwQ). Fed the text deltas of one choice as
// they come; everything it returns is final. vLLM's deepseek_r1 semantics:
//   - the R1 templates end the prompt with "<think>\n", so the output usually starts
//     inside the thinking: everything before the first "</think>" is reasoning;
//   - a "<think>" at the very start of the output (after whitespace only) is dropped,
//     with that whitespace (R1-0528 writes the tag itself);
//   - an output that never closes the thinking is all reasoning;
//   - the text after "</think>" is the answer as it is (its leading newlines kept), and
//     any later tag in it is plain text.
// The tags never appear in either part, not even in pieces split across deltas: a tail
// that may begin a tag is held back until the next delta tells, or Finish.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace surge {

enum class ReasoningParserKind { kNone, kDeepSeekR1 };

// The values --reasoning-parser accepts (vLLM spells it deepseek_r1; both are taken).
inline constexpr char kReasoningParserNames[] = "deepseek-r1";
// "deepseek-r1" / "deepseek_r1" -> kDeepSeekR1; anything else is InvalidArgument naming
// the valid values.
StatusOr<ReasoningParserKind> ParseReasoningParserName(std::string_view name);

inline constexpr std::string_view kThinkOpenTag = "<think>";
inline constexpr std::string_view kThinkCloseTag = "</think>";

// What one delta adds to each part (either may be empty).
struct ReasoningDelta {
  std::string reasoning;
  std::string content;
};

class ReasoningParser {
 public:
  ReasoningDelta Add(std::string_view text);
  // The end of the choice: whatever was held back, as the part it was in.
  ReasoningDelta Finish();
  // False once "</think>" has been seen.
  bool in_reasoning() const { return in_reasoning_; }

 private:
  void Scan(bool final, ReasoningDelta* out);
  // Drops a leading "<think>"; true (hold everything) while the output so far may
  // still be whitespace and the beginning of one.
  bool TakeOpenTag(bool final);

  bool in_reasoning_ = true;
  bool open_tag_possible_ = true;  // nothing but whitespace has come yet
  std::string pending_;            // held back: may begin a tag
};

// The whole text at once, as the streaming parser splits it.
ReasoningDelta SplitReasoning(std::string_view text);

}  // namespace surge
