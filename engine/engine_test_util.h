// Helpers for the engine tests: the bundled stories260K model loaded once, requests,
// and draining a stream into whole choices.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/generator.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge::testing_util {

// One choice, reassembled from its deltas.
struct ChoiceResult {
  std::vector<int32_t> token_ids;
  std::string text;
  std::vector<TokenLogprob> logprobs;
  std::optional<FinishReason> finish_reason;
  int32_t num_deltas = 0;
};

struct RequestResult {
  std::map<int32_t, ChoiceResult> choices;  // by index
  Status error;
  int32_t num_completion_tokens = 0;
};

// Reads `stream` until it finishes.
inline RequestResult Drain(RequestStream& stream) {
  RequestResult result;
  for (bool finished = false; !finished;) {
    RequestOutput output = stream.Wait();
    for (ChoiceDelta& delta : output.choices) {
      ChoiceResult& choice = result.choices[delta.index];
      EXPECT_FALSE(choice.finish_reason.has_value()) << "news after the choice finished";
      choice.token_ids.insert(choice.token_ids.end(), delta.token_ids.begin(),
                              delta.token_ids.end());
      choice.text += delta.text;
      for (TokenLogprob& logprob : delta.logprobs) choice.logprobs.push_back(logprob);
      if (delta.finish_reason) choice.finish_reason = delta.finish_reason;
      ++choice.num_deltas;
    }
    result.error = output.error;
    result.num_completion_tokens = output.num_completion_tokens;
    finished = output.finished;
  }
  EXPECT_FALSE(stream.Poll().has_value()) << "output after the final one";
  return result;
}

class StoriesEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto model = Model::Load("models/stories260K", nullptr);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = model->release();
    auto tokenizer = Tokenizer::FromDirectory("models/stories260K");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    tokenizer_ = tokenizer->release();
  }
  static void TearDownTestSuite() {
    delete model_;
    delete tokenizer_;
  }

  // With invariant checks after every step.
  static std::unique_ptr<Engine> StartEngine(EngineOptions options, bool start = true) {
    options.check_invariants = true;
    auto engine = Engine::Create(*model_, *tokenizer_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (start) (*engine)->Start();
    return std::move(engine).value();
  }

  // Every block is back in the pool once every stream has finished.
  static void ExpectNoLeaks(const Engine& engine) {
    EngineStats stats = engine.Stats();
    EXPECT_EQ(stats.num_free_blocks, stats.num_total_blocks) << "KV blocks leaked";
    EXPECT_EQ(stats.num_running, 0);
    EXPECT_EQ(stats.num_waiting, 0);
  }

  static EngineRequest Greedy(std::vector<int32_t> prompt_ids, int32_t max_tokens,
                              bool ignore_eos = false) {
    EngineRequest request;
    request.prompt_ids = std::move(prompt_ids);
    request.sampling.temperature = 0;
    request.stop.max_tokens = max_tokens;
    request.stop.ignore_eos = ignore_eos;
    return request;
  }

  // The offline Generator's output for the same greedy request.
  static std::vector<int32_t> Reference(const EngineRequest& request) {
    GenerateOptions options;
    options.max_tokens = request.stop.max_tokens;
    options.sampling = request.sampling;
    options.ignore_eos = request.stop.ignore_eos;
    options.stop_token_ids = {2};
    Generator generator(*model_, 16);
    auto result = generator.Generate(request.prompt_ids, options);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result->output_ids;
  }

  static RequestResult Run(Engine& engine, EngineRequest request) {
    auto stream = engine.Submit(std::move(request), nullptr);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    return Drain(**stream);
  }

  static Model* model_;
  static Tokenizer* tokenizer_;
};

inline Model* StoriesEngineTest::model_ = nullptr;
inline Tokenizer* StoriesEngineTest::tokenizer_ = nullptr;

}  // namespace surge::testing_util
