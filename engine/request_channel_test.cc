#include "engine/request_channel.h"

#include <gtest/gtest.h>

#include <thread>

namespace surge {
namespace {

RequestOutput Delta(int32_t index, int32_t token, std::string text, bool finished = false) {
  RequestOutput output;
  ChoiceDelta delta;
  delta.index = index;
  delta.token_ids = {token};
  delta.text = std::move(text);
  if (finished) delta.finish_reason = FinishReason::kLength;
  output.choices.push_back(std::move(delta));
  output.finished = finished;
  output.num_completion_tokens = token;
  return output;
}

TEST(RequestChannelTest, PollMergesEverythingPushedSinceTheLastPoll) {
  RequestChannel channel(RequestId{7}, nullptr);
  EXPECT_EQ(channel.id(), RequestId{7});
  EXPECT_FALSE(channel.Poll().has_value());
  channel.Push(Delta(0, 1, "a"));
  channel.Push(Delta(1, 2, "b"));
  channel.Push(Delta(0, 3, "c"));
  std::optional<RequestOutput> output = channel.Poll();
  ASSERT_TRUE(output.has_value());
  ASSERT_EQ(output->choices.size(), 2u);
  EXPECT_EQ(output->choices[0].token_ids, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(output->choices[0].text, "ac");
  EXPECT_EQ(output->choices[1].text, "b");
  EXPECT_EQ(output->num_completion_tokens, 3);  // the latest count
  EXPECT_FALSE(output->finished);
  EXPECT_FALSE(channel.Poll().has_value());
}

TEST(RequestChannelTest, PromptLogprobsAppendAndTheEmbeddingSurvivesAMerge) {
  RequestChannel channel(RequestId{1}, nullptr);
  RequestOutput first;
  first.prompt_logprobs = {{5, -1.0f, "a", {}}};
  RequestOutput second;
  second.prompt_logprobs = {{6, -2.0f, "b", {}}};
  second.embedding = {0.6f, 0.8f};
  second.finished = true;
  channel.Push(std::move(first));
  channel.Push(std::move(second));
  std::optional<RequestOutput> output = channel.Poll();
  ASSERT_TRUE(output.has_value());
  ASSERT_EQ(output->prompt_logprobs.size(), 2u);
  EXPECT_EQ(output->prompt_logprobs[1].token, 6);
  EXPECT_EQ(output->embedding, (std::vector<float>{0.6f, 0.8f}));
  EXPECT_TRUE(output->finished);
}

TEST(RequestChannelTest, NothingAfterTheFinalOutput) {
  RequestChannel channel(RequestId{1}, nullptr);
  channel.Push(Delta(0, 1, "a", /*finished=*/true));
  channel.Push(Delta(0, 2, "late"));  // dropped
  RequestOutput output = channel.Wait();
  EXPECT_TRUE(output.finished);
  EXPECT_EQ(output.choices[0].finish_reason, FinishReason::kLength);
  EXPECT_FALSE(channel.Poll().has_value());
  EXPECT_TRUE(channel.Wait().finished);  // does not block
}

TEST(RequestChannelTest, NotifyRunsWithoutTheLockSoItMayPoll) {
  std::shared_ptr<RequestChannel> channel;
  int num_polled = 0;
  channel = std::make_shared<RequestChannel>(RequestId{1}, [&] {
    if (channel->Poll().has_value()) ++num_polled;
  });
  channel->Push(Delta(0, 1, "a"));
  channel->Push(Delta(0, 2, "b", true));
  EXPECT_EQ(num_polled, 2);
}

TEST(RequestChannelTest, ConsumerOnAnotherThreadSeesEveryToken) {
  RequestChannel channel(RequestId{1}, nullptr);
  constexpr int kNumTokens = 2000;
  std::thread producer([&] {
    for (int i = 0; i < kNumTokens; ++i) channel.Push(Delta(0, i, "x", i == kNumTokens - 1));
  });
  std::vector<int32_t> tokens;
  for (bool finished = false; !finished;) {
    RequestOutput output = channel.Wait();
    for (const ChoiceDelta& delta : output.choices) {
      tokens.insert(tokens.end(), delta.token_ids.begin(), delta.token_ids.end());
    }
    finished = output.finished;
  }
  producer.join();
  ASSERT_EQ(tokens.size(), static_cast<size_t>(kNumTokens));
  for (int i = 0; i < kNumTokens; ++i) ASSERT_EQ(tokens[i], i);
}

}  // namespace
}  // namespace surge
