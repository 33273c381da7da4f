// vLLM's serve flags onto ServeConfig, the ones refused with their reason, and model ids
// found in a Hugging Face cache directory.
#include "apps/vllm_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apps/hf_cache.h"

namespace surge {
namespace {

using ::testing::HasSubstr;

// Parses `args` (no environment) into a fresh config; the status of parse + apply.
Status Apply(const std::vector<std::string>& args, ServeConfig* config) {
  VllmFlags flags;
  FlagParser parser("serve");
  RegisterVllmFlags(parser, flags);
  RETURN_IF_ERROR(parser.Parse(args, {}));
  return ApplyVllmFlags(flags, parser, false, config);
}

TEST(VllmFlagsTest, AcceptedFlagsTakeEffect) {
  ServeConfig config;
  ASSERT_TRUE(Apply({"--max-model-len", "4K", "--api-key", "a,b", "--no-enable-prefix-caching", "--seed", "7",
                     "--gpu-memory-utilization", "0.5", "-tp", "1", "--trust-remote-code", "--enforce-eager",
                     "--uvicorn-log-level", "info", "--disable-log-requests", "--metrics-compat", "vllm"},
                    &config)
                  .ok());
  EXPECT_EQ(config.server.max_model_len, 4096);
  EXPECT_EQ(config.server.api_keys, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(config.engine.enable_prefix_caching);
  EXPECT_EQ(config.engine.seed, 7u);
  EXPECT_EQ(config.kv_cache_fraction, 0.5);
  EXPECT_TRUE(config.server.vllm_metrics);
}

TEST(VllmFlagsTest, RefusedFlagsSayWhy) {
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"--tensor-parallel-size", "2"}, "--tensor-parallel-size 2 is not supported"},
      {{"-tp=4"}, "--tensor-parallel-size 4 is not supported"},
      {{"--swap-space", "16"}, "--swap-space is not supported: surge preempts by recomputing"},
      {{"-q", "awq"}, "--quantization is not supported"},
      {{"--no-enable-chunked-prefill"}, "always prefills in chunks"},
      {{"--max-model-len", "lots"}, "--max-model-len: expected a positive token count"},
      {{"--generation-config", "auto"}, "--generation-config: only 'vllm'"},
      {{"--gpu-memory-utilization", "1.5"}, "--gpu-memory-utilization must be in (0, 1]"},
      {{"--api-key-for-metrics"}, "--api-key-for-metrics needs --api-key"},
      {{"--api-key", "a,,b"}, "--api-key: keys are comma-separated"},
      {{"--enable-auto-tool-choice", "--log-level", "loud"}, "--log-level must be"},
  };
  for (const auto& [args, message] : cases) {
    ServeConfig config;
    const Status status = Apply(args, &config);
    EXPECT_THAT(status.message(), HasSubstr(message)) << args[0];
  }
  ServeConfig config;
  config.tool_call_parser = ToolCallParserKind::kNone;
  EXPECT_THAT(Apply({"--enable-auto-tool-choice"}, &config).message(), HasSubstr("needs a tool call parser"));
}

TEST(VllmFlagsTest, TokenCounts) {
  EXPECT_EQ(*ParseTokenCount("2048", "x"), 2048);
  EXPECT_EQ(*ParseTokenCount("2k", "x"), 2000);
  EXPECT_EQ(*ParseTokenCount("2K", "x"), 2048);
  EXPECT_EQ(*ParseTokenCount("1M", "x"), 1 << 20);
  for (const char* bad : {"", "0", "-5", "2x", "k", "99999999999999999999"}) EXPECT_FALSE(ParseTokenCount(bad, "x").ok()) << bad;
}

TEST(HfCacheTest, ModelIdsResolveToTheirSnapshot) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hf_cache_test_" + std::to_string(getpid()));
  const fs::path repo = dir / "models--Org--Tiny";
  fs::create_directories(repo / "snapshots" / "abc123");
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << "abc123";
  const std::vector<std::string> dirs = {(dir / "missing").string(), dir.string()};
  EXPECT_EQ(*ResolveModelPath("Org/Tiny", dirs), (repo / "snapshots" / "abc123").string());
  EXPECT_EQ(*ResolveModelPath("models/stories260K", dirs), "models/stories260K");  // a local path as is
  const StatusOr<std::string> missing = ResolveModelPath("Org/Other", dirs);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("never downloads"));
  fs::remove(repo / "refs" / "main");  // no ref: the only snapshot
  EXPECT_EQ(*ResolveModelPath("Org/Tiny", dirs), (repo / "snapshots" / "abc123").string());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace surge
