// Structured output on the bundled stories260K model: under a JSON schema, regex or choice
// constraint every output matches, greedy or sampled, alone or 32 at a time, with n = 2,
// with stop strings, through preemption, and a request's tokens do not depend on its
// batch neighbours.
#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "engine/constraint/constraint.h"
#include "engine/constraint/constraint_test_util.h"
#include "engine/constraint/tokenizer_vocabulary.h"
#include "engine/engine_test_util.h"

namespace surge {
namespace {

using testing_util::RequestResult;
using Json = nlohmann::ordered_json;

// Bounded everywhere (string lengths, item counts), so that every output completes well
// within max_tokens.
constexpr char kSchema[] = R"({"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 8},
  "age": {"type": "integer", "minimum": 0, "maximum": 120},
  "score": {"type": "number", "minimum": 0},
  "ok": {"type": "boolean"},
  "color": {"enum": ["red", "green", "blue"]},
  "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 3},
  "pet": {"type": "object", "properties": {"kind": {"enum": ["cat", "dog"]}, "legs": {"type": "integer",
          "minimum": 0, "maximum": 9}}, "required": ["kind"]}},
  "required": ["name", "age", "color"]})";
constexpr char kRegex[] = "[a-z]{3,8}-[0-9]{2}( (ok|no))?";
const std::vector<std::string> kChoices = {"once upon a time", "the end", "Lily", "42"};
constexpr int32_t kMaxTokens = 400;

std::shared_ptr<const CompiledGrammar> Compile(ConstraintSpec spec) {
  auto compiled = CompileConstraint(spec, ConstraintLimits());
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  return *compiled;
}

class StructuredOutputTest : public testing_util::StoriesEngineTest {
 protected:
  static EngineRequest Constrained(std::shared_ptr<const CompiledGrammar> grammar, uint32_t seed, bool greedy) {
    std::mt19937 rng(seed);
    EngineRequest request;
    request.prompt_ids = {1};
    for (int i = 0; i < 1 + static_cast<int>(rng() % 8); ++i) request.prompt_ids.push_back(3 + rng() % 509);
    request.sampling.temperature = greedy ? 0.0 : 1.0;
    request.sampling.seed = seed;
    request.stop.max_tokens = kMaxTokens;
    request.constraint = std::move(grammar);
    return request;
  }

  static void ExpectSchemaValid(const std::string& text) {
    Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(value.is_discarded()) << "not JSON: " << text;
    const Json schema = Json::parse(kSchema);
    std::string why;
    EXPECT_TRUE(testing::ValidateJson(schema, schema, value, &why)) << text << ": " << why;
  }
};

TEST_F(StructuredOutputTest, JsonSchemaGreedyAndSampledAlone) {
  auto engine = StartEngine({});
  auto grammar = Compile({ConstraintKind::kJsonSchema, kSchema, {}});
  for (uint32_t seed = 0; seed < 6; ++seed) {
    RequestResult result = Run(*engine, Constrained(grammar, seed, /*greedy=*/seed % 2 == 0));
    ASSERT_TRUE(result.error.ok());
    const auto& choice = result.choices.at(0);
    EXPECT_EQ(choice.finish_reason, FinishReason::kStop) << choice.text;
    ExpectSchemaValid(choice.text);
  }
  ExpectNoLeaks(*engine);
}

// 32 concurrent requests of three kinds, n = 2 for some; each output matches and equals
// the same request's output alone (batch invariance).
TEST_F(StructuredOutputTest, ThirtyTwoConcurrentMatchAndEqualAlone) {
  auto schema = Compile({ConstraintKind::kJsonSchema, kSchema, {}});
  auto regex = Compile({ConstraintKind::kRegex, kRegex, {}});
  auto choice = Compile({ConstraintKind::kChoice, "", kChoices});
  std::vector<EngineRequest> requests;
  for (uint32_t i = 0; i < 32; ++i) {
    const auto& grammar = i % 3 == 0 ? schema : i % 3 == 1 ? regex : choice;
    requests.push_back(Constrained(grammar, 100 + i, /*greedy=*/i % 4 == 0));
    requests.back().n = i % 5 == 0 ? 2 : 1;
  }
  auto engine = StartEngine({});
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const EngineRequest& request : requests) streams.push_back(*engine->Submit(request, nullptr));
  // All drained before the lone runs: two engines over one Model must never step at once
  // (the model's activations are the engine thread's alone).
  std::vector<RequestResult> all_batched;
  for (auto& stream : streams) all_batched.push_back(testing_util::Drain(*stream));
  ExpectNoLeaks(*engine);
  engine->Stop();
  auto alone = StartEngine({});
  for (size_t i = 0; i < requests.size(); ++i) {
    const RequestResult& batched = all_batched[i];
    RequestResult single = Run(*alone, requests[i]);
    ASSERT_EQ(batched.choices.size(), static_cast<size_t>(requests[i].n));
    for (const auto& [index, out] : batched.choices) {
      EXPECT_EQ(out.token_ids, single.choices.at(index).token_ids) << "request " << i << " choice " << index;
      EXPECT_EQ(out.finish_reason, FinishReason::kStop) << out.text;
      if (i % 3 == 0) {
        ExpectSchemaValid(out.text);
      } else if (i % 3 == 1) {
        EXPECT_TRUE(std::regex_match(out.text, std::regex(kRegex))) << out.text;
      } else {
        EXPECT_NE(std::find(kChoices.begin(), kChoices.end(), out.text), kChoices.end()) << out.text;
      }
    }
    if (requests[i].n == 2 && !requests[i].sampling.greedy() && i % 3 == 0) {
      EXPECT_NE(batched.choices.at(0).token_ids, batched.choices.at(1).token_ids) << "choices must differ";
    }
  }
}

// A recursive grammar whose masks pass max_mask_work (set tiny here; the default bounds an
// adversarial grammar's walk) fails its own request with that reason, n = 2 included; the
// request beside it, constrained too, completes as it would alone.
TEST_F(StructuredOutputTest, MaskOverItsWorkBoundFailsOnlyItsRequest) {
  ConstraintLimits tight;
  tight.max_mask_work = 100;
  auto costly = CompileConstraint({ConstraintKind::kGrammar, "root ::= x*\nx ::= [a-z] | [a-z] x | [a-z] y\ny ::= x \"b\" | x\n", {}},
                                  tight);
  ASSERT_TRUE(costly.ok()) << costly.status().ToString();
  auto regex = Compile({ConstraintKind::kRegex, kRegex, {}});
  auto engine = StartEngine({});
  EngineRequest bad = Constrained(*costly, 1, /*greedy=*/true);
  bad.n = 2;
  auto bad_stream = *engine->Submit(bad, nullptr);
  auto good_stream = *engine->Submit(Constrained(regex, 2, /*greedy=*/true), nullptr);
  RequestResult failed = testing_util::Drain(*bad_stream);
  RequestResult served = testing_util::Drain(*good_stream);
  EXPECT_EQ(failed.error.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(failed.error.message().find("cannot be followed further"), std::string::npos) << failed.error.ToString();
  ASSERT_TRUE(served.error.ok()) << served.error.ToString();
  EXPECT_TRUE(std::regex_match(served.choices.at(0).text, std::regex(kRegex))) << served.choices.at(0).text;
  EXPECT_EQ(served.choices.at(0).token_ids, Run(*engine, Constrained(regex, 2, true)).choices.at(0).token_ids);
  ExpectNoLeaks(*engine);
}

// A KV pool of a few blocks forces preemption (recompute); the matchers keep their place:
// every output is a valid prefix, and valid JSON when it stopped.
TEST_F(StructuredOutputTest, PreemptionKeepsTheMatcherConsistent) {
  auto grammar = Compile({ConstraintKind::kJsonSchema, kSchema, {}});
  EngineOptions options;
  options.max_num_batched_tokens = 64;
  options.kv_cache_bytes = 32 * model_->kv_layout(16).bytes_per_block();
  // Only validity is checked: a recomputed prefill's logits differ from decode's in the last
  // bits, and inside a masked number or string the allowed tokens are often near-tied, so
  // a preempted request may pick differently from the same request alone (seen now and then).
  auto engine = StartEngine(options);
  std::vector<EngineRequest> requests;
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (uint32_t i = 0; i < 8; ++i) {
    requests.push_back(Constrained(grammar, 300 + i, /*greedy=*/i % 2 == 0));
    requests.back().stop.max_tokens = 150;
    streams.push_back(*engine->Submit(requests.back(), nullptr));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto out = testing_util::Drain(*streams[i]).choices.at(0);
    if (out.finish_reason == FinishReason::kStop) ExpectSchemaValid(out.text);
    EXPECT_TRUE(Matcher(grammar).AcceptBytes(out.text)) << out.text;
  }
  EXPECT_GT(engine->Stats().num_preemptions, 0);
  ExpectNoLeaks(*engine);
}

// A stop string cuts the output; what came before it is a prefix the grammar accepts.
TEST_F(StructuredOutputTest, StopStrings) {
  auto engine = StartEngine({});
  auto grammar = Compile({ConstraintKind::kJsonSchema, kSchema, {}});
  EngineRequest never = Constrained(grammar, 7, /*greedy=*/true);
  never.stop.stop = {"@@@"};
  RequestResult full = Run(*engine, never);
  ExpectSchemaValid(full.choices.at(0).text);
  EngineRequest cut = never;
  cut.stop.stop = {"\"age\""};
  RequestResult result = Run(*engine, cut);
  const auto& out = result.choices.at(0);
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
  EXPECT_EQ(out.text, full.choices.at(0).text.substr(0, full.choices.at(0).text.find("\"age\"")));
  Matcher matcher(grammar);
  EXPECT_TRUE(matcher.AcceptBytes(out.text)) << out.text;
}

// Top logprobs come from the masked distribution: only allowed tokens, summing to ~1.
TEST_F(StructuredOutputTest, LogprobsAreMasked) {
  auto engine = StartEngine({});
  EngineRequest request = Constrained(Compile({ConstraintKind::kChoice, "", {"yes", "no"}}), 1, true);
  request.top_logprobs = 20;
  RequestResult result = Run(*engine, request);
  const auto& out = result.choices.at(0);
  ASSERT_TRUE(out.text == "yes" || out.text == "no") << out.text;
  ASSERT_FALSE(out.logprobs.empty());
  double mass = 0;
  for (const auto& [token, logprob] : out.logprobs[0].top) mass += std::exp(logprob);
  EXPECT_LT(out.logprobs[0].top.size(), 20u);
  EXPECT_NEAR(mass, 1.0, 1e-3);
}

// constraint_start_token_id: the tokens up to that one are free, the rest match.
TEST_F(StructuredOutputTest, ConstraintStartsAfterTheStartToken) {
  auto engine = StartEngine({});
  EngineRequest free = Greedy({1, 365, 300}, 8);
  const std::vector<int32_t> free_ids = Run(*engine, free).choices.at(0).token_ids;
  ASSERT_GE(free_ids.size(), 3u);
  const int32_t start = free_ids[2];
  const size_t num_free = std::find(free_ids.begin(), free_ids.end(), start) - free_ids.begin() + 1;
  EngineRequest request = free;
  request.stop.max_tokens = kMaxTokens;
  request.constraint = Compile({ConstraintKind::kRegex, kRegex, {}});
  request.constraint_start_token_id = start;
  RequestResult result = Run(*engine, request);
  const auto& out = result.choices.at(0);
  ASSERT_GT(out.token_ids.size(), num_free);
  EXPECT_TRUE(std::equal(free_ids.begin(), free_ids.begin() + num_free, out.token_ids.begin()));
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
  const std::vector<std::string> token_bytes = TokenBytesOf(*tokenizer_);
  std::string constrained;
  for (size_t i = num_free; i < out.token_ids.size(); ++i) constrained += token_bytes[out.token_ids[i]];
  EXPECT_TRUE(std::regex_match(constrained, std::regex(kRegex))) << constrained;
}

}  // namespace
}  // namespace surge
