#include "model/model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "kernels/ops.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
constexpr char kStories[] = "models/stories260K";

// A 1-layer Llama written as F32 safetensors, optionally broken: `drop` omits a tensor,
// `reshape` writes one with an extra row.
struct TinyModel {
  bool tie = false;
  std::string drop = "";
  std::string reshape = "";
  int32_t max_position_embeddings = 64;

  std::string Write(const std::string& name) const {
    const std::string dir = testing::TempDir() + "/surge_model_test_" + name;
    std::filesystem::create_directories(dir);
    nlohmann::json config = {{"architectures", {"LlamaForCausalLM"}},
                             {"model_type", "llama"},
                             {"hidden_size", 16},
                             {"intermediate_size", 24},
                             {"num_hidden_layers", 1},
                             {"num_attention_heads", 2},
                             {"num_key_value_heads", 1},
                             {"vocab_size", 32},
                             {"max_position_embeddings", max_position_embeddings},
                             {"rms_norm_eps", 1e-5},
                             {"hidden_act", "silu"},
                             {"tie_word_embeddings", tie}};
    std::ofstream(dir + "/config.json") << config.dump();
    std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = {
        {"model.embed_tokens.weight", {32, 16}},
        {"model.norm.weight", {16}},
        {"model.layers.0.input_layernorm.weight", {16}},
        {"model.layers.0.post_attention_layernorm.weight", {16}},
        {"model.layers.0.self_attn.q_proj.weight", {16, 16}},
        {"model.layers.0.self_attn.k_proj.weight", {8, 16}},
        {"model.layers.0.self_attn.v_proj.weight", {8, 16}},
        {"model.layers.0.self_attn.o_proj.weight", {16, 16}},
        {"model.layers.0.mlp.gate_proj.weight", {24, 16}},
        {"model.layers.0.mlp.up_proj.weight", {24, 16}},
        {"model.layers.0.mlp.down_proj.weight", {16, 24}}};
    if (!tie) tensors.push_back({"lm_head.weight", {32, 16}});
    WriteSafetensors(dir + "/model.safetensors", tensors);
    return dir;
  }

  void WriteSafetensors(const std::string& path,
                        std::vector<std::pair<std::string, std::vector<int64_t>>> tensors) const {
    nlohmann::json header = nlohmann::json::object();
    std::vector<float> data;
    std::mt19937 rng(0);
    std::normal_distribution<float> dist(0.0f, 0.3f);
    for (auto& [name, shape] : tensors) {
      if (name == drop) continue;
      if (name == reshape) ++shape[0];
      const int64_t n =
          std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
      header[name] = {{"dtype", "F32"},
                      {"shape", shape},
                      {"data_offsets", {data.size() * 4, (data.size() + n) * 4}}};
      for (int64_t i = 0; i < n; ++i) data.push_back(dist(rng) + (shape.size() == 1 ? 1.0f : 0.0f));
    }
    std::string text = header.dump();
    text.resize((text.size() + 7) / 8 * 8, ' ');
    const uint64_t size = text.size();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(text.data(), text.size());
    out.write(reinterpret_cast<const char*>(data.data()), data.size() * 4);
  }
};

std::unique_ptr<Model> LoadOrDie(const std::string& dir, ThreadPool* pool) {
  auto model = Model::Load(dir, pool);
  CHECK(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

TEST(ModelLoadTest, StoriesConfigAndKvLayout) {
  ThreadPool pool(2);
  std::unique_ptr<Model> model = LoadOrDie(kStories, &pool);
  EXPECT_EQ(model->config().num_layers, 5);
  KvLayout layout = model->kv_layout(16);
  EXPECT_EQ(layout.num_layers, 5);
  EXPECT_EQ(layout.num_kv_heads, 4);
  EXPECT_EQ(layout.head_dim, 8);
  EXPECT_EQ(layout.block_size, 16);
}

TEST(ModelLoadTest, TiedModelNeedsNoLmHead) {
  EXPECT_TRUE(Model::Load(TinyModel{.tie = true}.Write("tied"), nullptr).ok());
  EXPECT_TRUE(Model::Load(TinyModel{}.Write("untied"), nullptr).ok());
}

TEST(ModelLoadTest, ErrorsNameTheTensor) {
  auto missing = Model::Load(
      TinyModel{.drop = "model.layers.0.self_attn.k_proj.weight"}.Write("missing"), nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("model.layers.0.self_attn.k_proj.weight"));

  auto shape = Model::Load(TinyModel{.reshape = "model.layers.0.mlp.up_proj.weight"}.Write("shape"),
                           nullptr);
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(), HasSubstr("model.layers.0.mlp.up_proj.weight"));
  EXPECT_THAT(shape.status().message(), HasSubstr("[25, 16]"));

  auto untied = Model::Load(TinyModel{.drop = "lm_head.weight"}.Write("no_head"), nullptr);
  ASSERT_FALSE(untied.ok());
  EXPECT_THAT(untied.status().message(), HasSubstr("lm_head.weight"));

  EXPECT_FALSE(Model::Load(testing::TempDir() + "/surge_no_such_model", nullptr).ok());
}

// Runs `steps` passes; in each, every listed sequence feeds its next `n` tokens. Returns
// each sequence's logits rows, in position order.
struct Runner {
  Model& model;
  KvStorage kv;
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::vector<BlockId>> tables;
  std::vector<int32_t> done;
  std::vector<std::vector<float>> logits;

  Runner(Model& m, std::vector<std::vector<int32_t>> sequences, int32_t block_size, uint32_t seed)
      : model(m),
        kv(m.kv_layout(block_size), 64),
        ids(std::move(sequences)),
        tables(ids.size()),
        done(ids.size(), 0),
        logits(ids.size()) {
    std::vector<BlockId> blocks(64);
    std::iota(blocks.begin(), blocks.end(), 0);
    std::shuffle(blocks.begin(), blocks.end(), std::mt19937(seed));
    for (size_t s = 0, next = 0; s < ids.size(); ++s) {
      const size_t n = (ids[s].size() + block_size - 1) / block_size;
      tables[s].assign(blocks.begin() + next, blocks.begin() + next + n);
      next += n;
    }
  }

  void Step(const std::vector<std::pair<int32_t, int32_t>>& parts) {
    std::vector<int32_t> tokens, rows;
    std::vector<SequenceChunk> chunks;
    for (auto [s, n] : parts) {
      chunks.push_back({static_cast<int32_t>(tokens.size()), n, done[s], tables[s]});
      for (int32_t i = 0; i < n; ++i) {
        rows.push_back(static_cast<int32_t>(tokens.size()));
        tokens.push_back(ids[s][done[s] + i]);
      }
    }
    const int64_t vocab = model.config().vocab_size;
    std::vector<float> out(rows.size() * vocab);
    model.Run({tokens, chunks, rows}, kv, out);
    auto it = out.begin();
    for (auto [s, n] : parts) {
      logits[s].insert(logits[s].end(), it, it + n * vocab);
      done[s] += n;
      it += n * vocab;
    }
  }
};

std::vector<int32_t> RandomIds(int32_t n, int32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = std::uniform_int_distribution<int32_t>(0, vocab - 1)(rng);
  return ids;
}

// A sequence's logits must not depend on how its tokens are split into passes or on
// what else shares the batch: prefill, prefill + decode, and a busy mixed batch with
// other sequences (and other block tables) all give the same bits.
TEST(ModelForwardTest, LogitsAreBatchInvariant) {
  ThreadPool pool(3);
  std::unique_ptr<Model> model = LoadOrDie(kStories, &pool);
  const std::vector<int32_t> a = RandomIds(37, 512, 1);
  Runner alone(*model, {a}, 4, 1);
  alone.Step({{0, 37}});
  Runner split(*model, {a}, 4, 2);  // same block size: it sets the softmax tiling
  split.Step({{0, 20}});
  for (int i = 20; i < 37; ++i) split.Step({{0, 1}});
  Runner busy(*model, {RandomIds(50, 512, 2), a, RandomIds(9, 512, 3)}, 4, 3);
  busy.Step({{0, 11}, {1, 20}, {2, 3}});
  for (int i = 20; i < 37; ++i) {
    std::vector<std::pair<int32_t, int32_t>> parts = {{1, 1}};
    if (busy.done[0] < 50)
      parts.insert(parts.begin() + (i % 2), {0, std::min(4, 50 - busy.done[0])});
    if (busy.done[2] < 9) parts.push_back({2, 1});
    busy.Step(parts);
  }
  ASSERT_EQ(alone.logits[0].size(), split.logits[0].size());
  EXPECT_TRUE(alone.logits[0] == split.logits[0]) << "prefill vs prefill + decode differ";
  EXPECT_TRUE(alone.logits[0] == busy.logits[1]) << "alone vs in a mixed batch differ";
}

// The same past one key partition (kernels/attention.h: 512 keys), where each decode
// is split along its keys (flash-decoding) while prefill chunks fold the partitions in
// one thread: a 700-token prompt in one pass, as 520 + 180 decodes, and in a busy mixed
// batch (a neighbour past 600 tokens decoding alongside) give the same bits.
TEST(ModelForwardTest, LogitsAreBatchInvariantPastOneKeyPartition) {
  ThreadPool pool(3);
  std::unique_ptr<Model> model =
      LoadOrDie(TinyModel{.max_position_embeddings = 2048}.Write("long"), &pool);
  const std::vector<int32_t> a = RandomIds(700, 32, 4);
  Runner alone(*model, {a}, 32, 1);
  alone.Step({{0, 700}});
  Runner split(*model, {a}, 32, 2);
  split.Step({{0, 520}});
  for (int i = 520; i < 700; ++i) split.Step({{0, 1}});
  Runner busy(*model, {RandomIds(800, 32, 5), a}, 32, 3);
  busy.Step({{0, 600}, {1, 515}});
  for (int i = 515; i < 700; ++i) busy.Step({{1, 1}, {0, 1}});
  ASSERT_EQ(alone.logits[0].size(), split.logits[0].size());
  EXPECT_TRUE(alone.logits[0] == split.logits[0]) << "prefill vs prefill + split decodes differ";
  EXPECT_TRUE(alone.logits[0] == busy.logits[1]) << "alone vs in a mixed batch differ";
}

// Teacher-forced on the goldens' prompt + greedy output: every row's argmax is the next
// golden token, and the first steps' top-5 logits match the PyTorch values.
TEST(ModelForwardTest, StoriesMatchesGoldens) {
  ThreadPool pool(2);
  std::unique_ptr<Model> model = LoadOrDie(kStories, &pool);
  nlohmann::json goldens =
      nlohmann::json::parse(std::ifstream(std::string(kStories) + "/goldens.json"));
  for (const auto& c : goldens["cases"]) {
    std::vector<int32_t> ids = c["input_ids"], out = c["output_ids"];
    const size_t prompt = ids.size();
    ids.insert(ids.end(), out.begin(), out.end() - 1);
    Runner run(*model, {ids}, 16, 0);
    run.Step({{0, static_cast<int32_t>(ids.size())}});
    for (size_t s = 0; s < out.size(); ++s) {
      const float* row = &run.logits[0][(prompt - 1 + s) * 512];
      ASSERT_EQ(Argmax(row, 512), out[s]) << c["prompt"] << " step " << s;
    }
    for (const auto& step : c["top5_logits"]) {
      const float* row = &run.logits[0][static_cast<int64_t>(step["position"]) * 512];
      for (const auto& top : step["top"]) {
        EXPECT_NEAR(row[static_cast<int32_t>(top["id"])], static_cast<float>(top["logit"]), 1e-4);
      }
    }
  }
}

TEST(ModelForwardDeathTest, MalformedBatchesAbort) {
  std::unique_ptr<Model> model = LoadOrDie(kStories, nullptr);
  KvStorage kv(model->kv_layout(4), 2);
  std::vector<int32_t> tokens = {1, 2, 3};
  std::vector<BlockId> table = {0};  // covers 4 positions
  std::vector<int32_t> rows = {2};
  std::vector<float> logits(512);
  SequenceChunk chunk{0, 3, 2, table};  // positions 2..4: needs 2 blocks
  EXPECT_DEATH(model->Run({tokens, {&chunk, 1}, rows}, kv, logits), "block table too short");
  SequenceChunk half{0, 2, 0, table};  // token 2 belongs to no sequence
  EXPECT_DEATH(model->Run({tokens, {&half, 1}, rows}, kv, logits), "in no sequence");
  std::vector<int32_t> bad = {1, 2, 512};
  SequenceChunk ok{0, 3, 0, table};
  EXPECT_DEATH(model->Run({bad, {&ok, 1}, rows}, kv, logits), "token id 512");
}

}  // namespace
}  // namespace surge
