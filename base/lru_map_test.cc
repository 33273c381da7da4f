#include "base/lru_map.h"

#include <gtest/gtest.h>

#include <string>

namespace surge {
namespace {

TEST(LruMapTest, DropsTheLeastRecentlyUsedPastItsBound) {
  LruMap<std::string, int> map(2);
  map.Put("a", 1);
  map.Put("b", 2);
  ASSERT_NE(map.Find("a"), nullptr);  // a is now more recent than b
  map.Put("c", 3);
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(map.Find("b"), nullptr);
  EXPECT_EQ(*map.Find("a"), 1);
  EXPECT_EQ(*map.Find("c"), 3);
}

TEST(LruMapTest, PutReplacesAndEraseRemoves) {
  LruMap<int, std::string> map(3);
  map.Put(1, "x");
  map.Put(1, "y");
  EXPECT_EQ(map.size(), 1u);
  EXPECT_EQ(*map.Find(1), "y");
  EXPECT_TRUE(map.Erase(1));
  EXPECT_FALSE(map.Erase(1));
  EXPECT_EQ(map.Find(1), nullptr);
  EXPECT_EQ(map.size(), 0u);
}

TEST(LruMapTest, ABoundOfZeroStillKeepsOne) {
  LruMap<int, int> map(0);
  map.Put(1, 1);
  map.Put(2, 2);
  EXPECT_EQ(map.size(), 1u);
  EXPECT_NE(map.Find(2), nullptr);
}

}  // namespace
}  // namespace surge
