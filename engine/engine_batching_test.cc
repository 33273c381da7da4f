// Continuous batching on the bundled stories260K model and on DeepSeek V2/V3-shaped
// random models (MLA over the latent cache, MoE): a request's greedy output does not
// depend on what else is in the batch, on chunked prefill, or on preemption.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace surge {
namespace {

template <typename ModelSpec>
class EngineBatchingTest : public testing_util::ModelEngineTest<ModelSpec> {
  using Base = testing_util::ModelEngineTest<ModelSpec>;
 protected:
  // Greedy requests of random prompts (BOS + random ids) and lengths; half ignore EOS so
  // that some run long.
  static std::vector<EngineRequest> RandomRequests(int num_requests, int max_prompt_tokens,
                                                   int max_tokens, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<EngineRequest> requests;
    for (int i = 0; i < num_requests; ++i) {
      std::vector<int32_t> prompt = {1};
      const int num_prompt = std::uniform_int_distribution<int>(0, max_prompt_tokens - 1)(rng);
      for (int t = 0; t < num_prompt; ++t)
        prompt.push_back(std::uniform_int_distribution<int32_t>(3, 511)(rng));
      const int32_t num_out = std::uniform_int_distribution<int32_t>(1, max_tokens)(rng);
      requests.push_back(Base::Greedy(prompt, num_out, /*ignore_eos=*/i % 2 == 0));
    }
    return requests;
  }

  // Submits every request from another thread with random pauses of up to
  // `max_pause_us`, then drains all.
  static std::vector<std::vector<int32_t>> RunConcurrently(
      Engine& engine, const std::vector<EngineRequest>& requests, int max_pause_us) {
    std::vector<std::shared_ptr<RequestStream>> streams(requests.size());
    std::thread submitter([&] {
      std::mt19937 rng(99);
      for (size_t i = 0; i < requests.size(); ++i) {
        std::this_thread::sleep_for(
            std::chrono::microseconds(std::uniform_int_distribution<int>(0, max_pause_us)(rng)));
        auto stream = engine.Submit(requests[i], nullptr);
        ASSERT_TRUE(stream.ok()) << stream.status().ToString();
        streams[i] = *stream;
      }
    });
    submitter.join();
    std::vector<std::vector<int32_t>> outputs;
    for (auto& stream : streams) {
      if (stream == nullptr) return outputs;  // the submitter failed
      outputs.push_back(testing_util::Drain(*stream).choices.at(0).token_ids);
    }
    return outputs;
  }
};

TYPED_TEST_SUITE(EngineBatchingTest, testing_util::AllTestModels);

TYPED_TEST(EngineBatchingTest, OutputsDoNotDependOnTheBatch) {
  using T = TestFixture;
  const std::vector<EngineRequest> requests = T::RandomRequests(64, 150, 100, 1);
  EngineOptions options;
  options.max_num_seqs = 16;            // a waiting queue forms
  options.max_num_batched_tokens = 96;  // long prompts are chunked
  auto engine = T::StartEngine(options);
  const std::vector<std::vector<int32_t>> batched = T::RunConcurrently(*engine, requests, 3000);
  ASSERT_EQ(batched.size(), requests.size());
  EXPECT_EQ(engine->Stats().num_preemptions, 0);
  T::ExpectNoLeaks(*engine);

  auto alone_engine = T::StartEngine({});
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    const std::vector<int32_t> alone = T::Run(*alone_engine, requests[i]).choices.at(0).token_ids;
    EXPECT_EQ(batched[i], alone);
    EXPECT_EQ(batched[i], T::Reference(requests[i]));
  }
  T::ExpectNoLeaks(*alone_engine);
}

TYPED_TEST(EngineBatchingTest, PreemptedRequestsStillProduceTheSameOutputs) {
  using T = TestFixture;
  std::vector<EngineRequest> requests = T::RandomRequests(16, 60, 100, 2);
  for (EngineRequest& request : requests) request.stop.ignore_eos = true;  // all run long
  EngineOptions options;
  options.max_num_batched_tokens = 64;
  // 16 blocks = 256 tokens for 16 requests of up to 160 tokens each.
  options.kv_cache_bytes = 16 * T::model_->kv_layout(16).bytes_per_block();
  auto engine = T::StartEngine(options);
  const std::vector<std::vector<int32_t>> outputs = T::RunConcurrently(*engine, requests, 200);
  ASSERT_EQ(outputs.size(), requests.size());
  const EngineStats stats = engine->Stats();
  EXPECT_GT(stats.num_preemptions, 0);
  std::printf("[          ] %lld preemptions, %lld steps, %lld prompt tokens computed\n",
              static_cast<long long>(stats.num_preemptions),
              static_cast<long long>(stats.num_steps),
              static_cast<long long>(stats.num_prompt_tokens_computed));
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(outputs[i].size(), static_cast<size_t>(requests[i].stop.max_tokens)) << i;
    EXPECT_EQ(outputs[i], T::Reference(requests[i])) << "request " << i;
  }
  T::ExpectNoLeaks(*engine);
}

}  // namespace
}  // namespace surge
