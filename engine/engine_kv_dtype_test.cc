// The engine with each KV cache format: the pool is sized from the format's bytes per
// block, and greedy outputs of concurrent requests are exactly those of each request
// alone with the same format (the cache is batch-invariant in every format).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace surge {
namespace {

using testing_util::Drain;
using testing_util::RequestResult;
using testing_util::StoriesEngineTest;

class EngineKvDTypeTest : public StoriesEngineTest {};

constexpr KvDType kAll[] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8,
                            KvDType::kInt4};

TEST_F(EngineKvDTypeTest, PoolIsSizedFromTheFormatsBytesPerBlock) {
  const int64_t budget = int64_t{1} << 20;
  for (KvDType dtype : kAll) {
    EngineOptions options;
    options.kv_cache_bytes = budget;
    options.kv_dtype = dtype;
    std::unique_ptr<Engine> engine = StartEngine(options, /*start=*/false);
    const KvLayout layout = model_->kv_layout(options.block_size, dtype);
    EXPECT_EQ(engine->num_kv_blocks(), budget / static_cast<int64_t>(layout.bytes_per_block()))
        << KvDTypeName(dtype);
    EXPECT_EQ(engine->Stats().num_total_blocks, engine->num_kv_blocks());
    // /metrics' KV bytes: the layout's block size in this format, scales included.
    EXPECT_EQ(engine->Stats().kv_bytes_per_block, static_cast<int64_t>(layout.bytes_per_block()))
        << KvDTypeName(dtype);
  }
  // stories260K: 5 layers x 4 kv heads x head_dim 8, K and V.
  EXPECT_EQ(model_->kv_layout(16, KvDType::kF32).bytes_per_token(), 2u * 5 * 4 * 32);
  EXPECT_EQ(model_->kv_layout(16, KvDType::kInt8).bytes_per_token(), 2u * 5 * 4 * 12);
}

TEST_F(EngineKvDTypeTest, ConcurrentGreedyMatchesEachRequestAloneInEveryFormat) {
  const std::vector<std::vector<int32_t>> prompts = {
      {1, 403, 407, 261}, {1, 320, 431, 295, 270, 330, 267, 369}, {1, 500}, {1, 87, 33, 44, 55}};
  for (KvDType dtype : kAll) {
    EngineOptions options;
    options.kv_cache_bytes = int64_t{4} << 20;
    options.kv_dtype = dtype;
    options.max_num_batched_tokens = 8;  // chunked prefill next to decodes
    // Each request alone first: one engine at a time runs the model.
    std::vector<std::vector<int32_t>> want;
    for (const std::vector<int32_t>& prompt : prompts) {
      want.push_back(Reference(Greedy(prompt, 40, /*ignore_eos=*/true), dtype));
      ASSERT_EQ(want.back().size(), 40u);
    }
    std::unique_ptr<Engine> engine = StartEngine(options);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (const std::vector<int32_t>& prompt : prompts) {
      auto stream = engine->Submit(Greedy(prompt, 40, /*ignore_eos=*/true), nullptr);
      ASSERT_TRUE(stream.ok()) << stream.status().ToString();
      streams.push_back(*stream);
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
      const RequestResult result = Drain(*streams[i]);
      ASSERT_TRUE(result.error.ok()) << result.error.ToString();
      EXPECT_EQ(result.choices.at(0).token_ids, want[i])
          << KvDTypeName(dtype) << " prompt " << i;
    }
    engine->Stop();
    ExpectNoLeaks(*engine);
  }
}

}  // namespace
}  // namespace surge
