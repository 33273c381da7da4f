// Ambiguous and deeply nested grammars: the matcher's graph-structured stack against a
// brute-force reference recognizer over the same Grammar (every parse explored, memoized
// by expression and position), and the limits that bound its state and the masks' work.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/constraint/constraint_test_util.h"
#include "engine/constraint/gbnf_parser.h"
#include "engine/constraint/token_mask.h"

namespace surge::testing {
namespace {

// Whether `text` is in the language of `grammar`, by the positions each expression can end
// at from each start. Exponential parses cost nothing extra: sets of positions merge them.
class ReferenceRecognizer {
 public:
  ReferenceRecognizer(const Grammar& grammar, std::string text) : g_(grammar), text_(std::move(text)) {}

  bool Matches() { return Ends(g_.rule(g_.root()).body, 0).count(static_cast<int>(text_.size())) > 0; }

 private:
  using Ends_ = std::set<int>;

  Ends_ Ends(ExprId e, int pos) {
    auto key = std::make_pair(e, pos);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    memo_[key] = {};  // a left-recursive cycle would end here (the compiler refuses those)
    Ends_ result = Compute(g_.expr(e), pos);
    memo_[key] = result;
    return result;
  }

  Ends_ Then(ExprId e, const Ends_& starts) {
    Ends_ out;
    for (int p : starts) {
      Ends_ ends = Ends(e, p);
      out.insert(ends.begin(), ends.end());
    }
    return out;
  }

  Ends_ Compute(const Expr& expr, int pos) {
    switch (expr.kind) {
      case Expr::Kind::kBytes:
        if (pos < static_cast<int>(text_.size()) && expr.bytes.Contains(static_cast<uint8_t>(text_[pos]))) return {pos + 1};
        return {};
      case Expr::Kind::kSeq: {
        Ends_ cur = {pos};
        for (ExprId item : expr.items) cur = Then(item, cur);
        return cur;
      }
      case Expr::Kind::kAlt: return Alt(expr, pos);
      case Expr::Kind::kRepeat: return Repeat(expr, pos);
      case Expr::Kind::kRef: return Ends(g_.rule(expr.rule).body, pos);
    }
    return {};
  }

  Ends_ Alt(const Expr& expr, int pos) {
    Ends_ out;
    for (ExprId item : expr.items) {
      Ends_ ends = Ends(item, pos);
      out.insert(ends.begin(), ends.end());
    }
    return out;
  }

  // Bodies past min + |text| + 1 add no new end (each either consumes a byte or repeats ends).
  Ends_ Repeat(const Expr& expr, int pos) {
    const int limit = expr.max == kUnbounded ? expr.min + static_cast<int>(text_.size()) + 1 : expr.max;
    Ends_ out;
    if (expr.min == 0) out.insert(pos);
    Ends_ frontier = {pos};
    for (int k = 1; k <= limit && !frontier.empty(); ++k) {
      if (k > 1 && expr.items.size() > 1) frontier = Then(expr.items[1], frontier);
      frontier = Then(expr.items[0], frontier);
      if (k >= expr.min) out.insert(frontier.begin(), frontier.end());
    }
    return out;
  }

  const Grammar& g_;
  const std::string text_;
  std::map<std::pair<ExprId, int>, Ends_> memo_;
};

struct Case {
  const char* gbnf;
  const char* alphabet;
};

// Grammars whose parses multiply: more distinct stacks than the old 64-stack cap held.
const std::vector<Case>& AmbiguousCases() {
  static const std::vector<Case> cases = {
      // 2^n stacks after n a's: each level waits for b or for c.
      {"root ::= s\ns ::= \"a\" b | \"a\" c | \"\"\nb ::= s \"b\"\nc ::= s \"c\"\n", "abc"},
      // A letter ends an x or starts a longer one: parses multiply with every letter.
      {"root ::= x*\nx ::= [a-c] | [a-c] x | [a-c] y\ny ::= x \"b\" | x\n", "abc"},
      // Nested parentheses with two ways to close.
      {"root ::= p\np ::= \"(\" p \")\" p | \"(\" q | \"\"\nq ::= p \")\" | p \")\" \")\" p\n", "()"},
      // Palindromes over two letters (the middle is a guess at every byte).
      {"root ::= \"a\" root \"a\" | \"b\" root \"b\" | \"a\" | \"b\" | \"\"\n", "ab"},
  };
  return cases;
}

void ExpectSameLanguage(const ConstraintSpec& spec, const std::vector<std::string>& texts) {
  ConstraintLimits limits;
  auto grammar = BuildConstraintGrammar(spec, limits);
  ASSERT_TRUE(grammar.ok()) << grammar.status().ToString();
  auto compiled = CompileGrammar(*grammar, limits);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  for (const std::string& text : texts) {
    const bool expected = ReferenceRecognizer(*grammar, text).Matches();
    Matcher m(*compiled);
    const bool got = m.AcceptBytes(text) && m.CanEnd();
    ASSERT_FALSE(m.overflowed()) << spec.text << text;
    ASSERT_EQ(got, expected) << "constraint:\n" << spec.text << "\ntext: " << text;
  }
}

void ExpectSameLanguage(const Case& c, const std::vector<std::string>& texts) {
  ExpectSameLanguage(ConstraintSpec{ConstraintKind::kGrammar, c.gbnf, {}}, texts);
}

// Every string over `alphabet` of at most `max_length` bytes.
std::vector<std::string> AllStrings(const std::string& alphabet, int max_length) {
  std::vector<std::string> all = {""};
  for (size_t begin = 0; begin < all.size(); ++begin) {
    if (static_cast<int>(all[begin].size()) == max_length) continue;
    for (char c : alphabet) all.push_back(all[begin] + c);
  }
  return all;
}

TEST(AmbiguityTest, ShortStringsMatchTheReference) {
  for (const Case& c : AmbiguousCases()) ExpectSameLanguage(c, AllStrings(c.alphabet, c.alphabet == std::string("abc") ? 7 : 10));
}

TEST(AmbiguityTest, LongStringsMatchTheReference) {
  std::mt19937_64 rng(31);
  for (const Case& c : AmbiguousCases()) {
    const std::string alphabet = c.alphabet;
    std::vector<std::string> texts;
    for (int i = 0; i < 200; ++i) {
      std::string text;
      const int length = 10 + static_cast<int>(rng() % 30);
      for (int k = 0; k < length; ++k) text += alphabet[rng() % alphabet.size()];
      texts.push_back(text);
    }
    ExpectSameLanguage(c, texts);
  }
  // The first grammar's members: n a's, then n of b / c (reversed), n past the old cap.
  std::vector<std::string> members;
  for (int n = 6; n <= 14; ++n) {
    std::string text(n, 'a');
    for (int k = 0; k < n; ++k) text += "bc"[rng() % 2];
    members.push_back(text);
    members.push_back(text.substr(0, text.size() - 1));
    members.push_back(text + "b");
  }
  ExpectSameLanguage(AmbiguousCases()[0], members);
}

// A recursive schema whose alternatives overlap: "[[1]]" is an array of arrays of t, and
// "[1]" both an array of t and an array of integers.
TEST(AmbiguityTest, OverlappingRecursiveSchemaMatchesTheReference) {
  const std::string schema = R"({"$defs": {"t": {"anyOf": [
      {"type": "array", "items": {"$ref": "#/$defs/t"}},
      {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}},
      {"type": "integer", "minimum": 0, "maximum": 9}]}},
    "$ref": "#/$defs/t"})";
  ConstraintSpec spec{ConstraintKind::kJsonSchema, schema, {}};
  spec.whitespace = JsonWhitespace::kNone;
  std::vector<std::string> texts = AllStrings("[],1", 7);
  for (int depth = 1; depth <= 40; depth += 13) {
    texts.push_back(std::string(depth, '[') + "1,[1]" + std::string(depth, ']'));
    texts.push_back(std::string(depth, '[') + "1,[1]" + std::string(depth - 1, ']'));
  }
  ExpectSameLanguage(spec, texts);
  EXPECT_TRUE(Matches(MustCompile(spec), "[[1,[]],1,[1,[[2]]]]"));
}

TEST(AmbiguityTest, SharedFramesKeepTheStateSmall) {
  auto g = MustCompile({ConstraintKind::kGrammar, AmbiguousCases()[0].gbnf, {}});
  Matcher m(g);
  ASSERT_TRUE(m.AcceptBytes(std::string(40, 'a')));  // 2^40 stacks
  EXPECT_LT(m.state().num_words(), 1000u);
  std::string rest;
  for (int k = 0; k < 40; ++k) rest += "bc"[k % 3 == 0];
  ASSERT_TRUE(m.AcceptBytes(rest));
  EXPECT_TRUE(m.CanEnd());
}

TEST(AmbiguityTest, DeepNestingBeyondTheOldDepthCap) {
  auto g = MustCompile({ConstraintKind::kGrammar, "root ::= p\np ::= \"(\" p \")\" | \"\"\n", {}});
  const std::string text = std::string(1000, '(') + std::string(1000, ')');
  EXPECT_TRUE(Matches(g, text));
  EXPECT_FALSE(Matches(g, text + ")"));
}

// Past max_matcher_words the matcher refuses the byte and says why; the mask refuses too.
TEST(AmbiguityTest, StateLimitIsReportedNotSilent) {
  ConstraintLimits limits;
  limits.max_matcher_words = 200;
  auto grammar = GbnfToGrammar("root ::= p\np ::= \"(\" p \")\" | \"\"\n", limits);
  ASSERT_TRUE(grammar.ok());
  auto g = CompileGrammar(*grammar, limits);
  ASSERT_TRUE(g.ok());
  Matcher m(*g);
  int depth = 0;
  while (depth < 1000 && m.Accept('(')) ++depth;
  EXPECT_LT(depth, 1000);
  EXPECT_TRUE(m.overflowed());
  const TokenVocabulary* v = TestVocabulary("tiny");
  ASSERT_NE(v, nullptr);
  std::vector<uint64_t> bits(v->mask_words());
  Matcher near(*g);
  ASSERT_TRUE(near.AcceptBytes(std::string(depth, '(')));
  EXPECT_FALSE(ComputeMask(near, *v, bits)) << "a token of '(' would pass the limit";
}

// An adversarial recursive grammar: every mask walks the vocabulary through costly steps.
// Past max_mask_work the mask is refused (the engine then fails that request alone).
TEST(AmbiguityTest, MaskWorkIsBounded) {
  const std::string gbnf = "root ::= x*\nx ::= [a-z] | [a-z] x | [a-z] y | [a-z] z\ny ::= x | x \"b\"\nz ::= y | y \"c\"\n";
  const TokenVocabulary* v = TestVocabulary("stories");
  ASSERT_NE(v, nullptr);
  ConstraintLimits limits;
  auto grammar = GbnfToGrammar(gbnf, limits);
  ASSERT_TRUE(grammar.ok());
  auto generous = CompileGrammar(*grammar, limits);
  ASSERT_TRUE(generous.ok());
  Matcher m(*generous);
  ASSERT_TRUE(m.AcceptBytes("abcabcabc"));
  std::vector<uint64_t> bits(v->mask_words());
  ASSERT_TRUE(ComputeMask(m, *v, bits));
  EXPECT_EQ(bits, BruteForceMask(m, *v));
  limits.max_mask_work = 1000;
  auto tight = CompileGrammar(*grammar, limits);
  ASSERT_TRUE(tight.ok());
  Matcher t(*tight);
  ASSERT_TRUE(t.AcceptBytes("abcabcabc"));
  EXPECT_FALSE(ComputeMask(t, *v, bits));
  MaskCache cache(*v);
  EXPECT_FALSE(cache.ComputeMask(t, bits));
  EXPECT_FALSE(cache.ComputeMask(t, bits)) << "a failure is not cached as a mask";
}

}  // namespace
}  // namespace surge::testing
