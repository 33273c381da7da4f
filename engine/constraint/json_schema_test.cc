#include <gtest/gtest.h>

#include "engine/constraint/constraint_test_util.h"

namespace surge::testing {
namespace {

std::string SchemaError(const std::string& schema) {
  return CompileError({ConstraintKind::kJsonSchema, schema, {}});
}

TEST(JsonSchemaTest, ObjectWithRequiredAndOptionalInSchemaOrder) {
  auto g = MustCompileSchema(R"({"type":"object","properties":{
      "name":{"type":"string"},"age":{"type":"integer"},"ok":{"type":"boolean"}},
      "required":["name","ok"]})");
  EXPECT_TRUE(Matches(g, R"({"name":"Bo","age":3,"ok":true})"));
  EXPECT_TRUE(Matches(g, R"({"name": "Bo", "ok": false})"));
  EXPECT_TRUE(Matches(g, R"({"name":"","age":-12,"ok":true})"));
  EXPECT_FALSE(Matches(g, R"({"age":3,"name":"Bo","ok":true})"));  // order
  EXPECT_FALSE(Matches(g, R"({"name":"Bo"})"));                    // missing required
  EXPECT_FALSE(Matches(g, R"({"name":"Bo","ok":true,"x":1})"));    // additional
  EXPECT_FALSE(Matches(g, R"({ "name":"Bo","ok":true})"));         // whitespace rule
  EXPECT_FALSE(Matches(g, R"({"name":"Bo",  "ok":true})"));
  EXPECT_FALSE(Matches(g, "{\"name\":\"Bo\",\n\"ok\":true}"));
  EXPECT_FALSE(Matches(g, R"({"name":"Bo","age":03,"ok":true})"));
}

TEST(JsonSchemaTest, AllOptionalPropertiesAndCommas) {
  auto g = MustCompileSchema(R"({"properties":{"a":{"type":"null"},"b":{"type":"null"},"c":{"type":"null"}}})");
  for (const char* ok : {"{}", R"({"a":null})", R"({"b":null})", R"({"a":null,"c":null})",
                         R"({"a":null,"b":null,"c":null})", R"({"c":null})"}) {
    EXPECT_TRUE(Matches(g, ok)) << ok;
  }
  for (const char* bad : {R"({,"a":null})", R"({"a":null,})", R"({"b":null,"a":null})", R"({"a":null"b":null})"}) {
    EXPECT_FALSE(Matches(g, bad)) << bad;
  }
}

TEST(JsonSchemaTest, StringsEscapesAndControlCharacters) {
  auto g = MustCompileSchema(R"({"type":"string"})");
  EXPECT_TRUE(Matches(g, R"("a\"b\\c\/\b\f\n\r\t")"));
  EXPECT_TRUE(Matches(g, R"("\u00e9\uD83D\uDE00 é 😀")"));
  EXPECT_FALSE(Matches(g, "\"a\nb\""));     // raw control character
  EXPECT_FALSE(Matches(g, R"("\x41")"));    // not a JSON escape
  EXPECT_FALSE(Matches(g, R"("\uD83D")"));  // lone surrogate
  EXPECT_FALSE(Matches(g, R"("\uDE00")"));
  EXPECT_FALSE(Matches(g, "\"\xC3\""));     // broken UTF-8
  EXPECT_FALSE(Matches(g, "\"\xED\xA0\x80\""));  // UTF-8 surrogate
  auto bounded = MustCompileSchema(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_FALSE(Matches(bounded, R"("é")"));
  EXPECT_TRUE(Matches(bounded, R"("é\n")"));
  EXPECT_TRUE(Matches(bounded, R"("😀ab")"));
  EXPECT_FALSE(Matches(bounded, R"("abcd")"));
}

TEST(JsonSchemaTest, NumbersIntegersAndRanges) {
  auto number = MustCompileSchema(R"({"type":"number"})");
  for (const char* ok : {"0", "-0", "1.5", "-12.25e+3", "3E7", "10"}) EXPECT_TRUE(Matches(number, ok)) << ok;
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "--1", "1.5.2"}) EXPECT_FALSE(Matches(number, bad)) << bad;
  auto range = MustCompileSchema(R"({"type":"integer","minimum":-15,"exclusiveMaximum":120})");
  for (int v = -200; v <= 300; ++v) {
    EXPECT_EQ(Matches(range, std::to_string(v)), v >= -15 && v < 120) << v;
  }
  auto big = MustCompileSchema(R"({"type":"integer","minimum":95,"maximum":1234567})");
  for (int v : {94, 95, 99, 100, 999, 1000, 1234567, 1234568, 9999999}) {
    EXPECT_EQ(Matches(big, std::to_string(v)), v >= 95 && v <= 1234567) << v;
  }
  auto nonneg = MustCompileSchema(R"({"type":"number","minimum":0})");
  EXPECT_TRUE(Matches(nonneg, "0.5"));
  EXPECT_FALSE(Matches(nonneg, "-0.5"));
}

TEST(JsonSchemaTest, ArraysEnumsConstAndCombinators) {
  auto g = MustCompileSchema(R"({"type":"array","items":{"enum":["a",1,null,{"x":[true]}]},"minItems":1,"maxItems":3})");
  EXPECT_TRUE(Matches(g, R"(["a"])"));
  EXPECT_TRUE(Matches(g, R"(["a", 1,{"x":[true]}])"));
  EXPECT_FALSE(Matches(g, "[]"));
  EXPECT_FALSE(Matches(g, R"([1,1,1,1])"));
  EXPECT_FALSE(Matches(g, R"(["b"])"));
  auto any_of = MustCompileSchema(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})");
  EXPECT_TRUE(Matches(any_of, "12"));
  EXPECT_TRUE(Matches(any_of, R"("x")"));
  EXPECT_FALSE(Matches(any_of, R"("xy")"));
  auto types = MustCompileSchema(R"({"type":["boolean","null"]})");
  EXPECT_TRUE(Matches(types, "null"));
  EXPECT_FALSE(Matches(types, "0"));
  auto c = MustCompileSchema(R"({"const":"hi \"you\""})");
  EXPECT_TRUE(Matches(c, R"("hi \"you\"")"));
}

TEST(JsonSchemaTest, RefsIncludingRecursion) {
  auto g = MustCompileSchema(R"({"$defs":{"p":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},
      "type":"array","items":{"$ref":"#/$defs/p"}})");
  EXPECT_TRUE(Matches(g, R"([{"x":1}, {"x":2}])"));
  EXPECT_FALSE(Matches(g, R"([{"y":1}])"));
  auto tree = MustCompileSchema(R"({"definitions":{"node":{"type":"object","properties":{
      "v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/definitions/node"}}},"required":["v"]}},
      "$ref":"#/definitions/node"})");
  EXPECT_FALSE(tree->pure_dfa());
  EXPECT_TRUE(Matches(tree, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]})"));
  EXPECT_FALSE(Matches(tree, R"({"v":1,"kids":[{"kids":[]}]})"));
}

TEST(JsonSchemaTest, AdditionalPropertiesAndFormats) {
  auto g = MustCompileSchema(R"({"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"boolean"}})");
  EXPECT_TRUE(Matches(g, R"({"a":1,"z":true, "y":false})"));
  EXPECT_TRUE(Matches(g, R"({"z":true})"));
  EXPECT_FALSE(Matches(g, R"({"z":1})"));
  auto date = MustCompileSchema(R"({"type":"string","format":"date"})");
  EXPECT_TRUE(Matches(date, R"("2024-12-31")"));
  EXPECT_FALSE(Matches(date, R"("2024-02-30")"));
  EXPECT_FALSE(Matches(date, R"("2024-13-01")"));
  auto dt = MustCompileSchema(R"({"type":"string","format":"date-time"})");
  EXPECT_TRUE(Matches(dt, R"("2024-01-02T03:04:05.123Z")"));
  EXPECT_TRUE(Matches(dt, R"("2024-01-02T23:59:59+05:30")"));
  EXPECT_FALSE(Matches(dt, R"("2024-01-02T24:00:00Z")"));
  auto uuid = MustCompileSchema(R"({"type":"string","format":"uuid"})");
  EXPECT_TRUE(Matches(uuid, R"("123e4567-e89b-12d3-a456-426614174000")"));
  auto email = MustCompileSchema(R"({"format":"email"})");
  EXPECT_TRUE(Matches(email, R"("a.b+c@example.co.uk")"));
  EXPECT_FALSE(Matches(email, R"("a@b")"));
  auto pattern = MustCompileSchema(R"({"type":"string","pattern":"^[a-c\"]+\\d$"})");
  EXPECT_TRUE(Matches(pattern, R"("ab\"c7")"));
  EXPECT_FALSE(Matches(pattern, R"("abd7")"));
}

TEST(JsonSchemaTest, AnnotationsAreIgnored) {
  MustCompileSchema(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","title":"T",
      "description":"d","type":"object","properties":{"a":{"type":"string","default":"x","examples":["y"]}}})");
}

TEST(JsonSchemaTest, UnsupportedKeywordsAreErrorsNamingThem) {
  EXPECT_EQ(SchemaError(R"({"type":"object","patternProperties":{"a":{}}})"),
            "json_schema: keyword 'patternProperties' is not supported (at #)");
  EXPECT_NE(SchemaError(R"({"properties":{"a":{"type":"integer","multipleOf":3}}})").find("'multipleOf'"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"properties":{"a":{"type":"integer","multipleOf":3}}})").find("#/properties/a"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type":"array","prefixItems":[]})").find("'prefixItems'"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type":"string","format":"uri"})").find("format 'uri'"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type":"number","maximum":3})").find("'maximum'"), std::string::npos);
  EXPECT_NE(SchemaError(R"x({"type":"string","pattern":"(?=a)"})x").find("lookaround"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"allOf":[{},{}]})").find("'allOf'"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type":"frog"})").find("unknown type 'frog'"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"$ref":"#/$defs/none"})").find("does not resolve"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"required":["a"]})").find("required property 'a'"), std::string::npos);
  EXPECT_NE(SchemaError("{not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(SchemaError("false").find("matches nothing"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type":"integer","minimum":5,"maximum":4})").find("empty"), std::string::npos);
}

TEST(JsonSchemaTest, LimitsGiveClearErrors) {
  std::string deep = R"({"type":"string"})";
  for (int i = 0; i < 40; ++i) deep = R"({"type":"array","items":)" + deep + "}";
  EXPECT_NE(SchemaError(deep).find("nest deeper"), std::string::npos);
  std::string many = R"({"type":"object","properties":{)";
  for (int i = 0; i < 300; ++i) many += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{}";
  EXPECT_NE(SchemaError(many + "}}").find("more than 256 properties"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type":"string","maxLength":100000})").find("'maxLength' above"), std::string::npos);
  ConstraintLimits small;
  small.max_dfa_states = 50;
  auto r = CompileConstraint({ConstraintKind::kJsonSchema, R"({"type":"string","maxLength":100})", {}}, small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("grammar too large"), std::string::npos);
}

TEST(JsonObjectTest, AnyObjectWithBoundedNesting) {
  auto g = MustCompile({ConstraintKind::kJsonObject, "", {}});
  EXPECT_TRUE(Matches(g, "{}"));
  EXPECT_TRUE(Matches(g, R"({"a":[1,{"b":null}, "x"],"c":{"d":-1.5e3}})"));
  EXPECT_FALSE(Matches(g, "[]"));
  EXPECT_FALSE(Matches(g, R"({"a":1,})"));
  EXPECT_FALSE(Matches(g, R"({a:1})"));
  std::string nested = "1";
  for (int i = 0; i < 15; ++i) nested = "[" + nested + "]";
  EXPECT_TRUE(Matches(g, "{\"k\":" + nested + "}"));   // 16 levels
  EXPECT_FALSE(Matches(g, "{\"k\":[" + nested + "]}"));  // 17
}

}  // namespace
}  // namespace surge::testing
