#include "engine/stop_string_matcher.h"

#include <gtest/gtest.h>

#include <random>

namespace surge {
namespace {

TEST(StopStringMatcherTest, WithoutStopStringsTextPassesThrough) {
  StopStringMatcher matcher({});
  EXPECT_EQ(matcher.Add("Hello").text, "Hello");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, HoldsBackWhatMayBeginAStopString) {
  StopStringMatcher matcher({"world"});
  EXPECT_EQ(matcher.Add("Hello w").text, "Hello ");
  EXPECT_EQ(matcher.Add("or").text, "");
  StopStringMatcher::Result result = matcher.Add("ld and more");
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.text, "");
  EXPECT_TRUE(matcher.stopped());
  EXPECT_EQ(matcher.Add("x").text, "");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, ReleasesHeldTextWhenTheMatchFails) {
  StopStringMatcher matcher({"abc"});
  EXPECT_EQ(matcher.Add("xab").text, "x");
  EXPECT_EQ(matcher.Add("a").text, "ab");  // "aba": only the last "a" may still begin it
  EXPECT_EQ(matcher.Add("b").text, "");
  EXPECT_EQ(matcher.Flush(), "ab");  // ended for another reason: emitted after all
}

TEST(StopStringMatcherTest, StopsAtTheFirstStopStringToComplete) {
  StopStringMatcher matcher({"bcdef", "cd", ""});
  StopStringMatcher::Result result = matcher.Add("abcdefg");
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.text, "ab");  // "cd" completes before "bcdef" does
  StopStringMatcher longest({"d", "bcd"});
  EXPECT_EQ(longest.Add("abcde").text, "a");  // both complete at "d": the longer wins
}

TEST(StopStringMatcherTest, MatchesAcrossManyPieces) {
  StopStringMatcher matcher({"\n\nUser:"});
  std::string emitted;
  for (const char* piece : {"Sure", ".", "\n", "\n", "Us", "er", ":", " hi"}) {
    StopStringMatcher::Result result = matcher.Add(piece);
    emitted += result.text;
    if (result.stopped) break;
  }
  EXPECT_TRUE(matcher.stopped());
  EXPECT_EQ(emitted, "Sure.");
}

TEST(StopStringMatcherTest, KeepsMultibyteCharactersWhole) {
  StopStringMatcher matcher({"é!"});
  EXPECT_EQ(matcher.Add("café").text, "caf");
  EXPECT_EQ(matcher.Add("s").text, "és");
}

// Random texts over a small alphabet, cut into random pieces: what is emitted is always
// a prefix of the right answer (the text before the first stop string to complete, fed
// byte by byte; or all of it).
TEST(StopStringMatcherTest, RandomPiecesAgreeWithSearchingTheWholeText) {
  std::mt19937 rng(3);
  auto random_string = [&](int max_length) {
    std::string s(std::uniform_int_distribution<int>(1, max_length)(rng), 'a');
    for (char& c : s) c = static_cast<char>('a' + std::uniform_int_distribution<int>(0, 2)(rng));
    return s;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::string> stops = {random_string(4), random_string(3)};
    const std::string text = random_string(30);
    size_t end = std::string::npos;
    for (size_t byte_end = 1; byte_end <= text.size() && end == std::string::npos; ++byte_end) {
      for (const std::string& stop : stops) {
        if (byte_end >= stop.size() &&
            text.compare(byte_end - stop.size(), stop.size(), stop) == 0) {
          end = std::min(end, byte_end - stop.size());
        }
      }
    }
    const std::string expected = text.substr(0, end);

    StopStringMatcher matcher(stops);
    std::string emitted;
    for (size_t pos = 0; pos < text.size() && !matcher.stopped();) {
      const size_t length = std::uniform_int_distribution<size_t>(1, 4)(rng);
      emitted += matcher.Add(text.substr(pos, length)).text;
      pos += length;
      ASSERT_EQ(expected.substr(0, emitted.size()), emitted)
          << text << " stops " << stops[0] << "," << stops[1];
    }
    if (!matcher.stopped()) emitted += matcher.Flush();
    EXPECT_EQ(matcher.stopped(), end != std::string::npos);
    ASSERT_EQ(emitted, expected) << text << " stops " << stops[0] << "," << stops[1];
  }
}

}  // namespace
}  // namespace surge
