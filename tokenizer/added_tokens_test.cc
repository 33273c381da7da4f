// Added tokens: matched before the model, longest first, with lstrip/rstrip/single_word.
#include "tokenizer/added_tokens.h"

#include <gtest/gtest.h>

#include "tokenizer/test_tokenizers.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

using Json = nlohmann::json;

std::vector<std::string> SplitTexts(const AddedTokenMatcher& matcher, std::string_view text) {
  std::vector<Section> sections;
  matcher.Split(text, &sections);
  std::vector<std::string> out;
  for (const Section& section : sections) {
    out.push_back(section.token ? "[" + section.token->content + "]" : std::string(section.text));
  }
  return out;
}

TEST(AddedTokenMatcherTest, LongestMatchFirst) {
  AddedToken start{"<|im_start|>", 1}, im{"<|im", 2}, end{"<|im_end|>", 3};
  AddedTokenMatcher matcher({{start.content, &start}, {im.content, &im}, {end.content, &end}});
  EXPECT_EQ(SplitTexts(matcher, "a<|im_start|>b<|im_end|><|imx"),
            std::vector<std::string>({"a", "[<|im_start|>]", "b", "[<|im_end|>]", "[<|im]", "x"}));
  EXPECT_EQ(SplitTexts(matcher, "no tokens here"), std::vector<std::string>({"no tokens here"}));
  EXPECT_EQ(SplitTexts(matcher, ""), std::vector<std::string>());
}

TEST(AddedTokenMatcherTest, LstripAndRstripTrimNeighbours) {
  AddedToken mask{"<mask>", 1};
  mask.lstrip = true;
  mask.rstrip = true;
  AddedTokenMatcher matcher({{mask.content, &mask}});
  EXPECT_EQ(SplitTexts(matcher, "a \t<mask>\n b"), std::vector<std::string>({"a", "[<mask>]", "b"}));
  EXPECT_EQ(SplitTexts(matcher, "  <mask>  "), std::vector<std::string>({"", "[<mask>]", ""}));
}

TEST(AddedTokenMatcherTest, SingleWordNeedsWordBoundaries) {
  AddedToken word{"cat", 1};
  word.single_word = true;
  AddedTokenMatcher matcher({{word.content, &word}});
  EXPECT_EQ(SplitTexts(matcher, "cat concat cats cat."),
            std::vector<std::string>({"[cat]", " concat cats ", "[cat]", "."}));
}

TEST(AddedTokensTest, TokenizerStripsAroundLstripRstripTokens) {
  Json added = Json::array({testing::AddedTokenJson(300, "<sep>", true, /*lstrip=*/true, /*rstrip=*/true),
                            testing::AddedTokenJson(301, "<tag>", false)});
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({}, added).dump(), "", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  EXPECT_EQ((*tokenizer)->Encode("a  <sep>  b"), (*tokenizer)->Encode("a<sep>b"));
  std::vector<int32_t> ids = (*tokenizer)->Encode("x<tag>y<sep>");
  EXPECT_EQ(ids, std::vector<int32_t>({'x', 301, 'y', 300}));
  EXPECT_EQ((*tokenizer)->Decode(ids, true), "x<tag>y");  // <tag> is not special
  EXPECT_EQ((*tokenizer)->Decode(ids, false), "x<tag>y<sep>");
}

TEST(AddedTokensTest, AddedTokensOverrideVocabularyEntries) {
  // An added token whose content is also a model token takes the added id.
  Json added = Json::array({testing::AddedTokenJson(400, "he", true)});
  auto tokenizer = Tokenizer::FromJson(testing::ByteLevelTokenizerJson({{"h", "e"}}, added).dump(), "", "test");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  EXPECT_EQ((*tokenizer)->TokenToId("he"), 400);
  EXPECT_EQ((*tokenizer)->Encode("the"), std::vector<int32_t>({'t', 400}));
}

}  // namespace
}  // namespace surge
