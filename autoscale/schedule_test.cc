#include "autoscale/schedule.h"

#include <gtest/gtest.h>

#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

ScheduleRule Rule(const char* name, const char* cron, std::optional<int> min, std::optional<int> max = {},
                  std::optional<int> fixed = {}) {
  StatusOr<CronExpr> expr = CronExpr::Parse(cron);
  EXPECT_TRUE(expr.ok()) << expr.status().ToString();
  return ScheduleRule{name, *expr, min, max, fixed};
}

// The seed's day: workday 09:00-17:59 min 20, nights (18:00-08:59) min 5, weekends min 8.
Schedule SeedDay(TimeZone zone) {
  return Schedule(std::move(zone), {Rule("workday", "* 9-17 * * MON-FRI", 20), Rule("night", "* 0-8,18-23 * * *", 5),
                                    Rule("weekend", "* * * * SAT,SUN", 8)});
}

int MinAt(const Schedule& s, Instant t) { return s.Bounds(t, 2, 40).min_replicas; }

TEST(ScheduleTest, SeedDayInUtc) {
  Schedule s = SeedDay(TimeZone::Utc());
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 8, 59)), 5);   // Monday night
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 9, 0)), 20);   // workday starts
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 17, 59)), 20);
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 18, 0)), 5);
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 11, 2, 0)), 8);   // Saturday 02:00: weekend started later than the night
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 11, 12, 0)), 8);
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 11, 20, 0)), 5);  // Saturday evening: the night run started at 18:00
  std::optional<ActiveRule> active = s.Active(Utc(2024, 5, 11, 20, 0, 30));
  ASSERT_TRUE(active);
  EXPECT_EQ(s.rules()[active->index].name, "night");
  EXPECT_EQ(active->started, Utc(2024, 5, 11, 18, 0));
  EXPECT_EQ(s.Bounds(Utc(2024, 5, 6, 10, 0), 2, 40).source, "schedule 'workday'");
  EXPECT_FALSE(Schedule(TimeZone::Utc(), {Rule("lunch", "* 12 * * *", 9)}).Active(Utc(2024, 5, 6, 13, 0)));
}

TEST(ScheduleTest, WorkdayFollowsLocalTimeAcrossDstInNewYork) {
  Schedule s = SeedDay(MustLoad("America/New_York"));
  // Friday 2024-03-08 is EST (UTC-5): 09:00 local is 14:00 UTC.
  EXPECT_EQ(MinAt(s, Utc(2024, 3, 8, 13, 59)), 5);
  EXPECT_EQ(MinAt(s, Utc(2024, 3, 8, 14, 0)), 20);
  // Monday 2024-03-11 is EDT (UTC-4): 09:00 local is 13:00 UTC.
  EXPECT_EQ(MinAt(s, Utc(2024, 3, 11, 12, 59)), 5);
  EXPECT_EQ(MinAt(s, Utc(2024, 3, 11, 13, 0)), 20);
  EXPECT_EQ(MinAt(s, Utc(2024, 3, 11, 21, 59)), 20);
  EXPECT_EQ(MinAt(s, Utc(2024, 3, 11, 22, 0)), 5);
}

TEST(ScheduleTest, BerlinGapSkipsTheMissingHourAndOverlapRepeatsIt) {
  Schedule s(MustLoad("Europe/Berlin"), {Rule("two-am", "* 2 * * *", {}, {}, 3)});
  // 2024-03-30 (CET): 02:30 local is 01:30 UTC.
  EXPECT_TRUE(s.Active(Utc(2024, 3, 30, 1, 30)));
  // 2024-03-31: local 02:00-02:59 does not exist; no real minute of that day matches.
  for (int minute = 0; minute < 24 * 60; ++minute) {
    ASSERT_FALSE(s.Active(Utc(2024, 3, 31) + std::chrono::minutes(minute))) << minute;
  }
  // 2024-10-27: local 02:xx happens twice (00:00-01:59 UTC): one run of 120 real minutes.
  EXPECT_FALSE(s.Active(Utc(2024, 10, 26, 23, 59)));
  std::optional<ActiveRule> second_pass = s.Active(Utc(2024, 10, 27, 1, 45));
  ASSERT_TRUE(second_pass);
  EXPECT_EQ(second_pass->started, Utc(2024, 10, 27, 0, 0));
  EXPECT_EQ(s.Bounds(Utc(2024, 10, 27, 0, 30), 1, 10).min_replicas, 3);
  EXPECT_EQ(s.Bounds(Utc(2024, 10, 27, 1, 59), 1, 10).max_replicas, 3);
  EXPECT_FALSE(s.Active(Utc(2024, 10, 27, 2, 0)));
}

TEST(ScheduleTest, LatestStartedRuleWinsTiesGoToTheFirst) {
  Schedule s(TimeZone::Utc(), {Rule("a", "* 8-20 * * *", 3), Rule("b", "* 8-20 * * *", 4), Rule("c", "* 12 * * *", 6)});
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 10, 0)), 3);  // a and b started together: a is listed first
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 12, 30)), 6);
  EXPECT_EQ(MinAt(s, Utc(2024, 5, 6, 13, 0)), 3);
}

TEST(ScheduleTest, RuleValuesOverrideThePoolBounds) {
  Schedule s(TimeZone::Utc(), {Rule("big", "* 0-11 * * *", 50), Rule("cap", "* 12-23 * * *", {}, 2)});
  ReplicaBounds big = s.Bounds(Utc(2024, 5, 6, 1, 0), 4, 10);
  EXPECT_EQ(big.min_replicas, 50);
  EXPECT_EQ(big.max_replicas, 50);
  ReplicaBounds cap = s.Bounds(Utc(2024, 5, 6, 13, 0), 4, 10);
  EXPECT_EQ(cap.min_replicas, 2);
  EXPECT_EQ(cap.max_replicas, 2);
  ReplicaBounds none = Schedule().Bounds(Utc(2024, 5, 6, 13, 0), 4, 10);
  EXPECT_EQ(none.min_replicas, 4);
  EXPECT_EQ(none.source, "pool");
}

}  // namespace
}  // namespace surge::autoscale
