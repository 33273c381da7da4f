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

// Issue 31: 309+ digits made std::stod throw out_of_range, uncaught (an abort instead of a
// config error); a long sum of large parts must not reach infinity either.
TEST(DurationTest, HugeNumbersAreErrorsNotExceptions) {
  const std::string huge = std::string(400, '9') + "s";
  StatusOr<milliseconds> parsed = ParseDuration(huge);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_LT(parsed.status().message().size(), 200u) << "the text is shown shortened";
  EXPECT_NE(parsed.status().message().find("longer than the limit of 277777h"), std::string::npos)
      << parsed.status().message();
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "9999999999h";
  EXPECT_FALSE(ParseDuration(many).ok());
  EXPECT_FALSE(ParseDuration("1" + std::string(20, '0') + "ms").ok());
  EXPECT_EQ(*ParseDuration("277777h"), milliseconds(int64_t{277777} * 3'600'000));
  EXPECT_EQ(*ParseDuration("0." + std::string(400, '0') + "1s"), milliseconds(0));  // below a double: 0
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
