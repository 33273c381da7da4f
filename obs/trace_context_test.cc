#include "obs/trace_context.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace surge::obs {
namespace {

constexpr char kValid[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceparentTest, ParsesVersion00AndFormatsItBack) {
  std::optional<TraceContext> context = ParseTraceparent(kValid);
  ASSERT_TRUE(context);
  EXPECT_EQ(ToHex(context->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(ToHex(context->span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(context->sampled());
  EXPECT_TRUE(context->remote);
  EXPECT_EQ(FormatTraceparent(*context), kValid);
}

TEST(TraceparentTest, NotSampledAndOtherFlagsOfVersion00AreKept) {
  std::optional<TraceContext> context = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02");
  ASSERT_TRUE(context);
  EXPECT_FALSE(context->sampled());
  EXPECT_EQ(context->trace_flags, 0x02);
}

TEST(TraceparentTest, SurroundingWhitespaceIsIgnored) {
  EXPECT_TRUE(ParseTraceparent(std::string(" \t") + kValid + " "));
}

TEST(TraceparentTest, RefusesMalformedValues) {
  const char* bad[] = {
      "",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",     // short flags
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",   // 00 with a suffix
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero span id
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
      "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",   // dash misplaced
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
  };
  for (const char* value : bad) EXPECT_FALSE(ParseTraceparent(value)) << value;
}

TEST(TraceparentTest, FutureVersionsAreReadByTheVersion00Layout) {
  std::optional<TraceContext> longer =
      ParseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-the-future-holds");
  ASSERT_TRUE(longer);
  EXPECT_EQ(ToHex(longer->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(longer->trace_flags, kSampledFlag);  // only the sampled bit of an unknown version
  EXPECT_EQ(FormatTraceparent(*longer), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_TRUE(ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
  // Longer, but the flags are not followed by '-'.
  EXPECT_FALSE(ParseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0900"));
  // A future version still needs valid ids.
  EXPECT_FALSE(ParseTraceparent("cc-00000000000000000000000000000000-00f067aa0ba902b7-01-x"));
}

TEST(TracestateTest, KeepsValidMembersAndDropsEmptyOnes) {
  EXPECT_EQ(SanitizeTracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE"), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_EQ(SanitizeTracestate(" a=1 ,, \t,b=2"), "a=1,b=2");
  EXPECT_EQ(SanitizeTracestate("tenant1@vendor=x y"), "tenant1@vendor=x y");  // inner space is allowed
  EXPECT_EQ(SanitizeTracestate(""), "");
}

TEST(TracestateTest, DiscardsTheHeaderWhenAMemberIsInvalid) {
  const char* bad[] = {
      "a=1,B=2",            // upper-case key
      "a=1,b",              // no '='
      "a=1,a=2",            // duplicate key
      "1a=1",               // a simple key starts with a letter
      "a=x=y",              // '=' in the value
      "a@TOOLONGSYSTEMID=1",
      "a@abcdefghijklmno=1",  // system id over 14 characters
      "a=",                 // empty value
  };
  for (const char* value : bad) EXPECT_EQ(SanitizeTracestate(value), "") << value;
}

TEST(TracestateTest, AtMost32Members) {
  std::string list;
  for (int i = 0; i < 32; ++i) list += (i ? ",k" : "k") + std::to_string(i) + "=v";
  EXPECT_EQ(SanitizeTracestate(list), list);
  EXPECT_EQ(SanitizeTracestate(list + ",k32=v"), "");
}

TEST(TracestateTest, LongListsLoseLongMembersFirstThenTheTail) {
  const std::string long_member = "big=" + std::string(200, 'x');
  std::string list = "a=1," + long_member;
  for (int i = 0; i < 30; ++i) list += ",key" + std::to_string(i) + "=" + std::string(10, 'v');
  const std::string kept = SanitizeTracestate(list);
  EXPECT_LE(kept.size(), kMaxTracestateChars);
  EXPECT_EQ(kept.find("big="), std::string::npos);
  EXPECT_EQ(kept.rfind("a=1,key0=", 0), 0u);
  // Without the long one the 30 short members and "a=1" take 503 characters: all fit.
  EXPECT_NE(kept.find("key29="), std::string::npos);
  std::string many_short = "a=" + std::string(250, 'x');
  for (int i = 0; i < 3; ++i) many_short += ",b" + std::to_string(i) + "=" + std::string(100, 'y');
  // The 252-character first member is removed; the three of 103 fit.
  EXPECT_EQ(SanitizeTracestate(many_short).rfind("b0=", 0), 0u);
  std::string tail;
  for (int i = 0; i < 10; ++i) tail += (i ? ",m" : "m") + std::to_string(i) + "=" + std::string(100, 'z');
  const std::string cut = SanitizeTracestate(tail);  // 10 members of 103: only 4 fit in 512
  EXPECT_EQ(cut.size(), 4 * 103 + 3);
  EXPECT_EQ(cut.find("m4="), std::string::npos);
}

TEST(RandomIdsTest, AreNonZeroAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const TraceId trace = RandomTraceId();
    const SpanId span = RandomSpanId();
    EXPECT_FALSE(IsZero(trace));
    EXPECT_FALSE(IsZero(span));
    seen.insert(ToHex(trace));
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace surge::obs
