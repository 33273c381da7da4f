#include <gtest/gtest.h>

#include <string>

#include "autoscale/autoscaler.h"
#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

std::string ErrorOf(const std::string& json) {
  StatusOr<AutoscaleConfig> config = ParseAutoscaleConfig(json);
  return config.ok() ? "(parsed)" : config.status().message();
}

// A minimal valid file with `pool_body` inside the one pool.
std::string Pool(const std::string& pool_body) {
  return R"({"pools": {"p": {"targets": {"queue_depth_per_replica": 4})" +
         (pool_body.empty() ? "" : ", " + pool_body) + "}}}";
}

TEST(DurationTest, ParsesUnitsAndRefusesBareNumbers) {
  EXPECT_EQ(*ParseDuration("30s"), seconds(30));
  EXPECT_EQ(*ParseDuration("5m"), minutes(5));
  EXPECT_EQ(*ParseDuration("1h30m"), minutes(90));
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("0s"), milliseconds(0));
  for (const char* bad : {"", "30", "5x", "s", "1.2.3s", "-5s", "5 s", ".5s"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

TEST(AutoscaleConfigTest, ShippedExamplesLoad) {
  StatusOr<AutoscaleConfig> basic = LoadAutoscaleConfig("autoscale/examples/policy.json");
  ASSERT_TRUE(basic.ok()) << basic.status().ToString();
  ASSERT_EQ(basic->pools.size(), 1u);
  const ScalingPolicyConfig& p = basic->pools[0].policy;
  EXPECT_EQ(p.max_replicas, 8);
  EXPECT_DOUBLE_EQ(*p.targets.ttft_p95_s, 2.0);
  EXPECT_EQ(p.scale_down.stabilization, minutes(5));
  EXPECT_EQ(p.scale_down.period, minutes(1));

  StatusOr<AutoscaleConfig> seed = LoadAutoscaleConfig("autoscale/examples/seed_day.json");
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  const PoolConfig& chat = seed->pools[0];
  EXPECT_EQ(chat.name, "chat");
  EXPECT_EQ(chat.policy.scale_up.stabilization, seconds(30));
  EXPECT_EQ(chat.policy.scale_up.max_factor, 2.0);  // default kept
  ASSERT_EQ(chat.classes.size(), 2u);
  EXPECT_EQ(chat.classes[0].initial_backoff, minutes(1));
  EXPECT_EQ(chat.classes[1].initial_backoff, seconds(30));  // default
  EXPECT_TRUE(chat.classes[0].preemptible);
  EXPECT_FALSE(chat.classes[1].preemptible);  // default
  EXPECT_EQ(chat.schedule.zone().name(), "Europe/Berlin");
  PoolAutoscaler autoscaler(chat);
  // Monday 2024-05-06 10:00 CEST is 08:00 UTC: the workday rule.
  EXPECT_EQ(autoscaler.BoundsAt(Utc(2024, 5, 6, 8, 0)).min_replicas, 20);
  EXPECT_EQ(autoscaler.BoundsAt(Utc(2024, 5, 6, 6, 59)).min_replicas, 5);  // 08:59 CEST
  EXPECT_EQ(autoscaler.BoundsAt(Utc(2024, 5, 11, 10, 0)).min_replicas, 8);
}

TEST(AutoscaleConfigTest, UnknownKeysAreRefusedByName) {
  EXPECT_EQ(ErrorOf(R"({"pool": {}})"), "autoscale policy: unknown key 'pool'");
  EXPECT_EQ(ErrorOf(Pool(R"("min_replica": 2)")), "autoscale policy: pools.p: unknown key 'min_replica'");
  EXPECT_EQ(ErrorOf(Pool(R"("scale_up": {"stabilisation": "30s"})")),
            "autoscale policy: pools.p.scale_up: unknown key 'stabilisation'");
  EXPECT_EQ(ErrorOf(Pool(R"("scale_down": {"max_factor": 2})")),
            "autoscale policy: pools.p.scale_down: unknown key 'max_factor'");
  EXPECT_EQ(ErrorOf(Pool(R"("classes": [{"name": "spot", "max_replicas": 2, "price": 1}])")),
            "autoscale policy: pools.p.classes[0]: unknown key 'price'");
  EXPECT_EQ(ErrorOf(Pool(R"("classes": [{"name": "spot", "max_replicas": 2, "preemptible": "yes"}])")),
            "autoscale policy: pools.p.classes[0].preemptible: expected true or false");
  EXPECT_EQ(ErrorOf(Pool(R"("schedule": {"rules": [{"name": "a", "cron": "* * * * *", "min_replicas": 1},
                                                    {"name": "b", "crn": "* * * * *"}]})")),
            "autoscale policy: pools.p.schedule.rules[1]: unknown key 'crn'");
  EXPECT_EQ(ErrorOf(R"({"pools": {"p": {"targets": {"queue_depth": 4}}}})"),
            "autoscale policy: pools.p.targets: unknown key 'queue_depth'");
}

TEST(AutoscaleConfigTest, BadValuesNameTheirField) {
  EXPECT_EQ(ErrorOf("{"), "autoscale policy: not valid JSON");
  EXPECT_EQ(ErrorOf(R"({"pools": {}})"), "autoscale policy: pools: expected an object with at least one pool");
  EXPECT_EQ(ErrorOf(Pool(R"("scale_up": {"period": 15})")),
            "autoscale policy: pools.p.scale_up.period: expected a duration string like \"30s\" or \"5m\"");
  EXPECT_EQ(ErrorOf(Pool(R"("scale_down": {"stabilization": "5 minutes"})")),
            "autoscale policy: pools.p.scale_down.stabilization: '5 minutes' is not a duration like \"500ms\", "
            "\"30s\", \"5m\", \"1h30m\"");
  // Issue 31: 309+ digits made std::stod throw, uncaught: an abort instead of this error.
  EXPECT_EQ(ErrorOf(Pool(R"("scale_up": {"period": ")" + std::string(400, '9') + R"(s"})")).rfind(
                "autoscale policy: pools.p.scale_up.period: '9999", 0),
            0u);
  EXPECT_EQ(ErrorOf(Pool(R"("max_replicas": -3)")), "autoscale policy: pools.p.max_replicas: expected a non-negative integer");
  EXPECT_EQ(ErrorOf(Pool(R"("max_replicas": 0)")),
            "autoscale policy: pools.p: max_replicas 0 must be >= 1 and >= min_replicas 1");
  EXPECT_EQ(ErrorOf(R"({"pools": {"p": {}}})"),
            "autoscale policy: pools.p: targets: set at least one of queue_depth_per_replica, kv_usage, "
            "busy_fraction, ttft_p95");
  EXPECT_EQ(ErrorOf(Pool(R"("schedule": {"time_zone": "Mars/Base", "rules": []})")).rfind(
                "autoscale policy: pools.p.schedule.time_zone: time zone 'Mars/Base': no file", 0),
            0u);
  EXPECT_EQ(ErrorOf(Pool(R"("schedule": {"rules": [{"name": "a", "cron": "* 24 * * *", "min_replicas": 1}]})")),
            "autoscale policy: pools.p.schedule.rules[0].cron: cron '* 24 * * *': hour: 24 is out of range 0-23");
  EXPECT_EQ(ErrorOf(Pool(R"("schedule": {"rules": [{"name": "a", "cron": "* * * * *"}]})")),
            "autoscale policy: pools.p.schedule.rules[0]: set min_replicas, max_replicas or replicas");
  EXPECT_EQ(ErrorOf(Pool(R"("schedule": {"rules": [{"name": "a", "cron": "* * * * *", "replicas": 3, "min_replicas": 1}]})")),
            "autoscale policy: pools.p.schedule.rules[0].replicas: a fixed count excludes min_replicas and max_replicas");
  EXPECT_EQ(ErrorOf(Pool(R"("classes": [{"name": "spot"}])")),
            "autoscale policy: pools.p.classes[0].max_replicas: required");
  EXPECT_EQ(ErrorOf(Pool(R"("classes": [{"name": "a", "max_replicas": 1}, {"name": "a", "max_replicas": 1}])")),
            "autoscale policy: pools.p: capacity class 'a': duplicate name");
  StatusOr<AutoscaleConfig> missing = LoadAutoscaleConfig("/nonexistent/policy.json");
  EXPECT_EQ(missing.status().message(), "/nonexistent/policy.json: cannot open the autoscale policy file");
}

}  // namespace
}  // namespace surge::autoscale
