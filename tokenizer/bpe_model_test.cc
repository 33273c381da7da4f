// BpeModel: merge order, unknowns, byte fallback, options, and the priority-queue loop
// against a naive rescanning BPE on random words.
#include "tokenizer/bpe_model.h"

#include <random>

#include <gtest/gtest.h>

namespace surge {
namespace {

using Merges = std::vector<std::pair<std::string, std::string>>;

// Builds a vocabulary from `tokens` (ids in order) and a model over it.
struct TestModel {
  Vocab vocab;
  std::unique_ptr<BpeModel> model;

  TestModel(const std::vector<std::string>& tokens, const Merges& merges, BpeOptions options = {}) {
    for (const std::string& token : tokens) vocab.Set(token, vocab.size());
    int num_dropped = 0;
    auto created = BpeModel::Create(&vocab, merges, std::move(options), &num_dropped);
    EXPECT_TRUE(created.ok());
    model = std::move(*created);
  }
  std::vector<std::string> Encode(const std::vector<std::string>& words) const {
    std::vector<int32_t> ids;
    model->Encode(words, &ids);
    std::vector<std::string> tokens;
    for (int32_t id : ids) tokens.push_back(vocab.id_to_token[id]);
    return tokens;
  }
};

TEST(BpeModelTest, AppliesMergesByRankNotPosition) {
  TestModel test({"a", "b", "c", "ab", "bc", "abc"}, {{"b", "c"}, {"a", "b"}, {"a", "bc"}});
  // "bc" outranks "ab", so abc = a + bc -> abc.
  EXPECT_EQ(test.Encode({"abc"}), std::vector<std::string>({"abc"}));
  EXPECT_EQ(test.Encode({"abab"}), std::vector<std::string>({"ab", "ab"}));
  EXPECT_EQ(test.Encode({"cab"}), std::vector<std::string>({"c", "ab"}));
}

TEST(BpeModelTest, EqualRanksMergeLeftmostFirst) {
  TestModel test({"a", "aa"}, {{"a", "a"}});
  EXPECT_EQ(test.Encode({"aaa"}), std::vector<std::string>({"aa", "a"}));
  EXPECT_EQ(test.Encode({"aaaaa"}), std::vector<std::string>({"aa", "aa", "a"}));
}

TEST(BpeModelTest, MergesOutsideTheVocabularyAreDropped) {
  Vocab vocab;
  for (const char* token : {"a", "b", "ab"}) vocab.Set(token, vocab.size());
  int num_dropped = 0;
  auto model = BpeModel::Create(&vocab, {{"a", "b"}, {"a", "x"}, {"b", "b"}}, {}, &num_dropped);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(num_dropped, 2);  // "x" unknown; "bb" not a token
}

TEST(BpeModelTest, ByteFallbackForUnknownCharacters) {
  std::vector<std::string> tokens = {"<unk>", "a"};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    tokens.push_back(name);
  }
  BpeOptions options;
  options.byte_fallback = true;
  options.unk_id = 0;
  TestModel test(tokens, {}, options);
  EXPECT_EQ(test.Encode({"a日a"}), std::vector<std::string>({"a", "<0xE6>", "<0x97>", "<0xA5>", "a"}));
  EXPECT_EQ(test.Encode({"😀"}), std::vector<std::string>({"<0xF0>", "<0x9F>", "<0x98>", "<0x80>"}));
}

TEST(BpeModelTest, UnknownsWithoutFallbackAndFuseUnk) {
  BpeOptions options;
  options.unk_id = 0;
  TestModel plain({"<unk>", "a"}, {}, options);
  EXPECT_EQ(plain.Encode({"xyaz", "q"}), std::vector<std::string>({"<unk>", "<unk>", "a", "<unk>", "<unk>"}));
  options.fuse_unk = true;
  TestModel fused({"<unk>", "a"}, {}, options);
  // Fused across the words of one call, as tokenizers.js does.
  EXPECT_EQ(fused.Encode({"xyaz", "q"}), std::vector<std::string>({"<unk>", "a", "<unk>"}));
  TestModel no_unk({"a"}, {});
  EXPECT_EQ(no_unk.Encode({"xay"}), std::vector<std::string>({"a"}));  // dropped
}

TEST(BpeModelTest, IgnoreMergesEmitsWholeWords) {
  BpeOptions options;
  options.ignore_merges = true;
  // "abc" is a token but no merge chain reaches it.
  TestModel test({"a", "b", "c", "ab", "abc"}, {{"a", "b"}}, options);
  EXPECT_EQ(test.Encode({"abc"}), std::vector<std::string>({"abc"}));
  EXPECT_EQ(test.Encode({"abcab"}), std::vector<std::string>({"ab", "c", "ab"}));
}

TEST(BpeModelTest, ContinuingPrefixAndEndOfWordSuffix) {
  BpeOptions options;
  options.continuing_subword_prefix = "##";
  options.end_of_word_suffix = "</w>";
  // As in the Rust crate: merging "ab" with "##c</w>" gives "abc</w>" (prefix dropped).
  TestModel test({"a", "##b", "##c</w>", "ab", "abc</w>"}, {{"a", "##b"}, {"ab", "##c</w>"}}, options);
  EXPECT_EQ(test.Encode({"abc"}), std::vector<std::string>({"abc</w>"}));
}

TEST(BpeModelTest, MergeTableGrowsAndFindsEverything) {
  MergeTable table;
  for (int32_t i = 0; i < 5000; ++i) table.Insert(i, i * 7, {i, i + 1});
  EXPECT_EQ(table.size(), 5000u);
  for (int32_t i = 0; i < 5000; ++i) {
    const MergeTable::Merge* merge = table.Find(i, i * 7);
    ASSERT_NE(merge, nullptr);
    EXPECT_EQ(merge->merged_id, i + 1);
  }
  EXPECT_EQ(table.Find(1, 1), nullptr);
  table.Insert(3, 21, {99, 100});  // a duplicate replaces
  EXPECT_EQ(table.Find(3, 21)->rank, 99);
}

// The textbook algorithm: repeatedly merge the lowest-ranked (then leftmost) pair.
std::vector<std::string> NaiveBpe(const std::string& word, const Merges& merges) {
  std::vector<std::string> parts;
  for (char c : word) parts.emplace_back(1, c);
  while (true) {
    size_t best_rank = merges.size();
    size_t best_pos = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      for (size_t rank = 0; rank < best_rank; ++rank) {
        if (merges[rank].first == parts[i] && merges[rank].second == parts[i + 1]) {
          best_rank = rank;
          best_pos = i;
          break;
        }
      }
    }
    if (best_rank == merges.size()) return parts;
    parts[best_pos] += parts[best_pos + 1];
    parts.erase(parts.begin() + best_pos + 1);
  }
}

TEST(BpeModelTest, MatchesNaiveBpeOnRandomWords) {
  std::mt19937 rng(123);
  const std::string alphabet = "abcd";
  std::vector<std::string> tokens = {"a", "b", "c", "d"};
  Merges merges;
  for (int i = 0; i < 40; ++i) {  // random merges between existing tokens
    std::string left = tokens[rng() % tokens.size()];
    std::string right = tokens[rng() % tokens.size()];
    if (left.size() + right.size() > 6) continue;
    merges.emplace_back(left, right);
    if (std::find(tokens.begin(), tokens.end(), left + right) == tokens.end()) tokens.push_back(left + right);
  }
  TestModel test(tokens, merges);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string word;
    for (size_t n = 1 + rng() % 30; n > 0; --n) word += alphabet[rng() % alphabet.size()];
    EXPECT_EQ(test.Encode({word}), NaiveBpe(word, merges)) << word;
  }
}

std::string Swap(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

TEST(BpeModelTest, MetaspaceWordSplitKeepsResults) {
  // SentencePiece-like vocabulary with no "▁" inside a token: long words are cut at word
  // starts internally; results must equal the naive BPE over the whole text.
  const std::string m = "\xE2\x96\x81";
  std::vector<std::string> tokens = {m, "a", "b", m + "a", m + "b", "ab", m + "ab", m + m};
  Merges merges = {{m, "a"}, {"a", "b"}, {m, m}, {m + "a", "b"}, {m, "b"}};
  TestModel test(tokens, merges);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::string word;
    for (size_t n = 1 + rng() % 20; n > 0; --n) {
      int kind = rng() % 3;
      word += kind == 0 ? m : kind == 1 ? "a" : "b";
    }
    // NaiveBpe works on bytes: run it with "_" standing for "▁".
    Merges compact_merges;
    for (const auto& [left, right] : merges) compact_merges.emplace_back(Swap(left, m, "_"), Swap(right, m, "_"));
    std::vector<std::string> expected;
    for (const std::string& part : NaiveBpe(Swap(word, m, "_"), compact_merges)) expected.push_back(Swap(part, "_", m));
    EXPECT_EQ(test.Encode({word}), expected);
  }
}

}  // namespace
}  // namespace surge
