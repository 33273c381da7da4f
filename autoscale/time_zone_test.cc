#include "autoscale/time_zone.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "autoscale/cron.h"
#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

std::string LocalText(const TimeZone& zone, Instant t) {
  CivilTime c = zone.ToLocal(t);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02d %02d:%02d w%d", c.year, c.month, c.day, c.hour, c.minute,
                c.weekday);
  return buffer;
}

TEST(CivilTimeTest, RoundTripsAndWeekdays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(WeekdayFromDays(DaysFromCivil(2024, 3, 31)), 0);  // a Sunday
  EXPECT_EQ(WeekdayFromDays(DaysFromCivil(1969, 12, 31)), 3);
  for (int64_t days = -800000; days < 800000; days += 997) {
    CivilTime c = CivilFromSeconds(days * 86400 + 3723);
    EXPECT_EQ(DaysFromCivil(c.year, c.month, c.day), days);
    EXPECT_EQ(c.hour * 3600 + c.minute * 60 + c.second, 3723);
  }
}

TEST(TimeZoneTest, UtcHasNoOffset) {
  TimeZone utc = TimeZone::Utc();
  EXPECT_EQ(utc.OffsetAt(UnixSeconds(Utc(2024, 7, 1))), 0);
  EXPECT_EQ(LocalText(utc, Utc(2024, 2, 29, 23, 59)), "2024-02-29 23:59 w4");
  TimeZone file_utc = MustLoad("Etc/UTC");
  EXPECT_EQ(file_utc.OffsetAt(UnixSeconds(Utc(2031, 1, 1))), 0);
}

TEST(TimeZoneTest, BerlinSpringForwardAndFallBack) {
  TimeZone berlin = MustLoad("Europe/Berlin");
  // 2024-03-31: 02:00 CET jumps to 03:00 CEST at 01:00 UTC.
  EXPECT_EQ(LocalText(berlin, Utc(2024, 3, 31, 0, 59)), "2024-03-31 01:59 w0");
  EXPECT_EQ(LocalText(berlin, Utc(2024, 3, 31, 1, 0)), "2024-03-31 03:00 w0");
  // 2024-10-27: 03:00 CEST falls back to 02:00 CET at 01:00 UTC; 02:xx happens twice.
  EXPECT_EQ(LocalText(berlin, Utc(2024, 10, 27, 0, 30)), "2024-10-27 02:30 w0");
  EXPECT_EQ(LocalText(berlin, Utc(2024, 10, 27, 1, 30)), "2024-10-27 02:30 w0");
  EXPECT_EQ(berlin.OffsetAt(UnixSeconds(Utc(2024, 10, 27, 0, 59))), 7200);
  EXPECT_EQ(berlin.OffsetAt(UnixSeconds(Utc(2024, 10, 27, 1, 0))), 3600);
}

TEST(TimeZoneTest, NewYorkSpringForwardAndFallBack) {
  TimeZone ny = MustLoad("America/New_York");
  EXPECT_EQ(LocalText(ny, Utc(2024, 3, 10, 6, 59)), "2024-03-10 01:59 w0");
  EXPECT_EQ(LocalText(ny, Utc(2024, 3, 10, 7, 0)), "2024-03-10 03:00 w0");
  EXPECT_EQ(LocalText(ny, Utc(2024, 11, 3, 5, 30)), "2024-11-03 01:30 w0");  // EDT
  EXPECT_EQ(LocalText(ny, Utc(2024, 11, 3, 6, 30)), "2024-11-03 01:30 w0");  // EST
  EXPECT_EQ(ny.OffsetAt(UnixSeconds(Utc(2024, 7, 4, 12))), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(UnixSeconds(Utc(1960, 1, 15))), -5 * 3600);
}

TEST(TimeZoneTest, FooterRuleCoversYearsPastTheTable) {
  TimeZone berlin = MustLoad("Europe/Berlin");
  EXPECT_EQ(berlin.OffsetAt(UnixSeconds(Utc(2150, 1, 10))), 3600);
  EXPECT_EQ(berlin.OffsetAt(UnixSeconds(Utc(2150, 7, 10))), 7200);
  // Last Sunday of March 2150 is the 29th: the switch is at 01:00 UTC.
  EXPECT_EQ(berlin.OffsetAt(UnixSeconds(Utc(2150, 3, 29, 0, 59))), 3600);
  EXPECT_EQ(berlin.OffsetAt(UnixSeconds(Utc(2150, 3, 29, 1, 0))), 7200);
}

class TimeZoneFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("surge_tz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "Bad");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  std::filesystem::path dir_;
};

TEST_F(TimeZoneFilesTest, RefusesBadNamesAndFiles) {
  EXPECT_EQ(TimeZone::Load("../etc/passwd").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TimeZone::Load("/etc/passwd").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TimeZone::Load("Mars/Olympus_Mons").status().code(), StatusCode::kNotFound);
  Write("Bad/Text", "not a zone file");
  StatusOr<TimeZone> text = TimeZone::Load("Bad/Text", dir_.string());
  EXPECT_EQ(text.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(text.status().message().find("Bad/Text"), std::string::npos);
  Write("Bad/Huge", "TZif2" + std::string(kMaxTzifBytes, '\0'));
  StatusOr<TimeZone> huge = TimeZone::Load("Bad/Huge", dir_.string());
  EXPECT_EQ(huge.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(huge.status().message().find("larger than"), std::string::npos);
  // A real file cut short.
  std::ifstream in("/usr/share/zoneinfo/Europe/Berlin", std::ios::binary);
  std::string real((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Write("Bad/Cut", real.substr(0, real.size() / 2));
  EXPECT_EQ(TimeZone::Load("Bad/Cut", dir_.string()).status().code(), StatusCode::kDataLoss);
}

// A version-2 file with 1967's two transitions (to EDT, back to EST): everything after them
// comes from the footer (a "slim" TZif, as zic -b slim writes them; cctz wants two).
TEST_F(TimeZoneFilesTest, SlimFileUsesItsFooter) {
  std::string header(44, '\0');
  header.replace(0, 5, "TZif2");
  header[20 + 19] = 1;  // typecnt = 1
  header[20 + 23] = 4;  // charcnt = 4
  std::string v1 = header + std::string(6, '\0') + std::string(4, '\0');
  header[20 + 15] = 2;  // timecnt = 2
  header[20 + 19] = 2;  // typecnt = 2
  header[20 + 23] = 8;  // charcnt = 8
  std::string transitions;
  for (int64_t when : {int64_t{-84387600}, int64_t{-68666400}}) {
    for (int shift = 56; shift >= 0; shift -= 8) transitions += static_cast<char>(when >> shift);
  }
  transitions += std::string("\1\0", 2);  // their local time types: EDT, then EST
  std::string types = {'\xff', '\xff', '\xb9', '\xb0', '\0', '\0',   // -18000 s, EST
                       '\xff', '\xff', '\xc7', '\xc0', '\1', '\4'};  // -14400 s, DST, EDT
  std::string v2 = header + transitions + types + std::string("EST\0EDT\0", 8);
  Write("Bad/Slim", v1 + v2 + "\nEST5EDT,M3.2.0,M11.1.0\n");
  StatusOr<TimeZone> slim = TimeZone::Load("Bad/Slim", dir_.string());
  ASSERT_TRUE(slim.ok()) << slim.status().ToString();
  EXPECT_EQ(slim->OffsetAt(UnixSeconds(Utc(2024, 3, 10, 6, 59))), -5 * 3600);
  EXPECT_EQ(slim->OffsetAt(UnixSeconds(Utc(2024, 3, 10, 7, 0))), -4 * 3600);
}

// Truncations and single-byte corruptions of a real file: an error or a zone, never a crash or
// a read past the end (run under SURGE_SANITIZE to see the latter). One file name per case:
// cctz keeps every zone it loaded, by name.
TEST_F(TimeZoneFilesTest, CorruptFilesNeverCrash) {
  std::ifstream in("/usr/share/zoneinfo/America/New_York", std::ios::binary);
  std::string real((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(real.size(), 1000u);
  for (size_t size = 0; size < real.size(); size += 29) {
    Write("Bad/Cut" + std::to_string(size), real.substr(0, size));
    StatusOr<TimeZone> zone = TimeZone::Load("Bad/Cut" + std::to_string(size), dir_.string());
    if (zone.ok()) zone->OffsetAt(0);
  }
  uint32_t seed = 12345;
  for (int i = 0; i < 300; ++i) {
    std::string bad = real;
    seed = seed * 1664525 + 1013904223;
    bad[seed % bad.size()] = static_cast<char>(seed >> 24);
    Write("Bad/Flipped" + std::to_string(i), bad);
    StatusOr<TimeZone> zone = TimeZone::Load("Bad/Flipped" + std::to_string(i), dir_.string());
    if (zone.ok()) zone->ToLocal(int64_t{seed} * 1000);
  }
}

TEST(CronFuzzTest, RandomTextNeverCrashes) {
  const std::string alphabet = "0123456789*/-,MJ.<>+:ADEFNOSTUWvx ";
  uint32_t seed = 7;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    seed = seed * 1664525 + 1013904223;
    for (uint32_t n = seed % 24; n > 0; --n) {
      seed = seed * 1664525 + 1013904223;
      text += alphabet[(seed >> 16) % alphabet.size()];
    }
    (void)CronExpr::Parse(text);
  }
}

}  // namespace
}  // namespace surge::autoscale
