// ReasoningParser: vLLM's deepseek_r1 split of a choice's text, fed whole or in pieces cut
// at every byte, never letting a tag or a piece of one through.
#include "server/reasoning_parser.h"

#include <gtest/gtest.h>

#include <vector>

namespace surge {
namespace {

struct Split {
  std::string reasoning;
  std::string content;
  bool operator==(const Split&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Split& split) {
  return os << "{reasoning: \"" << split.reasoning << "\", content: \"" << split.content << "\"}";
}

// Feeds `pieces` in order, then finishes. (An exact match of both parts also shows that
// no piece of a tag got through.)
Split Feed(const std::vector<std::string>& pieces) {
  ReasoningParser parser;
  Split split;
  auto take = [&](const ReasoningDelta& delta) {
    split.reasoning += delta.reasoning;
    split.content += delta.content;
  };
  for (const std::string& piece : pieces) take(parser.Add(piece));
  take(parser.Finish());
  return split;
}

// Every way of cutting `text` into two and into three pieces (and byte by byte) gives
// the split that the whole text gives.
void ExpectSameAtEveryCut(const std::string& text, const Split& expected) {
  EXPECT_EQ(Feed({text}), expected) << "whole";
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(Feed(bytes), expected) << "byte by byte";
  for (size_t i = 0; i <= text.size(); ++i) {
    EXPECT_EQ(Feed({text.substr(0, i), text.substr(i)}), expected) << "cut at " << i;
    for (size_t j = i; j <= text.size(); ++j) {
      ASSERT_EQ(Feed({text.substr(0, i), text.substr(i, j - i), text.substr(j)}), expected)
          << "cuts at " << i << " and " << j;
    }
  }
}

TEST(ReasoningParserTest, EverythingBeforeTheCloseTagIsReasoning) {
  // The R1 template opens the thinking in the prompt: the output has only the close tag,
  // and the answer keeps its leading newlines (as vLLM's deepseek_r1 parser).
  ExpectSameAtEveryCut("Add 2 and 2.</think>\n\nIt is 4.", {"Add 2 and 2.", "\n\nIt is 4."});
}

TEST(ReasoningParserTest, ALeadingOpenTagIsDropped) {
  ExpectSameAtEveryCut("<think>\nHmm.</think>Yes", {"\nHmm.", "Yes"});
  ExpectSameAtEveryCut(" \n<think>x</think>y", {"x", "y"});
  ExpectSameAtEveryCut("<think></think>", {"", ""});
}

TEST(ReasoningParserTest, AnOpenTagAfterOtherTextIsReasoningText) {
  EXPECT_EQ(Feed({"a <think> b</think>c"}), (Split{"a <think> b", "c"}));
}

TEST(ReasoningParserTest, WithoutACloseTagAllIsReasoning) {
  ExpectSameAtEveryCut("Still thinking", {"Still thinking", ""});
  // A tail that looked like the start of a tag is reasoning after all.
  ExpectSameAtEveryCut("Still </thin", {"Still </thin", ""});
  ExpectSameAtEveryCut("<thin", {"<thin", ""});
  ExpectSameAtEveryCut("\n\n", {"\n\n", ""});
  EXPECT_EQ(Feed({}), (Split{"", ""}));
}

TEST(ReasoningParserTest, TagsAfterTheCloseTagArePlainContent) {
  ExpectSameAtEveryCut("r</think>c </think> <think>d", {"r", "c </think> <think>d"});
}

TEST(ReasoningParserTest, ACloseTagRightAtTheStartLeavesNoReasoning) {
  ExpectSameAtEveryCut("</think>Answer", {"", "Answer"});
}

TEST(ReasoningParserTest, NearMissesAreReasoningText) {
  ExpectSameAtEveryCut("a</thinK>b<</think>c", {"a</thinK>b<", "c"});
  ExpectSameAtEveryCut("<<think>x</think>", {"<<think>x", ""});
}

TEST(ReasoningParserTest, MultiByteTextAroundTheTags) {
  ExpectSameAtEveryCut("<think>思考…</think>答え", {"思考…", "答え"});
}

TEST(ReasoningParserTest, ReleasesTextAsSoonAsItCannotBeATag) {
  ReasoningParser parser;
  EXPECT_EQ(parser.Add("abc").reasoning, "abc");
  EXPECT_EQ(parser.Add("d</th").reasoning, "d");  // "</th" may begin the close tag
  ReasoningDelta next = parser.Add("e");
  EXPECT_EQ(next.reasoning, "</the");
  EXPECT_TRUE(parser.in_reasoning());
  next = parser.Add("</think>\n\nok");
  EXPECT_EQ(next.reasoning, "");
  EXPECT_EQ(next.content, "\n\nok");
  EXPECT_FALSE(parser.in_reasoning());
  EXPECT_EQ(parser.Add("</").content, "</");  // nothing is held back in the answer
  ReasoningDelta rest = parser.Finish();
  EXPECT_EQ(rest.reasoning + rest.content, "");
}

TEST(ReasoningParserTest, LeadingWhitespaceWaitsForWhatFollows) {
  ReasoningParser parser;
  EXPECT_EQ(parser.Add("\n").reasoning, "");   // may precede "<think>"
  EXPECT_EQ(parser.Add("<thi").reasoning, "");
  EXPECT_EQ(parser.Add("nk>Hi").reasoning, "Hi");
  ReasoningParser other;
  EXPECT_EQ(other.Add("\n").reasoning, "");
  EXPECT_EQ(other.Add("So").reasoning, "\nSo");  // not a tag: the newline is reasoning
}

TEST(ReasoningParserTest, ParsersKeepTheirOwnState) {
  ReasoningParser first, second;
  EXPECT_EQ(first.Add("a</think>").reasoning, "a");
  EXPECT_EQ(second.Add("b").reasoning, "b");
  EXPECT_EQ(first.Add("x").content, "x");
  EXPECT_EQ(second.Add("y").reasoning, "y");
}

TEST(ReasoningParserTest, SplitReasoningOfAWholeText) {
  ReasoningDelta split = SplitReasoning("<think>\nwhy</think>\n\nbecause");
  EXPECT_EQ(split.reasoning, "\nwhy");
  EXPECT_EQ(split.content, "\n\nbecause");
}

TEST(ReasoningParserTest, Names) {
  EXPECT_EQ(ParseReasoningParserName("deepseek-r1").value(), ReasoningParserKind::kDeepSeekR1);
  EXPECT_EQ(ParseReasoningParserName("deepseek_r1").value(), ReasoningParserKind::kDeepSeekR1);
  StatusOr<ReasoningParserKind> unknown = ParseReasoningParserName("qwen3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'qwen3'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("deepseek-r1"), std::string::npos);
}

}  // namespace
}  // namespace surge
