#include "autoscale/cron.h"

#include <gtest/gtest.h>

#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

CronExpr MustParse(const char* text) {
  StatusOr<CronExpr> expr = CronExpr::Parse(text);
  EXPECT_TRUE(expr.ok()) << expr.status().ToString();
  return expr.ok() ? *expr : *CronExpr::Parse("* * * * *");
}

CivilTime At(int year, int month, int day, int hour, int minute) {
  return CivilFromSeconds(UnixSeconds(Utc(year, month, day, hour, minute)));
}

std::string ErrorOf(const char* text) {
  StatusOr<CronExpr> expr = CronExpr::Parse(text);
  return expr.ok() ? "(parsed)" : expr.status().message();
}

TEST(CronTest, ErrorsNameTheField) {
  EXPECT_EQ(ErrorOf("0 25 * * *"), "cron '0 25 * * *': hour: 25 is out of range 0-23");
  EXPECT_EQ(ErrorOf("60 * * * *"), "cron '60 * * * *': minute: 60 is out of range 0-59");
  EXPECT_EQ(ErrorOf("* * 0 * *"), "cron '* * 0 * *': day-of-month: 0 is out of range 1-31");
  EXPECT_EQ(ErrorOf("* * * FOO *"), "cron '* * * FOO *': month: 'FOO' is not a number or name");
  EXPECT_EQ(ErrorOf("* * * * MON-FUN"), "cron '* * * * MON-FUN': day-of-week: 'FUN' is not a number or name");
  EXPECT_EQ(ErrorOf("* * * *"), "cron '* * * *': expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(ErrorOf("*/0 * * * *"), "cron '*/0 * * * *': minute: step must be at least 1");
  EXPECT_EQ(ErrorOf("* 17-9 * * *"), "cron '* 17-9 * * *': hour: range '17-9' runs backwards");
  EXPECT_EQ(ErrorOf("5/15 * * * *"), "cron '5/15 * * * *': minute: step '5/15' needs a range or '*' before '/'");
  EXPECT_EQ(ErrorOf("1,,2 * * * *"), "cron '1,,2 * * * *': minute: empty list item");
  EXPECT_EQ(ErrorOf("* JAN * * *"), "cron '* JAN * * *': hour: 'JAN' is not a number");
  EXPECT_EQ(ErrorOf("@often"), "cron '@often': expected 5 fields (minute hour day-of-month month day-of-week), got 1");
}

TEST(CronTest, ListsRangesStepsAndNames) {
  CronExpr quarter = MustParse("*/15 * * * *");
  for (int m = 0; m < 60; ++m) EXPECT_EQ(quarter.Matches(At(2024, 5, 6, 10, m)), m % 15 == 0) << m;
  CronExpr stepped = MustParse("10-20/5,42 * * * *");
  EXPECT_TRUE(stepped.Matches(At(2024, 5, 6, 10, 15)));
  EXPECT_TRUE(stepped.Matches(At(2024, 5, 6, 10, 20)));
  EXPECT_TRUE(stepped.Matches(At(2024, 5, 6, 10, 42)));
  EXPECT_FALSE(stepped.Matches(At(2024, 5, 6, 10, 25)));
  CronExpr workday = MustParse("* 9-17 * jan-Mar,DEC mon-FRI");
  EXPECT_TRUE(workday.Matches(At(2024, 1, 8, 9, 0)));     // Monday
  EXPECT_TRUE(workday.Matches(At(2024, 1, 12, 17, 59)));  // Friday
  EXPECT_FALSE(workday.Matches(At(2024, 1, 12, 18, 0)));
  EXPECT_FALSE(workday.Matches(At(2024, 1, 13, 10, 0)));  // Saturday
  EXPECT_FALSE(workday.Matches(At(2024, 4, 8, 10, 0)));   // April
  // Day-of-week 7 is Sunday, as is 0.
  EXPECT_TRUE(MustParse("0 0 * * 7").Matches(At(2024, 3, 31, 0, 0)));
  EXPECT_TRUE(MustParse("0 0 * * 5-7").Matches(At(2024, 3, 31, 0, 0)));
  EXPECT_FALSE(MustParse("0 0 * * 7").Matches(At(2024, 4, 1, 0, 0)));
  EXPECT_TRUE(MustParse("@daily").Matches(At(2024, 4, 1, 0, 0)));
  EXPECT_FALSE(MustParse("@daily").Matches(At(2024, 4, 1, 0, 1)));
  EXPECT_TRUE(MustParse("@hourly").Matches(At(2024, 4, 1, 7, 0)));
}

TEST(CronTest, VixieDayOfMonthOrDayOfWeek) {
  // Both restricted: the 1st OR any Monday.
  CronExpr either = MustParse("0 0 1 * MON");
  EXPECT_TRUE(either.Matches(At(2024, 5, 1, 0, 0)));   // Wednesday the 1st
  EXPECT_TRUE(either.Matches(At(2024, 5, 6, 0, 0)));   // Monday the 6th
  EXPECT_FALSE(either.Matches(At(2024, 5, 7, 0, 0)));  // Tuesday the 7th
  // One side starts with '*': both must match (Vixie counts "*/2" as unrestricted).
  CronExpr both = MustParse("0 0 */2 * MON");
  EXPECT_TRUE(both.Matches(At(2024, 5, 13, 0, 0)));   // Monday the 13th (odd)
  EXPECT_FALSE(both.Matches(At(2024, 5, 6, 0, 0)));   // Monday the 6th (even)
  EXPECT_FALSE(both.Matches(At(2024, 5, 15, 0, 0)));  // Wednesday the 15th
  CronExpr dom_only = MustParse("0 0 13 * *");
  EXPECT_TRUE(dom_only.Matches(At(2024, 5, 13, 0, 0)));
  EXPECT_FALSE(dom_only.Matches(At(2024, 5, 6, 0, 0)));
}

}  // namespace
}  // namespace surge::autoscale
