#include "base/flags.h"

#include <gtest/gtest.h>

namespace surge {
namespace {

struct Fixture {
  std::string model = "default";
  int64_t max_tokens = 16;
  double temperature = 1.0;
  bool json = false;
  FlagParser parser{"generate"};
  Fixture() {
    parser.AddString("model", &model, "model path");
    parser.AddInt("max-tokens", &max_tokens, "tokens");
    parser.AddDouble("temperature", &temperature, "temperature");
    parser.AddBool("json", &json, "json output");
  }
};

TEST(FlagParserTest, ParsesBothFormsAndKeepsDefaults) {
  Fixture f;
  ASSERT_TRUE(f.parser.Parse({"--model", "m", "--temperature=0.5", "--json"}).ok());
  EXPECT_EQ(f.model, "m");
  EXPECT_EQ(f.temperature, 0.5);
  EXPECT_TRUE(f.json);
  EXPECT_EQ(f.max_tokens, 16);
  EXPECT_TRUE(f.parser.seen("model"));
  EXPECT_FALSE(f.parser.seen("max-tokens"));
}

TEST(FlagParserTest, ErrorsNameTheFlag) {
  Fixture f;
  EXPECT_NE(f.parser.Parse({"--max-tokens", "ten"}).message().find("--max-tokens"), std::string::npos);
  Fixture g;
  EXPECT_NE(g.parser.Parse({"--bogus", "1"}).message().find("unknown flag --bogus"), std::string::npos);
  Fixture h;
  EXPECT_NE(h.parser.Parse({"--model"}).message().find("missing value"), std::string::npos);
  Fixture i;
  EXPECT_NE(i.parser.Parse({"stray"}).message().find("unexpected argument"), std::string::npos);
  Fixture j;
  EXPECT_FALSE(j.parser.Parse({"--temperature", "nan"}).ok());
}

}  // namespace
}  // namespace surge
