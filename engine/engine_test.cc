// The engine loop on the bundled stories260K model: outputs, stop rules, n > 1,
// logprobs, cancellation, refusals. Every test ends with all KV blocks back in the pool.
#include "engine/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/engine_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using testing_util::RequestResult;
using testing_util::StoriesEngineTest;

class EngineTest : public StoriesEngineTest {};

TEST_F(EngineTest, GreedyOutputMatchesTheRequestAloneAndDecodesInContext) {
  auto engine = StartEngine({});
  const std::vector<int32_t> prompt = tokenizer_->Encode("Once upon a time");
  EngineRequest request = Greedy(prompt, 60);
  const std::vector<int32_t> expected = Reference(request);
  std::atomic<int> num_notified{0};
  auto stream = engine->Submit(request, [&] { ++num_notified; });
  ASSERT_TRUE(stream.ok());
  RequestResult result = testing_util::Drain(**stream);
  ASSERT_TRUE(result.error.ok());
  const auto& choice = result.choices.at(0);
  EXPECT_EQ(choice.token_ids, expected);
  EXPECT_EQ(result.num_completion_tokens, static_cast<int32_t>(expected.size()));
  // The text continues the prompt, leading space included.
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), expected.begin(), expected.end());
  EXPECT_EQ(tokenizer_->Decode(prompt) + choice.text, tokenizer_->Decode(all));
  engine->Stop();  // the last notify may still be running until the engine thread ends
  EXPECT_EQ(num_notified, static_cast<int>(expected.size()));  // streamed: once per token
  ExpectNoLeaks(*engine);
}

TEST_F(EngineTest, MaxTokensEndsWithLength) {
  auto engine = StartEngine({});
  RequestResult result = Run(*engine, Greedy(tokenizer_->Encode("The dog"), 5, true));
  const auto& choice = result.choices.at(0);
  EXPECT_EQ(choice.token_ids.size(), 5u);
  EXPECT_EQ(choice.finish_reason, FinishReason::kLength);
  ExpectNoLeaks(*engine);
}

// This model's stories never reach EOS (2), so a copy of it declares a token its greedy
// story does produce as a second EOS id in config.json: the engine stops on either the
// tokenizer's or the model config's EOS ids.
TEST_F(EngineTest, EosEndsWithStopUnlessIgnored) {
  const std::vector<int32_t> prompt = tokenizer_->Encode("Once upon a time");
  const std::vector<int32_t> story = Reference(Greedy(prompt, 40, true));
  const int32_t eos = story[20];
  const size_t num_until_eos = std::find(story.begin(), story.end(), eos) - story.begin() + 1;
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "eos_model";
  std::filesystem::create_directories(dir);
  for (const char* name : {"model.safetensors", "tokenizer.json", "tokenizer_config.json"}) {
    std::filesystem::copy_file(std::filesystem::path("models/stories260K") / name, dir / name,
                               std::filesystem::copy_options::overwrite_existing);
  }
  nlohmann::json config = nlohmann::json::parse(std::ifstream("models/stories260K/config.json"));
  config["eos_token_id"] = eos;
  std::ofstream(dir / "config.json") << config.dump();
  auto model = Model::Load(dir.string(), nullptr);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto engine = Engine::Create(**model, *tokenizer_, {});
  ASSERT_TRUE(engine.ok());
  (*engine)->Start();

  testing_util::ChoiceResult stopped = Run(**engine, Greedy(prompt, 40)).choices.at(0);
  EXPECT_EQ(stopped.finish_reason, FinishReason::kStop);
  EXPECT_EQ(stopped.token_ids, std::vector<int32_t>(story.begin(), story.begin() + num_until_eos));
  const int32_t num_before_eos = static_cast<int32_t>(num_until_eos) - 1;
  EXPECT_EQ(stopped.text,  // EOS is in the ids, not in the text
            Run(**engine, Greedy(prompt, num_before_eos, true)).choices.at(0).text);
  EXPECT_EQ(Run(**engine, Greedy(prompt, 40, true)).choices.at(0).token_ids, story);
  ExpectNoLeaks(**engine);
}

TEST_F(EngineTest, StopStringSpanningTokensIsNeverEmitted) {
  auto engine = StartEngine({});
  const std::vector<int32_t> prompt = tokenizer_->Encode("Once upon a time");
  const std::string full = Run(*engine, Greedy(prompt, 80, true)).choices.at(0).text;
  ASSERT_GT(full.size(), 60u);
  const std::string stop = full.substr(30, 12);  // several tokens of this tiny vocabulary
  const size_t cut = full.find(stop);
  EngineRequest request = Greedy(prompt, 80, true);
  request.stop.stop = {stop, "never appears in a story, surely"};
  RequestResult result = Run(*engine, request);
  const auto& choice = result.choices.at(0);
  EXPECT_EQ(choice.finish_reason, FinishReason::kStop);
  EXPECT_EQ(choice.text, full.substr(0, cut));  // deltas only append: no part leaked
  ExpectNoLeaks(*engine);
}

TEST_F(EngineTest, StopTokenIdsEndTheChoice) {
  auto engine = StartEngine({});
  const std::vector<int32_t> prompt = tokenizer_->Encode("Once upon a time");
  const std::vector<int32_t> full = Run(*engine, Greedy(prompt, 30, true)).choices.at(0).token_ids;
  EngineRequest request = Greedy(prompt, 30, true);
  request.stop.stop_token_ids = {full[10]};
  const auto first = std::find(full.begin(), full.end(), full[10]);
  RequestResult result = Run(*engine, request);
  EXPECT_EQ(result.choices.at(0).token_ids, std::vector<int32_t>(full.begin(), first + 1));
  EXPECT_EQ(result.choices.at(0).finish_reason, FinishReason::kStop);
}

TEST_F(EngineTest, ThreeSeededChoicesShareThePromptBlocks) {
  auto engine = StartEngine({});
  std::vector<int32_t> prompt = tokenizer_->Encode(
      "Lily and Ben went to the park. They saw a big tree with red apples. Ben wanted");
  prompt.resize(40);  // 2 full blocks + 8 tokens
  EngineRequest request;
  request.prompt_ids = prompt;
  request.sampling.seed = 42;
  request.stop.max_tokens = 8;  // 47 positions: every choice stays within 3 blocks
  request.stop.ignore_eos = true;
  request.n = 3;
  std::atomic<int64_t> max_used_blocks{0};
  Engine* engine_ptr = engine.get();
  auto stream = engine->Submit(request, [&] {
    EngineStats stats = engine_ptr->Stats();  // published just before this notification
    max_used_blocks =
        std::max<int64_t>(max_used_blocks, stats.num_total_blocks - stats.num_free_blocks);
  });
  ASSERT_TRUE(stream.ok());
  RequestResult result = testing_util::Drain(**stream);
  ASSERT_EQ(result.choices.size(), 3u);
  std::set<std::vector<int32_t>> distinct;
  for (int32_t i = 0; i < 3; ++i) {
    const auto& choice = result.choices.at(i);
    EXPECT_EQ(choice.token_ids.size(), 8u);
    distinct.insert(choice.token_ids);
    // Choice i samples exactly as a lone request with seed 42 + i.
    EngineRequest alone = request;
    alone.n = 1;
    alone.sampling.seed = 42 + i;
    EXPECT_EQ(Run(*engine, alone).choices.at(0).token_ids, choice.token_ids) << "choice " << i;
  }
  EXPECT_EQ(distinct.size(), 3u);
  // 3 blocks for choice 0, one of its own for each other choice: 5 < 3 * 3.
  EXPECT_EQ(max_used_blocks, 5);
  ExpectNoLeaks(*engine);
}

TEST_F(EngineTest, LogprobsHaveTheRequestedShape) {
  auto engine = StartEngine({});
  EngineRequest request = Greedy(tokenizer_->Encode("The cat"), 6, true);
  request.top_logprobs = 3;
  RequestResult result = Run(*engine, request);
  const auto& choice = result.choices.at(0);
  ASSERT_EQ(choice.logprobs.size(), choice.token_ids.size());
  for (size_t i = 0; i < choice.logprobs.size(); ++i) {
    const TokenLogprob& logprob = choice.logprobs[i];
    EXPECT_EQ(logprob.token, choice.token_ids[i]);
    EXPECT_LE(logprob.logprob, 0.0f);
    ASSERT_EQ(logprob.top.size(), 3u);
    EXPECT_EQ(logprob.top[0].first, logprob.token);  // greedy picks the most likely
    EXPECT_FLOAT_EQ(logprob.top[0].second, logprob.logprob);
    EXPECT_GE(logprob.top[1].second, logprob.top[2].second);
  }
  request.top_logprobs = -1;
  EXPECT_TRUE(Run(*engine, request).choices.at(0).logprobs.empty());
}

// Sampled, so that odd tokens (byte fallbacks, leading spaces) come up; the first token
// after the prompt keeps its leading space in its text as in the output.
TEST_F(EngineTest, LogprobTextsJoinIntoTheOutputText) {
  auto engine = StartEngine({});
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    EngineRequest request = Greedy(tokenizer_->Encode("Once upon a time"), 40, true);
    request.sampling.temperature = 1.5f;
    request.sampling.seed = seed;
    request.top_logprobs = 0;
    if (seed % 2 == 1) request.stop.stop = {" the"};
    const RequestResult result = Run(*engine, request);
    const auto& choice = result.choices.at(0);
    std::string joined;
    for (const TokenLogprob& logprob : choice.logprobs) joined += logprob.text;
    if (seed % 2 == 0) {
      EXPECT_EQ(joined, choice.text) << "seed " << seed;
      continue;
    }
    // A stop string cuts the text, not the tokens' texts: the text is their prefix.
    EXPECT_EQ(joined.substr(0, choice.text.size()), choice.text) << "seed " << seed;
    EXPECT_EQ(choice.finish_reason, joined.find(" the") != std::string::npos ? FinishReason::kStop
                                                                             : FinishReason::kLength);
  }
}

TEST_F(EngineTest, CancelFreesBlocksAtTheNextStep) {
  EngineOptions options;
  options.max_num_batched_tokens = 8;  // a slow prefill, so the cancel lands mid-request
  auto engine = StartEngine(options);
  EngineRequest request =
      Greedy(tokenizer_->Encode("Once upon a time, there was a girl"), 400, true);
  auto stream = engine->Submit(request, nullptr);
  ASSERT_TRUE(stream.ok());
  RequestOutput first = (*stream)->Wait();
  ASSERT_FALSE(first.finished);
  EXPECT_LT(engine->Stats().num_free_blocks, engine->Stats().num_total_blocks);
  engine->Cancel((*stream)->id());
  RequestResult rest = testing_util::Drain(**stream);
  EXPECT_EQ(rest.choices.at(0).finish_reason, FinishReason::kAbort);
  EXPECT_LT(rest.num_completion_tokens, 400);
  ExpectNoLeaks(*engine);           // stats are published before the stream hears of the abort
  engine->Cancel((*stream)->id());  // finished: ignored
  engine->Cancel(RequestId{12345});  // unknown: ignored
  EXPECT_EQ(Run(*engine, Greedy({1, 400}, 3)).choices.at(0).token_ids.size(), 3u);
}

TEST_F(EngineTest, RequestsThatCanNeverRunAreRefused) {
  EngineOptions options;
  options.kv_cache_bytes = 4 * model_->kv_layout(16).bytes_per_block();  // 64 tokens
  auto engine = StartEngine(options);
  EXPECT_EQ(engine->num_kv_blocks(), 4);
  auto too_big = engine->Submit(Greedy(std::vector<int32_t>(50, 5), 16), nullptr);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.status().message(), HasSubstr("whole KV cache (4 blocks"));
  // 50 + 15 - 1 positions fit in 4 blocks exactly.
  EXPECT_EQ(
      Run(*engine, Greedy(std::vector<int32_t>(50, 5), 15, true)).choices.at(0).token_ids.size(),
      15u);

  auto beyond_context = engine->Submit(Greedy({1, 2}, 600), nullptr);
  EXPECT_THAT(beyond_context.status().message(), HasSubstr("context of 512 tokens"));
  EXPECT_FALSE(engine->Submit(Greedy({}, 5), nullptr).ok());
  EXPECT_FALSE(engine->Submit(Greedy({1, 512}, 5), nullptr).ok());
  EngineRequest bad_stop = Greedy({1}, 5);
  bad_stop.stop.stop = {""};
  EXPECT_FALSE(engine->Submit(bad_stop, nullptr).ok());
  options.kv_cache_bytes = 100;
  EXPECT_FALSE(Engine::Create(*model_, *tokenizer_, options).ok());
  ExpectNoLeaks(*engine);
}

TEST_F(EngineTest, FullWaitingQueueRefusesWithResourceExhausted) {
  EngineOptions options;
  options.max_waiting = 4;
  auto engine = StartEngine(options, /*start=*/false);  // nothing leaves the queue yet
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int i = 0; i < 4; ++i) {
    auto stream = engine->Submit(Greedy({1, 300 + i}, 4), nullptr);
    ASSERT_TRUE(stream.ok()) << i;
    streams.push_back(*stream);
  }
  EXPECT_EQ(engine->Stats().num_waiting, 4);
  auto refused = engine->Submit(Greedy({1, 9}, 4), nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  engine->Start();
  for (auto& stream : streams)
    EXPECT_EQ(testing_util::Drain(*stream).choices.at(0).token_ids.size(), 4u);
  ExpectNoLeaks(*engine);
}

TEST_F(EngineTest, StopEndsRequestsStillInFlight) {
  auto engine = StartEngine({}, /*start=*/false);
  auto stream = engine->Submit(Greedy({1, 5}, 4), nullptr);
  ASSERT_TRUE(stream.ok());
  engine->Stop();
  RequestResult result = testing_util::Drain(**stream);
  EXPECT_EQ(result.error.code(), StatusCode::kUnavailable);
  EXPECT_EQ(engine->Submit(Greedy({1, 5}, 4), nullptr).status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(engine->Stats().ready);
}

}  // namespace
}  // namespace surge
