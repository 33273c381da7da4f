#include "base/flags.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace surge {
namespace {

struct Fixture {
  std::string model = "default";
  int64_t max_tokens = 16;
  double temperature = 1.0;
  bool json = false;
  std::string keys;
  FlagParser parser{"generate"};
  Fixture() {
    parser.AddString("api-key", &keys, "keys");
    parser.AddAlias("-mt", "max-tokens");
    parser.AddRefused("trust-remote-code", "no Python runs here");
    parser.AddString("model", &model, "model path");
    parser.AddInt("max-tokens", &max_tokens, "tokens");
    parser.AddDouble("temperature", &temperature, "temperature");
    parser.AddBool("json", &json, "json output");
  }
};

TEST(FlagParserTest, ParsesBothFormsAndKeepsDefaults) {
  Fixture f;
  ASSERT_TRUE(f.parser.Parse({"--model", "m", "--temperature=0.5", "--json"}, {}).ok());
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


// A temporary directory for config files, removed with the test.
class FlagConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("flags_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST(FlagParserTest, ShortAliasNegationAndRefusal) {
  Fixture f;
  ASSERT_TRUE(f.parser.Parse({"-mt", "3", "--no-json"}, {}).ok());
  EXPECT_EQ(f.max_tokens, 3);
  EXPECT_FALSE(f.json);
  Fixture g;
  ASSERT_TRUE(g.parser.Parse({"-mt=5", "--json=true"}, {}).ok());
  EXPECT_EQ(g.max_tokens, 5);
  EXPECT_TRUE(g.json);
  Fixture h;
  const Status refused = h.parser.Parse({"--trust-remote-code"}, {});
  EXPECT_NE(refused.message().find("--trust-remote-code is not supported: no Python runs here"), std::string::npos);
  Fixture i;
  EXPECT_NE(i.parser.Parse({"-x"}, {}).message().find("unknown flag -x"), std::string::npos);
  EXPECT_EQ(i.parser.Usage().find("trust-remote-code"), std::string::npos);
  EXPECT_NE(i.parser.Usage().find("--max-tokens VALUE, -mt"), std::string::npos);
}

TEST(FlagParserTest, EnvironmentFillsWhatTheCommandLineLeft) {
  Fixture f;
  const FlagParser::Environment env = {{"SURGE_MAX_TOKENS", "7"}, {"SURGE_MODEL", "env-model"},
                                       {"SURGE_API_KEY", "k1,k2"}, {"SURGE_UNRELATED", "x"}};
  ASSERT_TRUE(f.parser.Parse({"--model", "cli-model"}, env).ok());
  EXPECT_EQ(f.model, "cli-model");
  EXPECT_EQ(f.max_tokens, 7);
  EXPECT_EQ(f.keys, "k1,k2");
  EXPECT_EQ(f.parser.source("model"), FlagSource::kCommandLine);
  EXPECT_EQ(f.parser.source("max-tokens"), FlagSource::kEnvironment);
  EXPECT_TRUE(f.parser.seen("max-tokens"));
  Fixture g;
  const Status bad = g.parser.Parse({}, {{"SURGE_MAX_TOKENS", "many"}});
  EXPECT_NE(bad.message().find("SURGE_MAX_TOKENS"), std::string::npos) << bad.message();
  Fixture h;
  EXPECT_FALSE(h.parser.Parse({}, {{"SURGE_TRUST_REMOTE_CODE", "1"}}).ok());
  EXPECT_EQ(FlagEnvironmentName("max-model-len"), "SURGE_MAX_MODEL_LEN");
}

TEST(FlagParserTest, EnvironmentAliasRanksBelowTheSurgeName) {
  Fixture f;
  f.parser.AddEnvironmentAlias("VLLM_API_KEY", "api-key");
  ASSERT_TRUE(f.parser.Parse({}, {{"VLLM_API_KEY", "v"}}).ok());
  EXPECT_EQ(f.keys, "v");
  Fixture g;
  g.parser.AddEnvironmentAlias("VLLM_API_KEY", "api-key");
  ASSERT_TRUE(g.parser.Parse({}, {{"VLLM_API_KEY", "v"}, {"SURGE_API_KEY", "s"}}).ok());
  EXPECT_EQ(g.keys, "s");
}

TEST_F(FlagConfigTest, ConfigFileIsTheLowestSource) {
  const std::string path = Write("c.yaml",
                                 "model: file-model\nmax_tokens: 9\ntemperature: 0.25\njson: true\n"
                                 "api-key: [a, b]\n");
  Fixture f;
  ASSERT_TRUE(f.parser.Parse({"--config", path, "--temperature", "0.5"}, {{"SURGE_MODEL", "env-model"}}).ok());
  EXPECT_EQ(f.model, "env-model");
  EXPECT_EQ(f.temperature, 0.5);
  EXPECT_TRUE(f.json);
  EXPECT_EQ(f.keys, "a,b");
  EXPECT_EQ(f.parser.source("json"), FlagSource::kConfigFile);
  EXPECT_EQ(f.max_tokens, 9);
  Fixture g;
  ASSERT_TRUE(g.parser.Parse({}, {{"SURGE_CONFIG", path}}).ok());
  EXPECT_EQ(g.model, "file-model");
}

TEST_F(FlagConfigTest, ConfigFileRefusesUnknownKeysByName) {
  Fixture f;
  const Status unknown = f.parser.Parse({"--config", Write("u.yaml", "model: m\nbogus_key: 1\n")}, {});
  EXPECT_NE(unknown.message().find("unknown key 'bogus_key'"), std::string::npos) << unknown.message();
  Fixture g;
  const Status nested = g.parser.Parse({"--config", Write("n.yaml", "model: {a: 1}\n")}, {});
  EXPECT_NE(nested.message().find("'model'"), std::string::npos) << nested.message();
  Fixture h;
  const Status bad = h.parser.Parse({"--config=" + Write("b.json", "{\"max-tokens\": \"x\"}")}, {});
  EXPECT_NE(bad.message().find("max-tokens"), std::string::npos) << bad.message();
  Fixture twice;
  const Status both = twice.parser.Parse({"--config", Write("t.yaml", "max_tokens: 1\nmt: 2\n")}, {});
  EXPECT_NE(both.message().find("given twice"), std::string::npos) << both.message();
  Fixture i;
  EXPECT_EQ(i.parser.Parse({"--config", (dir_ / "missing.yaml").string()}, {}).code(), StatusCode::kNotFound);
}

TEST(FlagParserTest, CommandWithItsOwnConfigFlagKeepsIt) {
  Fixture f;
  std::string config;
  f.parser.AddString("config", &config, "the command's own config file");
  ASSERT_TRUE(f.parser.Parse({"--config", "route.yaml"}, {{"SURGE_CONFIG", "other.yaml"}}).ok());
  EXPECT_EQ(config, "route.yaml");
}

}  // namespace
}  // namespace surge
