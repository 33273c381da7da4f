// Values, text helpers and JSON conversion.
#include "tokenizer/jinja/value.h"

#include <gtest/gtest.h>

#include "tokenizer/jinja/json_convert.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

TEST(JinjaTextTest, FormatFloatMatchesPythonRepr) {
  EXPECT_EQ(text::FormatFloat(1.0), "1.0");
  EXPECT_EQ(text::FormatFloat(-2.5), "-2.5");
  EXPECT_EQ(text::FormatFloat(0.1), "0.1");
  EXPECT_EQ(text::FormatFloat(1e-5), "1e-05");
  EXPECT_EQ(text::FormatFloat(0.0001), "0.0001");
  EXPECT_EQ(text::FormatFloat(1e16), "1e+16");
  EXPECT_EQ(text::FormatFloat(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(text::FormatFloat(1.5e300), "1.5e+300");
  EXPECT_EQ(text::FormatFloat(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(text::FormatFloat(-0.0), "-0.0");
}

TEST(JinjaTextTest, StripSplitAndCase) {
  std::string nl = "\n";
  EXPECT_EQ(text::Strip("\u3000 a b\u00a0\t", nullptr, true, true), "a b");
  EXPECT_EQ(text::Strip("\n a \n", &nl, true, false), " a \n");
  EXPECT_EQ(text::Strip(" a\xff\xe3\x80\x80", nullptr, true, true), "a\xff");  // malformed byte kept
  EXPECT_EQ(text::Strip("\xe3\x80\x80\xe3\x80", nullptr, true, true), "\xe3\x80");  // truncated U+3000
  EXPECT_EQ(text::Split("  a  b ", nullptr, -1), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(text::Split("  a  b  c ", nullptr, 1), (std::vector<std::string>{"a", "b  c "}));
  std::string comma = ",";
  EXPECT_EQ(text::Split("a,,b", &comma, -1), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(text::Upper("straße ÿ αβγ жук ｗ"), "STRASSE Ÿ ΑΒΓ ЖУК Ｗ");
  EXPECT_EQ(text::PyTitle("they're 3rd-rate"), "They'Re 3Rd-Rate");
  EXPECT_EQ(text::JinjaTitle("they're 3rd-rate"), "They're 3rd-Rate");
  EXPECT_EQ(text::CodePointCount("h\xC3\xA9\xF0\x9F\x98\x80"), 3u);
  EXPECT_EQ(text::CodePointCount("\xFF\xFE"), 2u);  // malformed bytes count one each
}

TEST(JinjaTextTest, QuoteStringLikePythonRepr) {
  EXPECT_EQ(text::QuoteString("it's"), "\"it's\"");
  EXPECT_EQ(text::QuoteString("a'b\"c"), "'a\\'b\"c'");
  EXPECT_EQ(text::QuoteString("tab\t\x01 é\u00a0"), "'tab\\t\\x01 é\\xa0'");
}

TEST(JinjaValueTest, TruthinessAndEquality) {
  EXPECT_FALSE(Value().Truthy());
  EXPECT_FALSE(Value::None().Truthy());
  EXPECT_FALSE(Value::String("").Truthy());
  EXPECT_TRUE(Value::String(" ").Truthy());
  EXPECT_FALSE(Value::MakeArray({}).Truthy());
  EXPECT_TRUE(Value::MakeNamespace(Object()).Truthy());
  EXPECT_TRUE(Equals(Value::Int(1), Value::Float(1.0)));
  EXPECT_TRUE(Equals(Value::Bool(true), Value::Int(1)));
  EXPECT_FALSE(Equals(Value::String("1"), Value::Int(1)));
  EXPECT_FALSE(Equals(Value::None(), Value()));
  EXPECT_TRUE(Equals(Value::MakeArray({Value::Int(1)}), Value::MakeArray({Value::Float(1.0)})));
  Object a;
  a.Set("x", Value::Int(1));
  a.Set("y", Value::Int(2));
  Object b;
  b.Set("y", Value::Int(2));
  b.Set("x", Value::Int(1));
  EXPECT_TRUE(Equals(Value::MakeObject(a), Value::MakeObject(b)));  // dict equality ignores order
  EXPECT_FALSE(Compare(Value::Int(1), Value::String("a")).ok());
}

TEST(JinjaValueTest, ObjectKeepsInsertionOrderAndScales) {
  Object object;
  for (int i = 40; i > 0; --i) object.Set("k" + std::to_string(i), Value::Int(i));
  object.Set("k7", Value::Int(700));  // replaced in place
  EXPECT_EQ(object.size(), 40u);
  EXPECT_EQ(object.entries().front().first, "k40");
  EXPECT_EQ(object.Find("k7")->AsInt(), 700);
  EXPECT_EQ(object.Find("missing"), nullptr);
}

TEST(JinjaJsonTest, RoundTripKeepsOrderAndTypes) {
  auto json = nlohmann::ordered_json::parse(R"({"z": 1, "a": [1.5, "s", null, true, {"n": -3}], "big": 18446744073709551615})");
  Limits limits;
  auto value = FromJson(json, limits);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->AsObject().entries().front().first, "z");
  EXPECT_EQ(value->depth(), 3);
  auto text = ToJson(*value, JsonOptions(), limits);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, R"({"z": 1, "a": [1.5, "s", null, true, {"n": -3}], "big": 1.8446744073709552e+19})");
  auto sorted_input = FromJson(nlohmann::json::parse(R"({"z": 1, "a": 2})"), limits);
  EXPECT_EQ(sorted_input->AsObject().entries().front().first, "a");  // plain json sorts keys
}

}  // namespace
}  // namespace surge::jinja
