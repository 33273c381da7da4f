// YamlToJson: a route config in YAML gives the same tree as in JSON; core-schema typing,
// duplicate keys, aliases within bounds (billion laughs refused), depth and size limits,
// errors with line and column.
#include "base/yaml/yaml_to_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace surge {
namespace {

using nlohmann::json;

json Yaml(std::string_view text) {
  StatusOr<json> tree = YamlToJson(text);
  EXPECT_TRUE(tree.ok()) << text << "\n" << tree.status().ToString();
  return tree.ok() ? *tree : json("<error>");
}

void ExpectError(std::string_view text, const std::string& needle, const YamlLimits& limits = {}) {
  StatusOr<json> tree = YamlToJson(text, limits);
  ASSERT_FALSE(tree.ok()) << text << " gave " << tree->dump();
  EXPECT_EQ(tree.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(tree.status().message().find(needle), std::string::npos) << text << "\n" << tree.status().message();
}

TEST(YamlToJsonTest, RouteConfigInYamlEqualsTheJsonOne) {
  StatusOr<json> from_yaml = LoadConfigFile("tests/data/route_config.yaml");
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.status().ToString();
  StatusOr<json> from_json = LoadConfigFile("tests/data/route_config.json");
  ASSERT_TRUE(from_json.ok()) << from_json.status().ToString();
  EXPECT_EQ(*from_yaml, *from_json) << from_yaml->dump(2);
  // Same types too (json's == compares 1 and 1.0 as equal).
  EXPECT_TRUE((*from_yaml)["listen"]["port"].is_number_integer());
  EXPECT_TRUE((*from_yaml)["backends"][1]["weight"].is_number_float());
  EXPECT_TRUE((*from_yaml)["version"].is_string());
}

TEST(YamlToJsonTest, PlainScalarsFollowTheCoreSchema) {
  const json tree = Yaml(
      "n: [null, Null, NULL, ~]\n"
      "e:\n"
      "b: [true, True, TRUE, false, False, FALSE]\n"
      "i: [0, -17, +5, 0o17, 0x1F, 9223372036854775807, -9223372036854775808, 18446744073709551615]\n"
      "f: [1.5, -2e3, .5, 1., 6.02E+23]\n"
      "s: [yes, no, on, off, 1_000, 0b11, 012e, 1.2.3, 0x, 'true', \"42\", !!str 7, null x]\n");
  EXPECT_EQ(tree["n"], json::parse("[null, null, null, null]"));
  EXPECT_TRUE(tree.contains("e") && tree["e"].is_null());
  EXPECT_EQ(tree["b"], json::parse("[true, true, true, false, false, false]"));
  EXPECT_EQ(tree["i"], json::parse("[0, -17, 5, 15, 31, 9223372036854775807, -9223372036854775808, "
                                   "18446744073709551615]"));
  for (const json& value : tree["i"]) EXPECT_TRUE(value.is_number_integer()) << value;
  EXPECT_EQ(tree["f"], json::parse("[1.5, -2000.0, 0.5, 1.0, 6.02e23]"));
  for (const json& value : tree["f"]) EXPECT_TRUE(value.is_number_float()) << value;
  EXPECT_EQ(tree["s"], json::parse(R"(["yes", "no", "on", "off", "1_000", "0b11", "012e", "1.2.3", "0x",
                                       "true", "42", "7", "null x"])"));
}

TEST(YamlToJsonTest, KeysAreTextAndBlockScalarsStrings) {
  EXPECT_EQ(Yaml("1: a\ntrue: b\n\"x y\": c\n"), json::parse(R"({"1": "a", "true": "b", "x y": "c"})"));
  EXPECT_EQ(Yaml("a: |\n  one\n  two\nb: >\n  one\n  two\n"), json::parse(R"({"a": "one\ntwo\n", "b": "one two\n"})"));
  EXPECT_EQ(Yaml("{\"json\": [1, 2.5, \"x\", null, true]}"), json::parse(R"({"json": [1, 2.5, "x", null, true]})"));
  EXPECT_EQ(Yaml("- - - deep\n"), json::parse(R"([[["deep"]]])"));
  EXPECT_EQ(Yaml("a: {}\nb: []\n"), json::parse(R"({"a": {}, "b": []})"));
}

TEST(YamlToJsonTest, EmptyStreamIsNullAndOneDocumentOnly) {
  EXPECT_EQ(Yaml(""), json(nullptr));
  EXPECT_EQ(Yaml("# only a comment\n"), json(nullptr));
  EXPECT_EQ(Yaml("---\na: 1\n...\n"), json::parse(R"({"a": 1})"));
  ExpectError("a: 1\n---\nb: 2\n", "line 2, column 1: more than one YAML document");
}

TEST(YamlToJsonTest, RefusesDuplicateAndComplexKeys) {
  ExpectError("pools:\n  a: 1\n  b: 2\n  a: 3\n", "line 4, column 3: duplicate key 'a'");
  ExpectError("{x: 1, x: 2}", "duplicate key 'x'");
  ExpectError("? [a, b]\n: 1\n", "mapping keys must be scalars");
  ExpectError("a: &k key\n*k : 2\n", "aliases as mapping keys");
}

TEST(YamlToJsonTest, RefusesWhatJsonCannotHold) {
  ExpectError("a: .inf", "line 1, column 4: '.inf' is not a finite number");
  ExpectError("a: -.Inf", "not a finite number");
  ExpectError("a: .nan", "not a finite number");
  ExpectError("a: 1e999", "out of range");
  ExpectError("a: 18446744073709551616", "does not fit in 64 bits");
  ExpectError("a: -9223372036854775809", "does not fit in 64 bits");
  ExpectError("a: !!int 5", "unsupported tag 'tag:yaml.org,2002:int'");
  ExpectError("a: !custom {b: 1}", "unsupported tag '!custom'");
}

TEST(YamlToJsonTest, AliasesResolveWithinBounds) {
  EXPECT_EQ(Yaml("base: &b {x: 1, y: [2]}\nuse: *b\nalso: *b\n"),
            json::parse(R"({"base": {"x": 1, "y": [2]}, "use": {"x": 1, "y": [2]}, "also": {"x": 1, "y": [2]}})"));
  EXPECT_EQ(Yaml("a: &s text\nb: *s\n"), json::parse(R"({"a": "text", "b": "text"})"));
  ExpectError("a: *nowhere\n", "unknown or unfinished anchor 'nowhere'");
  ExpectError("a: &self [1, *self]\n", "unknown or unfinished anchor 'self'");
  // Billion laughs: nine levels of ten aliases each would be 10^9 nodes.
  std::string laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    laughs += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int j = 1; j < 10; ++j) laughs += ", " + prev;
    laughs += "]\n";
  }
  ExpectError(laughs, "more than 100000 nodes (aliases expanded)");
}

TEST(YamlToJsonTest, DepthAndSizeAreBounded) {
  YamlLimits limits;
  limits.max_depth = 8;
  EXPECT_TRUE(YamlToJson(std::string(8, '[') + std::string(8, ']'), limits).ok());
  ExpectError(std::string(9, '[') + std::string(9, ']'), "line 1, column 9: nested deeper than 8", limits);
  ExpectError(std::string(200'000, '[') + std::string(200'000, ']'), "nested deeper than 64");
  ExpectError("a: &d [[[[1]]]]\nb: [[[[*d]]]]\n", "alias 'd' nests deeper than 8", limits);
  limits.max_bytes = 16;
  ExpectError("a: 12345678901234567890", "over the limit of 16", limits);
}

TEST(YamlToJsonTest, SyntaxErrorsNameLineAndColumn) {
  ExpectError("a: 1\nb: [1, 2\n", "line 3, column 1:");
  ExpectError("a: 1\n  b: 2\n", "line 2, column 4:");
  ExpectError("a: \"unterminated\n", "found unexpected end of stream");
  ExpectError("a:\tb\n\t- c\n", "line 2");
}

TEST(YamlToJsonTest, LoadConfigFileNamesThePath) {
  StatusOr<json> missing = LoadConfigFile("tests/data/no_such_route.yaml");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("tests/data/no_such_route.yaml"), std::string::npos);
  const std::string path = testing::TempDir() + "/bad_route.yaml";
  std::ofstream(path) << "pools:\n  a: 1\n  a: 2\n";
  StatusOr<json> bad = LoadConfigFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), path + ": line 3, column 3: duplicate key 'a'");
  const std::string json_path = testing::TempDir() + "/bad_route.json";
  std::ofstream(json_path) << "{\"a\": [1,}";
  EXPECT_NE(LoadConfigFile(json_path).status().message().find(json_path + ": not valid JSON"), std::string::npos);
  std::ofstream(json_path) << R"({"pools": {"a": {"policy": "p2c"}, "b": {}, "a": {}}, "b": 1})";
  EXPECT_EQ(LoadConfigFile(json_path).status().message(), json_path + ": duplicate key 'a'");
  std::ofstream(json_path) << R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})";
  EXPECT_TRUE(LoadConfigFile(json_path).ok()) << "equal keys in different objects are fine";
}

}  // namespace
}  // namespace surge
