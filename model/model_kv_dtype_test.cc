// The model with each KV cache format: greedy generations and perplexity close to the
// f32 cache's, and batch invariance kept. On the bundled stories260K (real weights, the
// goldens' 8 prompts) and on a random model from tools/make_tiny_model.py (wider heads,
// head_dim 64, and GQA).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/model_test_util.h"

namespace surge {
namespace {

constexpr char kStories[] = "models/stories260K";
constexpr KvDType kQuantized[] = {KvDType::kBF16, KvDType::kF16, KvDType::kInt8, KvDType::kInt4};


int32_t ArgmaxOf(const float* row, int64_t n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}


// Greedy continuation: the prompt in one pass, then one token per pass (paged decode,
// blocks in reverse order so that block ids and positions differ).
std::vector<int32_t> Greedy(Model& model, const std::vector<int32_t>& prompt, int32_t max_tokens,
                            KvDType dtype) {
  const int32_t block_size = 16, vocab = static_cast<int32_t>(model.config().vocab_size);
  const int32_t num_blocks = (static_cast<int32_t>(prompt.size()) + max_tokens) / block_size + 1;
  KvStorage kv(model.kv_layout(block_size, dtype), num_blocks);
  std::vector<BlockId> table(num_blocks);
  std::iota(table.rbegin(), table.rend(), 0);
  std::vector<int32_t> tokens = prompt, out;
  std::vector<float> logits(vocab);
  int32_t position = 0;
  while (static_cast<int32_t>(out.size()) < max_tokens) {
    const int32_t num_new = static_cast<int32_t>(tokens.size()) - position;
    const SequenceChunk chunk{0, num_new, position, table};
    const int32_t last = num_new - 1;
    model.Run({std::span<const int32_t>(tokens).subspan(position), {&chunk, 1}, {&last, 1}},
                  kv, logits);
    position += num_new;
    out.push_back(ArgmaxOf(logits.data(), vocab));
    tokens.push_back(out.back());
  }
  return out;
}

// How a format's greedy generations compare with the f32 cache's.
struct Agreement {
  double identical_tokens = 0;  // share of output positions with the same token
  double mean_first_divergence = 0;  // mean over prompts of the first differing position
  int32_t min_first_divergence = 0;  // (max_tokens where none differs)
  double teacher_forced = 0;  // share of rows whose argmax matches f32's on f32's text
};

Agreement Compare(Model& model, const std::vector<std::vector<int32_t>>& prompts,
                  int32_t max_tokens, KvDType dtype) {
  Agreement a;
  a.min_first_divergence = max_tokens;
  int64_t same = 0, total = 0, same_rows = 0, rows = 0;
  const int64_t vocab = model.config().vocab_size;
  for (const std::vector<int32_t>& prompt : prompts) {
    const std::vector<int32_t> want = Greedy(model, prompt, max_tokens, KvDType::kF32);
    const std::vector<int32_t> got = Greedy(model, prompt, max_tokens, dtype);
    int32_t first = max_tokens;
    for (int32_t i = 0; i < max_tokens; ++i) {
      same += got[i] == want[i];
      if (got[i] != want[i] && first == max_tokens) first = i;
    }
    total += max_tokens;
    a.mean_first_divergence += static_cast<double>(first) / prompts.size();
    a.min_first_divergence = std::min(a.min_first_divergence, first);
    std::vector<int32_t> text = prompt;
    text.insert(text.end(), want.begin(), want.end() - 1);
    const std::vector<float> f32 = AllLogits(model, text, KvDType::kF32);
    const std::vector<float> q = AllLogits(model, text, dtype);
    for (size_t r = prompt.size() - 1; r < text.size(); ++r, ++rows)
      same_rows += ArgmaxOf(&q[r * vocab], vocab) == ArgmaxOf(&f32[r * vocab], vocab);
  }
  a.identical_tokens = static_cast<double>(same) / total;
  a.teacher_forced = static_cast<double>(same_rows) / rows;
  std::printf("kv %-4s identical tokens %.3f, first divergence mean %.1f min %d of %d, "
              "teacher-forced argmax agreement %.4f\n",
              KvDTypeName(dtype), a.identical_tokens, a.mean_first_divergence,
              a.min_first_divergence, max_tokens, a.teacher_forced);
  return a;
}


std::vector<std::vector<int32_t>> GoldenPrompts() {
  nlohmann::json goldens =
      nlohmann::json::parse(std::ifstream(std::string(kStories) + "/goldens.json"));
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& c : goldens["cases"]) prompts.push_back(c["input_ids"]);
  return prompts;
}

// Bounds, each a margin under what stories260K measures (docs/DECISIONS.md, "KV cache
// dtypes", has the numbers; other SIMD levels round differently, hence the margin).
// f16 keeps 11 significand bits: no greedy token and no perplexity digit moves. bf16
// (8 bits) and int8 (1/254 of a row's max: coarser than bf16 for the small elements of
// a row with an outlier, as RoPE'd K rows often have) flip a few near-tie rows: 0.1%
// and 1.7% of teacher-forced argmaxes, perplexity within +-0.4%. int4 is the worst case
// here: stories260K's head_dim is 8, so each row is one 8-value group with 16 levels
// between its min and max -- 25% of argmaxes flip and perplexity rises ~32%. (Models
// with head_dim 64/128 do better: the random model below; and there int4 rows also cost
// 5 bits per value instead of this model's 20.)
struct Bound {
  KvDType dtype;
  double min_teacher_forced;
  double min_mean_first_divergence;  // of 128 tokens
  double max_perplexity_ratio;
};

TEST(ModelKvDTypeTest, StoriesGreedyAndPerplexityCloseToF32) {
  ThreadPool pool(2);
  std::unique_ptr<Model> model = LoadModelOrDie(kStories, &pool);
  const std::vector<std::vector<int32_t>> prompts = GoldenPrompts();
  nlohmann::json data = nlohmann::json::parse(std::ifstream("tests/data/held_out_story_ids.json"));
  std::vector<int32_t> story = data["ids"];
  story.resize(std::min<size_t>(story.size(), model->config().max_position_embeddings));
  const double f32 = Perplexity(*model, story, KvDType::kF32);
  std::printf("perplexity over %zu tokens, f32 kv %.4f\n", story.size() - 1, f32);
  const Bound bounds[] = {{KvDType::kBF16, 0.995, 90, 1.005},
                          {KvDType::kF16, 0.999, 120, 1.001},
                          {KvDType::kInt8, 0.97, 35, 1.01},
                          {KvDType::kInt4, 0.7, 4, 1.45}};
  for (const Bound& b : bounds) {
    const Agreement a = Compare(*model, prompts, 128, b.dtype);
    const double ppl = Perplexity(*model, story, b.dtype);
    std::printf("perplexity %-4s kv %.4f (%+.3f%% vs f32 kv)\n", KvDTypeName(b.dtype), ppl,
                100 * (ppl / f32 - 1));
    EXPECT_GE(a.teacher_forced, b.min_teacher_forced) << KvDTypeName(b.dtype);
    EXPECT_GE(a.mean_first_divergence, b.min_mean_first_divergence) << KvDTypeName(b.dtype);
    EXPECT_LT(ppl, f32 * b.max_perplexity_ratio) << KvDTypeName(b.dtype);
  }
}

// A random Llama with head_dim 64 and GQA (tools/make_tiny_model.py, fixed seed), so
// the int4 rows have two full groups and the int8 scale spans 64 values.
class RandomModelKvTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::TempDir() + "/surge_kv_dtype_model";
    const std::string command =
        "/usr/bin/python3 tools/make_tiny_model.py --out " + dir_ +
        " --hidden-size 256 --intermediate-size 512 --num-hidden-layers 4"
        " --num-attention-heads 4 --num-key-value-heads 2 --vocab-size 512 --seed 7 > /dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static std::string dir_;
};
std::string RandomModelKvTest::dir_;

TEST_F(RandomModelKvTest, GreedyCloseToF32) {
  ThreadPool pool(2);
  std::unique_ptr<Model> model = LoadModelOrDie(dir_, &pool);
  ASSERT_EQ(model->config().head_dim, 64);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> token(3, 511);
  std::vector<std::vector<int32_t>> prompts(8);
  for (size_t i = 0; i < prompts.size(); ++i) {
    prompts[i].resize(4 + 9 * i);
    for (int32_t& id : prompts[i]) id = token(rng);
  }
  // Measured: teacher-forced agreement bf16 0.998, f16 1.0, int8 0.990, int4 0.883;
  // mean first divergence (of 64) 63.6, 64, 40.9, 5.6. Random weights give small greedy
  // margins, so free-running texts part early once any row flips.
  const Bound bounds[] = {{KvDType::kBF16, 0.98, 40, 0},
                          {KvDType::kF16, 0.995, 50, 0},
                          {KvDType::kInt8, 0.97, 20, 0},
                          {KvDType::kInt4, 0.83, 3, 0}};
  for (const Bound& b : bounds) {
    const Agreement a = Compare(*model, prompts, 64, b.dtype);
    EXPECT_GE(a.teacher_forced, b.min_teacher_forced) << KvDTypeName(b.dtype);
    EXPECT_GE(a.mean_first_divergence, b.min_mean_first_divergence) << KvDTypeName(b.dtype);
  }
}

// Every format keeps the batch-invariance contract: a sequence's logits are the same
// bits alone and inside a batch with another sequence, with other blocks.
TEST(ModelKvDTypeTest, LogitsAreBatchInvariantInEveryFormat) {
  ThreadPool pool(3);
  std::unique_ptr<Model> model = LoadModelOrDie(kStories, &pool);
  nlohmann::json goldens =
      nlohmann::json::parse(std::ifstream(std::string(kStories) + "/goldens.json"));
  std::vector<int32_t> a = goldens["cases"][0]["input_ids"], b = goldens["cases"][1]["input_ids"];
  for (int32_t id : goldens["cases"][0]["output_ids"]) a.push_back(id);
  for (int32_t id : goldens["cases"][1]["output_ids"]) b.push_back(id);
  const int32_t block_size = 16, vocab = static_cast<int32_t>(model->config().vocab_size);
  for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8,
                        KvDType::kInt4}) {
    const std::vector<float> alone = AllLogits(*model, a, dtype);
    KvStorage kv(model->kv_layout(block_size, dtype), 64);
    std::vector<BlockId> table_b(32), table_a(32);
    std::iota(table_b.begin(), table_b.end(), 0);
    std::iota(table_a.rbegin(), table_a.rend(), 32);
    std::vector<int32_t> tokens = b;
    tokens.insert(tokens.end(), a.begin(), a.end());
    std::vector<int32_t> rows(a.size());
    std::iota(rows.begin(), rows.end(), static_cast<int32_t>(b.size()));
    const SequenceChunk chunks[] = {
        {0, static_cast<int32_t>(b.size()), 0, table_b},
        {static_cast<int32_t>(b.size()), static_cast<int32_t>(a.size()), 0, table_a}};
    std::vector<float> mixed(a.size() * vocab);
    model->Run({tokens, chunks, rows}, kv, mixed);
    EXPECT_TRUE(alone == mixed) << KvDTypeName(dtype);
  }
}

}  // namespace
}  // namespace surge
