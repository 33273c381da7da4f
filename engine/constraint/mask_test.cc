#include <gtest/gtest.h>

#include "engine/constraint/constraint_test_util.h"
#include "engine/constraint/token_mask.h"

namespace surge::testing {
namespace {

constexpr char kPersonSchema[] = R"({"type":"object","properties":{
    "name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0,"maximum":150},
    "email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"enum":["a","b c","é"]},"maxItems":3},
    "score":{"type":"number"},"ok":{"type":"boolean"},"note":{"anyOf":[{"type":"string"},{"type":"null"}]}},
    "required":["name","ok"]})";

std::vector<ConstraintSpec> Specs() {
  return {
      {ConstraintKind::kJsonSchema, kPersonSchema, {}},
      {ConstraintKind::kJsonObject, "", {}},
      {ConstraintKind::kRegex, "(\\d{1,3}\\.){3}\\d{1,3}|[a-z ]+!?", {}},
      {ConstraintKind::kChoice, "", {"positive", "negative", "neutral", "null"}},
      {ConstraintKind::kGrammar, "root ::= \"{\" item (\", \" item)* \"}\"\nitem ::= [a-z]+ \"=\" (root | [0-9]+)\n", {}},
  };
}

// Masks from the trie walk (direct and cached) equal trying every token, on the states of
// random walks.
void CheckMasks(const std::string& vocabulary_name, int walks, int max_tokens) {
  const TokenVocabulary* v = TestVocabulary(vocabulary_name);
  if (v == nullptr) GTEST_SKIP() << vocabulary_name << " vocabulary not found";
  std::mt19937_64 rng(7);
  for (const ConstraintSpec& spec : Specs()) {
    auto g = MustCompile(spec);
    ASSERT_NE(g, nullptr);
    MaskCache cache(*v, 16);
    for (int w = 0; w < walks; ++w) {
      std::vector<Matcher> states;
      bool ended = false;
      RandomWalk(g, *v, rng, max_tokens, &ended, &states);
      for (const Matcher& m : states) {
        std::vector<uint64_t> fast(v->mask_words()), cached(v->mask_words());
        ASSERT_TRUE(ComputeMask(m, *v, fast));
        ASSERT_TRUE(cache.ComputeMask(m, cached));
        std::vector<uint64_t> slow = BruteForceMask(m, *v);
        ASSERT_EQ(fast, slow) << vocabulary_name << " spec " << spec.text;
        ASSERT_EQ(cached, slow);
      }
    }
  }
}

TEST(MaskTest, TinyVocabularyEqualsBruteForce) { CheckMasks("tiny", 30, 40); }
TEST(MaskTest, Stories260KEqualsBruteForce) { CheckMasks("stories", 10, 40); }
TEST(MaskTest, Llama3EqualsBruteForce) { CheckMasks("llama3", 2, 12); }
TEST(MaskTest, Qwen3EqualsBruteForce) { CheckMasks("qwen3", 2, 12); }

TEST(MaskTest, EosExactlyWhenOutputMayEnd) {
  const TokenVocabulary* v = TestVocabulary("tiny");
  auto g = MustCompile({ConstraintKind::kChoice, "", {"a", "ab"}});
  Matcher m(g);
  std::vector<uint64_t> bits(v->mask_words());
  ASSERT_TRUE(ComputeMask(m, *v, bits));
  EXPECT_FALSE(MaskAllows(bits, 0));
  EXPECT_TRUE(MaskAllows(bits, 9));    // "a"
  EXPECT_TRUE(MaskAllows(bits, 11));   // "ab"
  EXPECT_FALSE(MaskAllows(bits, 35));  // special: never
  EXPECT_FALSE(MaskAllows(bits, 36));  // no bytes: never
  EXPECT_FALSE(AcceptToken(&m, *v, 0));
  ASSERT_TRUE(AcceptToken(&m, *v, 9));
  ASSERT_TRUE(ComputeMask(m, *v, bits));
  EXPECT_TRUE(MaskAllows(bits, 0));
  EXPECT_TRUE(MaskAllows(bits, 10));  // "b"
  EXPECT_TRUE(AcceptToken(&m, *v, 0));
  EXPECT_FALSE(AcceptToken(&m, *v, 35));
}

TEST(MaskTest, TokenBytesAreExact) {
  const TokenVocabulary* v = TestVocabulary("llama3");
  if (v == nullptr) GTEST_SKIP();
  int partial = 0;
  for (int32_t id = 0; id < v->num_tokens(); ++id) partial += v->bytes(id) == "\xC3";
  EXPECT_EQ(partial, 1);  // the byte token for 0xC3 is one raw byte, not U+FFFD
  const TokenVocabulary* s = TestVocabulary("stories");
  ASSERT_NE(s, nullptr);
  int newline = 0;
  for (int32_t id = 0; id < s->num_tokens(); ++id) newline += s->bytes(id) == "\n";
  EXPECT_EQ(newline, 1);  // <0x0A>
}

}  // namespace
}  // namespace surge::testing
