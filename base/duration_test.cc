#include "base/duration.h"

#include <gtest/gtest.h>

namespace surge {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesUnitsAndSums) {
  EXPECT_EQ(*ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  for (const char* bad : {"", "5", "-1s", "1x", ".5s", "1..2s"}) EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
}

TEST(DurationTest, FormatsInOneUnit) {
  EXPECT_EQ(FormatDuration(milliseconds(300'000)), "5m");
  EXPECT_EQ(FormatDuration(milliseconds(7'200'000)), "2h");
  EXPECT_EQ(FormatDuration(milliseconds(90'000)), "90s");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
}

}  // namespace
}  // namespace surge
