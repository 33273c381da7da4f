// ParseTiersConfig: defaults, every key taking effect, unknown keys and bad values refused
// by path.
#include "router/tiers/tiers_config.h"

#include <gtest/gtest.h>

namespace surge::router {
namespace {

using nlohmann::json;

TEST(TiersConfigTest, EmptySectionKeepsTheDefaults) {
  TiersConfig config;
  ASSERT_TRUE(ParseTiersConfig(json::object(), "tiers", &config).ok());
  EXPECT_EQ(config.admission.weights, (std::array<int32_t, 3>{10, 5, 1}));
  EXPECT_EQ(config.borrow.pools, (std::array<std::string, 3>{"P1", "P2", "P3"}));
  EXPECT_EQ(config.borrow.threshold_ms, (std::array<double, 3>{2000, 5000, 0}));
  EXPECT_DOUBLE_EQ(config.borrow.hysteresis, 0.8);
  EXPECT_EQ(config.window.window_ms, 30000);
}

TEST(TiersConfigTest, EveryKeyTakesEffect) {
  const json section = json::parse(R"({
    "weights": {"realtime": 8, "batch": 2}, "max_queued": {"normal": 7},
    "pools": {"realtime": "fast", "normal": "bulk", "batch": "bulk"},
    "threshold_ms": {"realtime": 1500, "batch": 60000},
    "window_ms": 5000, "max_samples": 100, "min_samples": 3, "hysteresis": 0.5,
    "hold_ms": 2000, "eval_interval_ms": 50, "initial_hold_ms": 300})");
  TiersConfig config;
  const Status status = ParseTiersConfig(section, "tiers", &config);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(config.admission.weights, (std::array<int32_t, 3>{8, 5, 2}));
  EXPECT_EQ(config.admission.max_queued, (std::array<int32_t, 3>{256, 7, 1024}));
  EXPECT_EQ(config.borrow.pools, (std::array<std::string, 3>{"fast", "bulk", "bulk"}));
  EXPECT_EQ(config.borrow.threshold_ms, (std::array<double, 3>{1500, 5000, 60000}));
  EXPECT_EQ(config.window.window_ms, 5000);
  EXPECT_EQ(config.window.max_samples, 100);
  EXPECT_EQ(config.borrow.min_samples, 3);
  EXPECT_DOUBLE_EQ(config.borrow.hysteresis, 0.5);
  EXPECT_EQ(config.borrow.hold_ms, 2000);
  EXPECT_EQ(config.borrow.eval_interval_ms, 50);
  EXPECT_EQ(config.admission.initial_hold_ms, 300);
}

TEST(TiersConfigTest, RefusesByPath) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"weight": {}})", "unknown config key 'tiers.weight'"},
      {R"({"weights": {"gold": 3}})", "unknown config key 'tiers.weights.gold'"},
      {R"({"weights": {"batch": 0}})", "tiers.weights.batch must be >= 1"},
      {R"({"weights": {"batch": "1"}})", "tiers.weights.batch must be an integer"},
      {R"({"weights": [10, 5, 1]})", "tiers.weights must be an object keyed by tier"},
      {R"({"max_queued": {"normal": -1}})", "tiers.max_queued.normal must be >= 0"},
      {R"({"pools": {"batch": ""}})", "tiers.pools.batch must be a non-empty string"},
      {R"({"threshold_ms": {"normal": -5}})", "tiers.threshold_ms.normal must be >= 0"},
      {R"({"hysteresis": 1.2})", "tiers.hysteresis must be in (0, 1]"},
      {R"({"hysteresis": "high"})", "tiers.hysteresis must be a number"},
      {R"({"window_ms": 0})", "tiers.window_ms must be >= 1"},
      {R"({"min_samples": 0})", "tiers.min_samples must be >= 1"},
      {R"({"hold_ms": -1})", "tiers.hold_ms must be >= 0"},
      {R"([])", "tiers must be an object"},
  };
  for (const auto& [text, expected] : cases) {
    TiersConfig config;
    const Status status = ParseTiersConfig(json::parse(text), "tiers", &config);
    ASSERT_FALSE(status.ok()) << text;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace surge::router
