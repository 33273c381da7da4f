// Prompt logprobs (completions' echo): every prompt token after the first is scored as the
// model sees it given the tokens before it -- checked against asking the engine for the
// next-token distribution after each prefix -- whole or in small chunks, past a prefix
// cache hit, with or without generating after it (max_tokens 0 ends at the prompt).
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine_test_util.h"

namespace surge {
namespace {

using testing_util::RequestResult;

class PromptLogprobsTest : public testing_util::ModelEngineTest<testing_util::StoriesModel> {
 protected:
  // The prompt's scores from one request (all the outputs' prompt_logprobs, in order).
  static std::vector<TokenLogprob> Score(Engine& engine, const std::vector<int32_t>& prompt, int32_t max_tokens,
                                         RequestResult* result = nullptr) {
    EngineRequest request = Greedy(prompt, max_tokens, true);
    request.prompt_logprobs = 2;
    auto stream = engine.Submit(request, nullptr);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    std::vector<TokenLogprob> scores;
    RequestResult drained;
    for (bool finished = false; !finished;) {
      RequestOutput output = (*stream)->Wait();
      for (TokenLogprob& logprob : output.prompt_logprobs) scores.push_back(logprob);
      for (ChoiceDelta& delta : output.choices) {
        EXPECT_EQ(scores.size(), prompt.size() - 1) << "an output token before the whole prompt was scored";
        auto& choice = drained.choices[delta.index];
        choice.token_ids.insert(choice.token_ids.end(), delta.token_ids.begin(), delta.token_ids.end());
        if (delta.finish_reason) choice.finish_reason = delta.finish_reason;
      }
      finished = output.finished;
    }
    if (result != nullptr) *result = std::move(drained);
    return scores;
  }

  // log P(prompt[p] | prompt[0, p)) from a lone request over that prefix with every
  // token among its alternatives.
  static float Reference(Engine& engine, const std::vector<int32_t>& prompt, size_t position) {
    EngineRequest request = Greedy({prompt.begin(), prompt.begin() + position}, 1, true);
    request.top_logprobs = tokenizer_->vocab_size();
    const RequestResult result = Run(engine, request);
    for (const auto& [token, logprob] : result.choices.at(0).logprobs.at(0).top) {
      if (token == prompt[position]) return logprob;
    }
    ADD_FAILURE() << "token " << prompt[position] << " not among the alternatives";
    return 0;
  }
};

TEST_F(PromptLogprobsTest, ScoresEqualTheNextTokenDistributionOfEachPrefix) {
  const std::vector<int32_t> prompt = tokenizer_->Encode("Once upon a time, there was a little girl named Lily.");
  auto engine = StartEngine({});
  RequestResult result;
  const std::vector<TokenLogprob> scores = Score(*engine, prompt, 0, &result);
  ASSERT_EQ(scores.size(), prompt.size() - 1);
  EXPECT_EQ(result.choices.at(0).finish_reason, FinishReason::kLength);
  EXPECT_TRUE(result.choices.at(0).token_ids.empty());
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_EQ(scores[i].token, prompt[i + 1]);
    EXPECT_NEAR(scores[i].logprob, Reference(*engine, prompt, i + 1), 1e-4) << "position " << i + 1;
    ASSERT_EQ(scores[i].top.size(), 2u);
    EXPECT_GE(scores[i].top[0].second, scores[i].logprob - 1e-6);
  }
  ExpectNoLeaks(*engine);
}

// Chunks of 3 tokens, and a prompt whose prefix the cache holds: the same scores, all of
// them (a cache hit would skip positions, so such requests compute their whole prompt).
TEST_F(PromptLogprobsTest, ChunkedAndCachedPromptsScoreTheSame) {
  const std::vector<int32_t> prompt = tokenizer_->Encode("Tom had a red ball. He liked to play with it every day in the park.");
  auto whole = StartEngine({});
  const std::vector<TokenLogprob> expected = Score(*whole, prompt, 2);
  whole.reset();
  EngineOptions options;
  options.max_num_batched_tokens = 3;
  auto chunked = StartEngine(options);
  Run(*chunked, Greedy(prompt, 1, true));  // fills the prefix cache
  RequestResult result;
  const std::vector<TokenLogprob> scores = Score(*chunked, prompt, 2, &result);
  ASSERT_EQ(scores.size(), expected.size());
  for (size_t i = 0; i < scores.size(); ++i) EXPECT_NEAR(scores[i].logprob, expected[i].logprob, 1e-4) << i;
  EXPECT_EQ(result.choices.at(0).token_ids.size(), 2u);
  ExpectNoLeaks(*chunked);
}

TEST_F(PromptLogprobsTest, MaxTokensZeroNeedsPromptLogprobs) {
  auto engine = StartEngine({});
  EngineRequest request = Greedy({1, 5, 9}, 0);
  EXPECT_FALSE(engine->Submit(request, nullptr).ok());
  request.prompt_logprobs = 0;
  EXPECT_TRUE(engine->Submit(request, nullptr).ok());
  request.prompt_logprobs = tokenizer_->vocab_size() + 1;
  EXPECT_FALSE(engine->Submit(request, nullptr).ok());
}

}  // namespace
}  // namespace surge
