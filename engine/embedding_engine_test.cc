// Embedding requests through the engine on stories260K: prefill-only sequences whose
// pooled vectors are bit for bit the same alone, chunked, batched with generating
// requests and after preemption; they hold KV blocks only while they run, never touch
// the prefix cache, can be cancelled, and are refused when they cannot run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace surge {
namespace {

using testing_util::StoriesEngineTest;

class EmbeddingEngineTest : public StoriesEngineTest {
 protected:
  static EngineRequest Embed(std::vector<int32_t> ids, PoolingKind pooling) {
    EngineRequest request;
    request.prompt_ids = std::move(ids);
    request.embed = pooling;
    return request;
  }
  static std::vector<int32_t> RandomIds(std::mt19937& rng, int max_tokens) {
    std::vector<int32_t> ids = {1};
    const int n = std::uniform_int_distribution<int>(0, max_tokens - 1)(rng);
    for (int i = 0; i < n; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, 511)(rng));
    return ids;
  }
  static std::vector<float> EmbedOne(Engine& engine, EngineRequest request) {
    auto stream = engine.Submit(std::move(request), nullptr);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    return Collect(**stream);
  }
  // The embedding of a finished stream (empty when it had none).
  static std::vector<float> Collect(RequestStream& stream) {
    std::vector<float> embedding;
    for (bool finished = false; !finished;) {
      RequestOutput output = stream.Wait();
      EXPECT_TRUE(output.error.ok()) << output.error.ToString();
      EXPECT_EQ(output.num_completion_tokens, 0);
      if (!output.embedding.empty()) embedding = std::move(output.embedding);
      finished = output.finished;
    }
    return embedding;
  }
};

TEST_F(EmbeddingEngineTest, VectorsAreNormalizedAndPoolingsDiffer) {
  auto engine = StartEngine({});
  std::vector<int32_t> ids = {1, 403, 407, 261, 378, 280, 496};
  const std::vector<float> last = EmbedOne(*engine, Embed(ids, PoolingKind::kLast));
  const std::vector<float> mean = EmbedOne(*engine, Embed(ids, PoolingKind::kMean));
  ASSERT_EQ(last.size(), static_cast<size_t>(model_->config().hidden_size));
  ASSERT_EQ(mean.size(), last.size());
  double norm_last = 0, norm_mean = 0;
  for (size_t i = 0; i < last.size(); ++i) norm_last += last[i] * last[i], norm_mean += mean[i] * mean[i];
  EXPECT_NEAR(norm_last, 1.0, 1e-5);
  EXPECT_NEAR(norm_mean, 1.0, 1e-5);
  EXPECT_NE(last, mean);
  // A one-token input pools to the same vector either way.
  EXPECT_EQ(EmbedOne(*engine, Embed({1}, PoolingKind::kLast)), EmbedOne(*engine, Embed({1}, PoolingKind::kMean)));
  ExpectNoLeaks(*engine);
}

// Chunked prefill: the same input split across many steps (7 tokens per step) pools over
// all its tokens -- bit for bit what one pass gives.
TEST_F(EmbeddingEngineTest, ChunkedEqualsUnchunked) {
  auto whole = StartEngine({});
  EngineOptions chunked_options;
  chunked_options.max_num_batched_tokens = 7;
  auto chunked = StartEngine(chunked_options);
  std::mt19937 rng(3);
  for (PoolingKind pooling : {PoolingKind::kLast, PoolingKind::kMean}) {
    for (int i = 0; i < 4; ++i) {
      const std::vector<int32_t> ids = RandomIds(rng, 200);
      SCOPED_TRACE(std::string(PoolingKindName(pooling)) + " input of " + std::to_string(ids.size()));
      EXPECT_EQ(EmbedOne(*chunked, Embed(ids, pooling)), EmbedOne(*whole, Embed(ids, pooling)));
    }
  }
  EXPECT_GT(chunked->Stats().num_steps, 4 * 2 * 2);
  ExpectNoLeaks(*whole);
  ExpectNoLeaks(*chunked);
}

// Embeddings and generations share chunked, mixed batches; a small KV cache preempts
// some. Every vector equals the one computed alone, every generation the offline one.
TEST_F(EmbeddingEngineTest, BatchedWithGenerationEqualsAlone) {
  std::mt19937 rng(5);
  std::vector<EngineRequest> requests;
  for (int i = 0; i < 48; ++i) {
    if (i % 3 == 2) {
      requests.push_back(Greedy(RandomIds(rng, 60), 40 + i, /*ignore_eos=*/true));
    } else {
      requests.push_back(Embed(RandomIds(rng, 150), i % 2 ? PoolingKind::kMean : PoolingKind::kLast));
    }
  }
  for (bool small_cache : {false, true}) {
    SCOPED_TRACE(small_cache ? "small KV cache" : "roomy KV cache");
    EngineOptions options;
    options.max_num_seqs = 12;
    options.max_num_batched_tokens = 48;
    if (small_cache) options.kv_cache_bytes = 24 * model_->kv_layout(16).bytes_per_block();
    auto engine = StartEngine(options);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (const EngineRequest& request : requests) streams.push_back(*engine->Submit(request, nullptr));
    std::vector<std::vector<float>> vectors(requests.size());
    std::vector<std::vector<int32_t>> tokens(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].embed) {
        vectors[i] = Collect(*streams[i]);
      } else {
        tokens[i] = testing_util::Drain(*streams[i]).choices.at(0).token_ids;
      }
    }
    if (small_cache) EXPECT_GT(engine->Stats().num_preemptions, 0);
    ExpectNoLeaks(*engine);
    engine->Stop();  // the model's activations are one engine's at a time
    auto alone = StartEngine({});
    for (size_t i = 0; i < requests.size(); ++i) {
      SCOPED_TRACE("request " + std::to_string(i));
      if (requests[i].embed) {
        EXPECT_EQ(vectors[i], EmbedOne(*alone, requests[i]));
      } else {
        EXPECT_EQ(tokens[i], Reference(requests[i]));
      }
    }
  }
}

// They hold blocks only while prefilling and leave the prefix cache as it was: nothing
// looked up, nothing filed -- and a prompt cached by a generation is not reused.
TEST_F(EmbeddingEngineTest, BypassesThePrefixCache) {
  auto engine = StartEngine({});
  std::mt19937 rng(7);
  std::vector<int32_t> ids = RandomIds(rng, 100);
  ids.resize(std::max<size_t>(ids.size(), 64), 5);
  const std::vector<float> before = EmbedOne(*engine, Embed(ids, PoolingKind::kMean));
  EngineStats stats = engine->Stats();
  EXPECT_EQ(stats.num_cached_blocks, 0);
  EXPECT_EQ(stats.prefix_cache_queried_tokens, 0);
  EXPECT_EQ(stats.num_prompt_tokens_computed, static_cast<int64_t>(ids.size()));
  Run(*engine, Greedy(ids, 2));  // files ids' full blocks
  const int64_t computed = engine->Stats().num_prompt_tokens_computed;
  const int64_t cached_blocks = engine->Stats().num_cached_blocks;
  EXPECT_GT(cached_blocks, 0);
  EXPECT_EQ(EmbedOne(*engine, Embed(ids, PoolingKind::kMean)), before);
  EXPECT_EQ(engine->Stats().num_prompt_tokens_computed, computed + static_cast<int64_t>(ids.size()));
  EXPECT_EQ(engine->Stats().num_cached_blocks, cached_blocks);
  ExpectNoLeaks(*engine);
}

TEST_F(EmbeddingEngineTest, CancelEndsWithoutAVector) {
  auto engine = StartEngine({}, /*start=*/false);
  auto stream = engine->Submit(Embed(std::vector<int32_t>(300, 7), PoolingKind::kMean), nullptr);
  ASSERT_TRUE(stream.ok());
  engine->Cancel((*stream)->id());
  engine->Start();
  RequestOutput output = (*stream)->Wait();
  EXPECT_TRUE(output.finished);
  EXPECT_TRUE(output.embedding.empty());
  ASSERT_EQ(output.choices.size(), 1u);
  EXPECT_EQ(output.choices[0].finish_reason, FinishReason::kAbort);
  ExpectNoLeaks(*engine);
}

TEST_F(EmbeddingEngineTest, RefusesWhatCannotRun) {
  EngineOptions options;
  options.kv_cache_bytes = 4 * model_->kv_layout(16).bytes_per_block();
  auto engine = StartEngine(options);
  EngineRequest two = Embed({1, 2}, PoolingKind::kLast);
  two.n = 2;
  EXPECT_FALSE(engine->Submit(two, nullptr).ok());
  EngineRequest logprobs = Embed({1, 2}, PoolingKind::kLast);
  logprobs.top_logprobs = 0;
  EXPECT_FALSE(engine->Submit(logprobs, nullptr).ok());
  EXPECT_FALSE(engine->Submit(Embed({}, PoolingKind::kLast), nullptr).ok());
  EXPECT_FALSE(engine->Submit(Embed({1, 512}, PoolingKind::kLast), nullptr).ok());  // vocabulary
  const int64_t context = model_->config().max_position_embeddings;
  auto too_long = engine->Submit(Embed(std::vector<int32_t>(context + 1, 5), PoolingKind::kLast), nullptr);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("context"), std::string::npos) << too_long.status().ToString();
  // 64 tokens fit the 4 blocks exactly; 65 do not. (max_tokens plays no part.)
  EXPECT_TRUE(engine->Submit(Embed(std::vector<int32_t>(64, 5), PoolingKind::kLast), nullptr).ok());
  EXPECT_FALSE(engine->Submit(Embed(std::vector<int32_t>(65, 5), PoolingKind::kLast), nullptr).ok());
}

}  // namespace
}  // namespace surge
