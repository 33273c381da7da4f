#include "base/bounded_regex.h"

#include <gtest/gtest.h>

namespace surge {
namespace {

bool Matches(std::string_view pattern, std::string_view text) {
  StatusOr<std::unique_ptr<BoundedRegex>> regex = BoundedRegex::Compile(pattern);
  EXPECT_TRUE(regex.ok()) << regex.status().ToString();
  StatusOr<bool> matched = (*regex)->FullMatch(text);
  EXPECT_TRUE(matched.ok()) << matched.status().ToString();
  return *matched;
}

TEST(BoundedRegexTest, MatchesTheWholeValue) {
  EXPECT_TRUE(Matches("eng.*", "engine-1"));
  EXPECT_FALSE(Matches("eng", "engine-1")) << "anchored at the end too";
  EXPECT_FALSE(Matches("ine", "engine")) << "anchored at the start";
  EXPECT_TRUE(Matches("a|b", "b"));
  EXPECT_TRUE(Matches("", ""));
  EXPECT_TRUE(Matches("é+", "éé"));
  EXPECT_FALSE(Matches(".", "\xff")) << "invalid UTF-8 matches no character, and is no error";
}

// Issue 31: std::regex took these patterns from an alarm rules file and overflowed a signed
// counter (a{99999999999999999999}) or its compiler's stack (50k nested '(').
TEST(BoundedRegexTest, PatternsPastTheLimitsAreCompileErrors) {
  for (const std::string& bad : {std::string("a{99999999999999999999}"), std::string(50'000, '('),
                                 std::string(100, '(') + "a" + std::string(100, ')'), std::string("a("),
                                 std::string(5000, 'a')}) {
    StatusOr<std::unique_ptr<BoundedRegex>> regex = BoundedRegex::Compile(bad);
    ASSERT_FALSE(regex.ok()) << bad.substr(0, 40);
    EXPECT_EQ(regex.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(BoundedRegexTest, CatastrophicBacktrackingStopsAtTheMatchLimit) {
  StatusOr<std::unique_ptr<BoundedRegex>> regex = BoundedRegex::Compile("(a+)+[^a]");
  ASSERT_TRUE(regex.ok());
  StatusOr<bool> matched = (*regex)->FullMatch(std::string(40, 'a'));
  ASSERT_FALSE(matched.ok());
  EXPECT_EQ(matched.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace surge
