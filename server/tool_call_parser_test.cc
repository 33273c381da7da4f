// ToolCallParser, each family: whole texts, and the same texts streamed split at every
// byte (and byte by byte), which must give the same content and calls; several calls,
// text around them, malformed calls kept as content, multibyte text around tags.
#include "server/tool_call_parser.h"
#include "server/tool_call_parser_internal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <set>

namespace surge {
namespace {

using Kind = ToolCallParserKind;

struct Expected {
  std::string name;
  std::string arguments;
};

ToolCallDelta Streamed(Kind kind, const std::vector<std::string_view>& pieces) {
  std::unique_ptr<ToolCallParser> parser = MakeToolCallParser(kind);
  ToolCallDelta out;
  for (std::string_view piece : pieces) out.Append(parser->Add(piece));
  out.Append(parser->Finish());
  return out;
}

void ExpectSame(const ToolCallDelta& got, const ToolCallDelta& want, const std::string& how) {
  EXPECT_EQ(got.content, want.content) << how;
  ASSERT_EQ(got.calls.size(), want.calls.size()) << how;
  for (size_t i = 0; i < got.calls.size(); ++i) {
    EXPECT_EQ(got.calls[i].index, static_cast<int32_t>(i)) << how;
    EXPECT_EQ(got.calls[i].name, want.calls[i].name) << how;
    EXPECT_EQ(got.calls[i].arguments, want.calls[i].arguments) << how;
  }
}

// Parses `text` whole, checks it against the expectation, then streamed split at every
// byte position and byte by byte: each must give the same content and calls.
void Check(Kind kind, std::string_view text, const std::string& content, const std::vector<Expected>& calls) {
  SCOPED_TRACE(std::string(text));
  const ToolCallDelta whole = ParseToolCalls(kind, text);
  EXPECT_EQ(whole.content, content);
  ASSERT_EQ(whole.calls.size(), calls.size());
  std::set<std::string> ids;
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(whole.calls[i].index, static_cast<int32_t>(i));
    EXPECT_EQ(whole.calls[i].name, calls[i].name);
    EXPECT_EQ(whole.calls[i].arguments, calls[i].arguments);
    const std::string& id = whole.calls[i].id;
    EXPECT_TRUE(id.starts_with("call_") && id.size() == 29) << id;
    for (char c : id.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), calls.size()) << "ids are distinct";
  for (size_t at = 0; at <= text.size(); ++at) {
    ExpectSame(Streamed(kind, {text.substr(0, at), text.substr(at)}), whole, "split at " + std::to_string(at));
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  ExpectSame(Streamed(kind, bytes), whole, "byte by byte");
}

TEST(HermesToolCallTest, TextThenSeveralCalls) {
  Check(Kind::kHermes,
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}\n"
        "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\n",
        "Let me check.",
        {{"get_weather", R"({"city":"Paris","days":[1,2]})"}, {"get_time", "{}"}});
}

TEST(HermesToolCallTest, PlainTextAndLookalikesStayContent) {
  Check(Kind::kHermes, "a < b, <tool and </tool_call> too <tool_cal", "a < b, <tool and </tool_call> too <tool_cal", {});
  Check(Kind::kHermes, "", "", {});
  Check(Kind::kHermes, " \n", " \n", {});
}

TEST(HermesToolCallTest, MalformedCallsStayContent) {
  const std::string bad = "<tool_call>\n{\"name\": \"f\", \"arguments\": {oops}}\n</tool_call>";
  Check(Kind::kHermes, bad, bad, {});
  Check(Kind::kHermes, "<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>", {});
  Check(Kind::kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>",
        "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>", {});
  // A bad call among good ones: only it stays.
  Check(Kind::kHermes, bad + "\n<tool_call>{\"name\": \"g\", \"arguments\": {\"x\": 1}}</tool_call>", bad,
        {{"g", R"({"x":1})"}});
}

TEST(HermesToolCallTest, UnclosedLastCallAndTextAfterCalls) {
  Check(Kind::kHermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": true}}\n", "", {{"f", R"({"a":true})"}});
  Check(Kind::kHermes, "<tool_call>\n{\"name\": \"f\", \"argu", "<tool_call>\n{\"name\": \"f\", \"argu", {});
  Check(Kind::kHermes, "<tool_call>{\"name\": \"f\"}</tool_call>\nDone.", "\nDone.", {{"f", "{}"}});
}

TEST(HermesToolCallTest, MultibyteTextAroundTags) {
  Check(Kind::kHermes,
        "天气？<tool_call>{\"name\": \"天气\", \"arguments\": {\"城市\": \"東京\"}}</tool_call>終わり😀",
        "天气？終わり😀", {{"天气", R"({"城市":"東京"})"}});
}

constexpr char kCallsBegin[] = "<｜tool▁calls▁begin｜>";
constexpr char kCallsEnd[] = "<｜tool▁calls▁end｜>";
constexpr char kCallBegin[] = "<｜tool▁call▁begin｜>";
constexpr char kCallEnd[] = "<｜tool▁call▁end｜>";
constexpr char kSep[] = "<｜tool▁sep｜>";

std::string DeepSeekV3Call(const std::string& name, const std::string& arguments) {
  return std::string(kCallBegin) + "function" + kSep + name + "\n```json\n" + arguments + "\n```" + kCallEnd;
}

TEST(DeepSeekV3ToolCallTest, TextThenSeveralCalls) {
  Check(Kind::kDeepSeekV3,
        "I'll look.\n\n" + std::string(kCallsBegin) + DeepSeekV3Call("get_weather", R"({"city": "Paris"})") + "\n" +
            DeepSeekV3Call("get_time", "{}") + kCallsEnd,
        "I'll look.", {{"get_weather", R"({"city":"Paris"})"}, {"get_time", "{}"}});
}

TEST(DeepSeekV3ToolCallTest, V31FormWithoutTypeOrFence) {
  Check(Kind::kDeepSeekV3,
        std::string(kCallsBegin) + kCallBegin + "get_weather" + kSep + R"({"city": "Oslo"})" + kCallEnd + kCallsEnd,
        "", {{"get_weather", R"({"city":"Oslo"})"}});
}

TEST(DeepSeekV3ToolCallTest, MalformedCallsStayContent) {
  const std::string bad = std::string(kCallsBegin) + DeepSeekV3Call("f", "{not json}") + kCallsEnd;
  Check(Kind::kDeepSeekV3, bad, bad, {});
  const std::string no_sep = std::string(kCallBegin) + "f {}" + kCallEnd;
  Check(Kind::kDeepSeekV3, no_sep, no_sep, {});
  Check(Kind::kDeepSeekV3, "<｜tool▁calls and <｜tool▁call", "<｜tool▁calls and <｜tool▁call", {});
}

TEST(DeepSeekV3ToolCallTest, MultibyteTextAroundTags) {
  Check(Kind::kDeepSeekV3,
        "好的，" + std::string(kCallsBegin) + DeepSeekV3Call("search", R"({"q": "北京 天气"})") + kCallsEnd + "完成",
        "好的，完成", {{"search", R"({"q":"北京 天气"})"}});
}

TEST(Llama3JsonToolCallTest, OneOrSeveralCalls) {
  Check(Kind::kLlama3Json, R"({"name": "get_weather", "parameters": {"city": "Paris"}})", "",
        {{"get_weather", R"({"city":"Paris"})"}});
  Check(Kind::kLlama3Json,
        "<|python_tag|>{\"name\": \"f\", \"arguments\": {\"s\": \"}{\\\"\"}}; {\"name\": \"g\", \"parameters\": {}}\n",
        "", {{"f", R"({"s":"}{\""})"}, {"g", "{}"}});
}

TEST(Llama3JsonToolCallTest, OtherOutputsAreContent) {
  Check(Kind::kLlama3Json, R"(Sure: {"name": "f", "parameters": {}})", R"(Sure: {"name": "f", "parameters": {}})", {});
  Check(Kind::kLlama3Json, R"({"answer": 42})", R"({"answer": 42})", {});
  Check(Kind::kLlama3Json, R"({"name": "f", "parameters": {"a": )", R"({"name": "f", "parameters": {"a": )", {});
  Check(Kind::kLlama3Json, "<|python_tag|>print(1)", "<|python_tag|>print(1)", {});
  Check(Kind::kLlama3Json, "<|pyth", "<|pyth", {});
  Check(Kind::kLlama3Json, R"({"name": "f", "parameters": {}} and then)", " and then", {{"f", "{}"}});
}

TEST(Llama3JsonToolCallTest, MultibyteArguments) {
  Check(Kind::kLlama3Json, " {\"name\": \"翻訳\", \"parameters\": {\"text\": \"ü😀\"}};{\"name\": \"g\"}", "",
        {{"翻訳", R"({"text":"ü😀"})"}, {"g", "{}"}});
}

TEST(ToolCallParserNameTest, NamesAndModelDefaults) {
  EXPECT_EQ(*ParseToolCallParserName("hermes"), Kind::kHermes);
  EXPECT_EQ(*ParseToolCallParserName("deepseek_v3"), Kind::kDeepSeekV3);
  EXPECT_EQ(*ParseToolCallParserName("llama3_json"), Kind::kLlama3Json);
  EXPECT_EQ(*ParseToolCallParserName("none"), Kind::kNone);
  StatusOr<Kind> bad = ParseToolCallParserName("mistral");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr(kToolCallParserNames));
  EXPECT_EQ(DefaultToolCallParser("deepseek_v2"), Kind::kDeepSeekV3);
  EXPECT_EQ(DefaultToolCallParser("deepseek_v3"), Kind::kDeepSeekV3);
  EXPECT_EQ(DefaultToolCallParser("qwen2"), Kind::kHermes);
  EXPECT_EQ(DefaultToolCallParser("qwen3"), Kind::kHermes);
  EXPECT_EQ(DefaultToolCallParser("llama"), Kind::kLlama3Json);
  EXPECT_EQ(DefaultToolCallParser("gemma"), Kind::kNone);
  EXPECT_EQ(MakeToolCallParser(Kind::kNone), nullptr);
}

}  // namespace
}  // namespace surge

namespace surge {
namespace {

// Streamed arguments are scanned once: a call whose JSON arrives in n deltas costs O(its
// size), not O(n x size) (a 400 KB argument string used to cost 11 s).
TEST(JsonValueScannerTest, ResumesWhereItStopped) {
  const std::string value = R"({"name": "f", "parameters": {"s": ")" + std::string(100000, 'x') + R"(\"}"}})";
  tool_call_internal::JsonValueScanner scanner;
  std::string buffer = "; ";
  size_t size = std::string::npos;
  for (char c : value) {
    buffer += c;
    size = scanner.Size(buffer, 2);
    if (size != std::string::npos) break;
  }
  EXPECT_EQ(size, value.size());
  EXPECT_EQ(scanner.bytes_scanned(), static_cast<int64_t>(value.size()));
  EXPECT_EQ(tool_call_internal::JsonValueSize(value), value.size());
  EXPECT_EQ(tool_call_internal::JsonValueSize(value.substr(0, value.size() - 1)), std::string::npos);
}

TEST(JsonValueScannerTest, LongStreamedCallsParseWhole) {
  const std::string arguments = R"({"s":")" + std::string(20000, 'y') + R"("})";
  for (Kind kind : {Kind::kLlama3Json, Kind::kHermes}) {
    const std::string text = kind == Kind::kHermes
                                 ? "<tool_call>{\"name\": \"f\", \"arguments\": " + arguments + "}</tool_call>"
                                 : "{\"name\": \"f\", \"parameters\": " + arguments + "}";
    std::unique_ptr<ToolCallParser> parser = MakeToolCallParser(kind);
    ToolCallDelta out;
    for (size_t at = 0; at < text.size(); at += 7) out.Append(parser->Add(std::string_view(text).substr(at, 7)));
    out.Append(parser->Finish());
    ASSERT_EQ(out.calls.size(), 1u);
    EXPECT_EQ(out.calls[0].name, "f");
    EXPECT_EQ(out.calls[0].arguments, arguments);
  }
}

}  // namespace
}  // namespace surge
