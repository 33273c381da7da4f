// Prefix caching end to end on the bundled stories260K model and on DeepSeek V2/V3-shaped
// random models (the cache holds MLA's latent rows there): outputs with caching on
// equal outputs with caching off (greedy and seeded sampling, f32 KV) over a randomized
// workload of shared prefixes and concurrent arrivals, in a pool small enough to evict
// cached blocks and preempt running sequences; invariants (refcounts, LRU, hash map, and
// every hit's tokens) are checked after every step.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace surge {
namespace {

template <typename ModelSpec>
class PrefixCacheEngineTest : public testing_util::ModelEngineTest<ModelSpec> {
  using Base = testing_util::ModelEngineTest<ModelSpec>;
 protected:
  // BOS + one of three "system prompts" cut at a random length + a random question.
  // A quarter sample two choices with a seed (n > 1 forks from the cached prompt).
  static std::vector<EngineRequest> SharedPrefixRequests(int num_requests, uint32_t seed) {
    std::mt19937 rng(seed);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<std::vector<int32_t>> prefixes(3);
    for (auto& prefix : prefixes) {
      for (int t = uniform(20, 120); t > 0; --t) prefix.push_back(uniform(3, 511));
    }
    std::vector<EngineRequest> requests;
    for (int i = 0; i < num_requests; ++i) {
      const auto& prefix = prefixes[uniform(0, 2)];
      std::vector<int32_t> prompt = {1};
      prompt.insert(prompt.end(), prefix.begin(), prefix.begin() + uniform(0, static_cast<int>(prefix.size())));
      for (int t = uniform(1, 40); t > 0; --t) prompt.push_back(uniform(3, 511));
      EngineRequest request = Base::Greedy(prompt, uniform(1, 60), /*ignore_eos=*/i % 2 == 0);
      if (i % 4 == 3) {
        request.n = 2;
        request.sampling.temperature = 0.8;
        request.sampling.seed = 1000 + i;
      }
      requests.push_back(std::move(request));
    }
    return requests;
  }

  // Submits from another thread with random pauses of up to `max_pause_us`, drains all.
  static std::vector<testing_util::RequestResult> RunConcurrently(Engine& engine,
                                                                  const std::vector<EngineRequest>& requests,
                                                                  int max_pause_us) {
    std::vector<std::shared_ptr<RequestStream>> streams(requests.size());
    std::thread submitter([&] {
      std::mt19937 rng(5);
      for (size_t i = 0; i < requests.size(); ++i) {
        std::this_thread::sleep_for(
            std::chrono::microseconds(std::uniform_int_distribution<int>(0, max_pause_us)(rng)));
        auto stream = engine.Submit(requests[i], nullptr);
        ASSERT_TRUE(stream.ok()) << stream.status().ToString();
        streams[i] = *stream;
      }
    });
    submitter.join();
    std::vector<testing_util::RequestResult> results;
    for (auto& stream : streams) {
      if (stream == nullptr) return results;
      results.push_back(testing_util::Drain(*stream));
    }
    return results;
  }

  static void ExpectSameOutputs(const std::vector<testing_util::RequestResult>& expected,
                                const std::vector<testing_util::RequestResult>& actual) {
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(expected[i].choices.size(), actual[i].choices.size()) << "request " << i;
      for (const auto& [index, choice] : expected[i].choices) {
        EXPECT_EQ(actual[i].choices.at(index).token_ids, choice.token_ids) << "request " << i << " choice " << index;
      }
    }
  }
};

TYPED_TEST_SUITE(PrefixCacheEngineTest, testing_util::AllTestModels);

TYPED_TEST(PrefixCacheEngineTest, OutputsEqualOutputsWithoutCachingUnderEvictionAndPreemption) {
  using T = TestFixture;
  const std::vector<EngineRequest> requests = T::SharedPrefixRequests(48, 3);
  EngineOptions off;
  off.enable_prefix_caching = false;
  off.max_num_batched_tokens = 64;
  auto reference_engine = T::StartEngine(off);
  const auto reference = T::RunConcurrently(*reference_engine, requests, 2000);
  ASSERT_EQ(reference.size(), requests.size());
  T::ExpectNoLeaks(*reference_engine);
  EXPECT_EQ(reference_engine->Stats().prefix_cache_hit_tokens, 0);

  // 20 blocks = 320 tokens: a few sequences of up to ~220 tokens at once, so cached
  // blocks are evicted and running sequences preempted.
  EngineOptions small = off;
  small.enable_prefix_caching = true;
  small.kv_cache_bytes = 20 * T::model_->kv_layout(16).bytes_per_block();
  auto engine = T::StartEngine(small);
  const auto cached = T::RunConcurrently(*engine, requests, 300);
  T::ExpectSameOutputs(reference, cached);
  const EngineStats stats = engine->Stats();
  std::printf("[          ] small pool: %lld of %lld prompt tokens hit, %lld evictions, %lld preemptions\n",
              static_cast<long long>(stats.prefix_cache_hit_tokens),
              static_cast<long long>(stats.prefix_cache_queried_tokens),
              static_cast<long long>(stats.prefix_cache_evicted_blocks),
              static_cast<long long>(stats.num_preemptions));
  EXPECT_GT(stats.prefix_cache_hit_tokens, 0);
  EXPECT_GT(stats.prefix_cache_evicted_blocks, 0);
  EXPECT_GT(stats.num_preemptions, 0);
  T::ExpectNoLeaks(*engine);

  // A roomy pool and everything at once: concurrent requests share prefixes in flight.
  EngineOptions roomy = off;
  roomy.enable_prefix_caching = true;
  auto roomy_engine = T::StartEngine(roomy);
  const auto at_once = T::RunConcurrently(*roomy_engine, requests, 0);
  T::ExpectSameOutputs(reference, at_once);
  EXPECT_GT(roomy_engine->Stats().prefix_cache_hit_tokens, 0);
  EXPECT_LT(roomy_engine->Stats().num_prompt_tokens_computed, reference_engine->Stats().num_prompt_tokens_computed);
  T::ExpectNoLeaks(*roomy_engine);
}

using StoriesPrefixCacheTest = PrefixCacheEngineTest<testing_util::StoriesModel>;

TEST_F(StoriesPrefixCacheTest, ARepeatedPromptReportsItsCachedTokens) {
  auto engine = StartEngine({});
  std::vector<int32_t> prompt = {1};
  for (int t = 0; t < 40; ++t) prompt.push_back(3 + (t * 37) % 500);  // 41 tokens
  auto stream = engine->Submit(Greedy(prompt, 5), nullptr);
  ASSERT_TRUE(stream.ok());
  RequestOutput last;
  for (bool finished = false; !finished;) {
    last = (*stream)->Wait();
    finished = last.finished;
  }
  EXPECT_EQ(last.num_cached_prompt_tokens, 0);
  ASSERT_TRUE(last.queue_time_s.has_value());
  EXPECT_GE(*last.queue_time_s, 0);
  auto again = engine->Submit(Greedy(prompt, 5), nullptr);
  ASSERT_TRUE(again.ok());
  for (bool finished = false; !finished;) {
    last = (*again)->Wait();
    finished = last.finished;
  }
  EXPECT_EQ(last.num_cached_prompt_tokens, 32);  // two full blocks of 16; the rest computed
  EXPECT_EQ(engine->Stats().prefix_cache_hit_tokens, 32);
  EXPECT_EQ(engine->Stats().prefix_cache_queried_tokens, 82);
}

}  // namespace
}  // namespace surge
