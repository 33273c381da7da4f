// JsonNestingDepth: the bracket scan that bounds untrusted JSON before it is parsed.
#include "base/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace surge {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonNestingDepthTest, CountsArraysAndObjectsNotStrings) {
  EXPECT_EQ(JsonNestingDepth("1", 64), 0);
  EXPECT_EQ(JsonNestingDepth("{}", 64), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}], "c": {}})", 64), 4);
  EXPECT_EQ(JsonNestingDepth(R"(["[[[[", "{{{", "\"[[[", "\\"])", 64), 1);
  EXPECT_EQ(JsonNestingDepth(R"([[], [], [[]]])", 64), 3);
}

TEST(JsonNestingDepthTest, StopsOncePastTheLimit) {
  EXPECT_EQ(JsonNestingDepth(Nested(100000), 64), 65);
  EXPECT_EQ(JsonNestingDepth(Nested(64), 64), 64);
}

}  // namespace
}  // namespace surge
