// Outside JSON through json_access: errors name the document and key, nothing throws.
#include "base/json_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge::json {
namespace {

using ::testing::HasSubstr;

TEST(JsonAccessTest, ParseChecksDepthAndSizeBeforeParsing) {
  EXPECT_TRUE(Parse(R"({"a": [1, 2]})", "doc").ok());
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_THAT(Parse(deep, "doc").status().message(), HasSubstr("doc: JSON nests deeper than"));
  EXPECT_THAT(Parse("[1]", "doc", 8, 2).status().message(), HasSubstr("more than the limit of 2"));
  EXPECT_THAT(Parse("{", "queue body").status().message(), HasSubstr("queue body: not valid JSON"));
}

TEST(JsonAccessTest, DumpReplacesInvalidUtf8) {
  Json value = std::string("a\xff" "b");
  EXPECT_EQ(Dump(value), "\"a\xEF\xBF\xBD" "b\"");
  const nlohmann::json unordered = {{"k", std::string("a\xff" "b")}};
  EXPECT_EQ(Dump(unordered), "{\"k\":\"a\xEF\xBF\xBD" "b\"}");
}

TEST(JsonAccessTest, ToInt64RefusesWhatWouldNotConvertExactly) {
  EXPECT_EQ(*ToInt64(Json::parse("16"), 1, 4096), 16);
  EXPECT_EQ(*ToInt64(Json::parse("16.0"), 1, 4096), 16);
  for (const char* bad : {"1e300", "-1e300", "16.5", "4294967297", "0", "\"16\"", "true"}) {
    EXPECT_FALSE(ToInt64(Json::parse(bad), 1, 4096).ok()) << bad;
  }
  EXPECT_FALSE(ToInt64(Json::parse("18446744073709551615")).ok());
  EXPECT_FALSE(ToInt64(Json::parse("9223372036854775808.0")).ok());
  EXPECT_EQ(*ToInt64(Json::parse("-9223372036854775808")), std::numeric_limits<int64_t>::min());
}

TEST(JsonAccessTest, ToDoubleRefusesNonFinite) {
  EXPECT_EQ(*ToDouble(Json::parse("0.5"), 0, 1), 0.5);
  EXPECT_FALSE(ToDouble(Json(std::nan("")), 0, 1).ok());
  EXPECT_FALSE(ToDouble(Json(std::numeric_limits<double>::infinity())).ok());
  EXPECT_FALSE(ToDouble(Json::parse("2"), 0, 1).ok());
  EXPECT_FALSE(ToDouble(Json::parse("\"x\"")).ok());
}

TEST(JsonAccessTest, ObjectReaderKeepsTheFirstErrorNamingTheKey) {
  const Json config = Json::parse(R"({"hash": 1, "block_size": 1e300, "name": "x"})");
  std::string hash, name;
  int64_t block_size = 0;
  ObjectReader reader(config, "kv_config");
  reader.String("hash", &hash).Int("block_size", 1, 4096, &block_size).String("name", &name);
  EXPECT_EQ(reader.status().message(), "kv_config: hash must be a string, got an integer");
  EXPECT_EQ(name, "");  // reads after the first error do nothing

  ObjectReader range(config, "kv_config");
  range.Int("block_size", 1, 4096, &block_size);
  EXPECT_THAT(range.status().message(), HasSubstr("block_size must be an integer in [1, 4096], got 1e+300"));
}

TEST(JsonAccessTest, ObjectReaderOptionalAndRequired) {
  const Json value = Json::parse(R"({"a": null, "n": 3, "o": {}, "l": []})");
  int32_t n = 7, missing = 7;
  const Json* o = nullptr;
  const Json* l = nullptr;
  bool flag = true;
  ObjectReader reader(value, "doc");
  reader.Int("n", 0, 10, &n).Int("a", 0, 10, &missing).Bool("absent", &flag).Object("o", &o).Array("l", &l);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ(n, 3);
  EXPECT_EQ(missing, 7);
  EXPECT_TRUE(flag);
  EXPECT_TRUE(o != nullptr && l != nullptr);

  std::string s;
  EXPECT_EQ(ObjectReader(value, "doc").RequiredString("a", &s).status().message(), "doc: a is required");
  EXPECT_EQ(ObjectReader(Json::parse("[1]"), "doc").status().message(), "doc: must be an object, got an array");
}

}  // namespace
}  // namespace surge::json
