#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge {
namespace {

using ::testing::HasSubstr;

SamplingParams Seeded(uint64_t seed) {
  SamplingParams params;
  params.seed = seed;
  return params;
}

// Draws `num_samples` tokens from the same logits (fresh copy each time).
std::vector<int32_t> Draw(SequenceSampler& sampler, const std::vector<float>& logits,
                          int num_samples) {
  std::vector<int32_t> out;
  std::vector<float> row;
  for (int i = 0; i < num_samples; ++i) {
    row = logits;
    out.push_back(sampler.Sample(row));
  }
  return out;
}

std::vector<float> LogitsOf(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::set<int32_t> Distinct(const std::vector<int32_t>& tokens) {
  return {tokens.begin(), tokens.end()};
}

TEST(SamplerTest, GreedyPicksArgmaxWithTiesToLowestId) {
  SamplingParams params;
  params.temperature = 0;
  SequenceSampler sampler(params, {});
  std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 2.5f};
  EXPECT_EQ(sampler.Sample(logits), 1);
  std::vector<float> all_equal(7, 0.25f);
  EXPECT_EQ(sampler.Sample(all_equal), 0);
}

TEST(SamplerTest, SameSeedSameSamplesDifferentSeedDifferent) {
  std::vector<float> logits = {0.1f, 0.2f, 0.3f, 0.0f, -0.1f, 0.25f, 0.15f, 0.05f};
  SequenceSampler a(Seeded(42), {});
  SequenceSampler b(Seeded(42), {});
  SequenceSampler c(Seeded(43), {});
  std::vector<int32_t> from_a = Draw(a, logits, 200);
  EXPECT_EQ(from_a, Draw(b, logits, 200));
  EXPECT_NE(from_a, Draw(c, logits, 200));
}

// A request's samples must not depend on which other requests share the batch (or the
// scratch buffers): interleaving with another sampler changes nothing.
TEST(SamplerTest, BatchInvariance) {
  std::vector<float> logits = {0.5f, 0.1f, 0.9f, 0.3f, 0.7f};
  SamplingParams params = Seeded(7);
  params.top_p = 0.9;
  SequenceSampler alone(params, {});
  std::vector<int32_t> expected = Draw(alone, logits, 100);

  SequenceSampler mine(params, {});
  SequenceSampler other(Seeded(8), {});
  SamplerScratch shared;
  std::vector<float> other_logits = {3.0f, -1.0f, 0.0f, 2.0f, 1.0f, 0.5f, 0.25f};
  std::vector<int32_t> actual;
  for (int i = 0; i < 100; ++i) {
    std::vector<float> row = other_logits;
    other.Sample(row, shared);
    row = logits;
    actual.push_back(mine.Sample(row, shared));
  }
  EXPECT_EQ(actual, expected);
}

TEST(SamplerTest, EmpiricalDistributionMatchesSoftmax) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f};
  const double temperature = 0.7;
  SamplingParams params = Seeded(2024);
  params.temperature = temperature;
  SequenceSampler sampler(params, {});
  const int num_samples = 20000;
  std::vector<int> counts(logits.size(), 0);
  for (int32_t token : Draw(sampler, logits, num_samples)) ++counts[token];

  double z = 0;
  for (float l : logits) z += std::exp(l / temperature);
  double chi_square = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    double expected = num_samples * std::exp(logits[i] / temperature) / z;
    chi_square += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  // 5 degrees of freedom: P(chi2 > 20.52) = 0.001 for a correct sampler.
  EXPECT_LT(chi_square, 20.52) << "counts far from softmax(logits / T)";
}

TEST(SamplerTest, TopKNeverLeavesTheTopK) {
  const std::vector<float> logits = {0.3f, 2.0f, -1.0f, 1.9f, 0.0f, 1.8f, 0.2f, 1.0f, 0.1f, 0.4f};
  SamplingParams params = Seeded(3);
  params.top_k = 3;
  params.temperature = 5.0;  // flatten, so the rest would be drawn often without top-k
  SequenceSampler sampler(params, {});
  EXPECT_EQ(Distinct(Draw(sampler, logits, 3000)), (std::set<int32_t>{1, 3, 5}));
}

TEST(SamplerTest, TopPKeepsTheMinimalNucleus) {
  // Probabilities by id: 0.3, 0.05, 0.5, 0.15. Sorted: 2 (0.5), 0 (0.3), 3 (0.15), 1 (0.05).
  const std::vector<float> logits = LogitsOf({0.3, 0.05, 0.5, 0.15});
  SamplingParams params = Seeded(11);
  params.top_p = 0.75;  // 0.5 < 0.75 <= 0.8: ids 2 and 0
  SequenceSampler two(params, {});
  std::vector<int32_t> samples = Draw(two, logits, 4000);
  EXPECT_EQ(Distinct(samples), (std::set<int32_t>{0, 2}));
  // Renormalized over the nucleus: P(2) = 0.5 / 0.8.
  double share = std::count(samples.begin(), samples.end(), 2) / 4000.0;
  EXPECT_NEAR(share, 0.625, 0.03);

  params.top_p = 0.85;  // 0.8 < 0.85 <= 0.95: ids 2, 0 and 3
  SequenceSampler three(params, {});
  EXPECT_EQ(Distinct(Draw(three, logits, 4000)), (std::set<int32_t>{0, 2, 3}));

  params.top_p = 0.1;  // always at least the most likely token
  SequenceSampler one(params, {});
  EXPECT_EQ(Distinct(Draw(one, logits, 100)), (std::set<int32_t>{2}));
}

// 1000 equal logits and top_p = 0.5: exactly the 500 lowest ids (ties sort by id),
// found through several rounds of the incremental sort.
TEST(SamplerTest, TopPOverLargeVocabulary) {
  const std::vector<float> logits(1000, 0.0f);
  SamplingParams params = Seeded(5);
  params.top_p = 0.5;
  SequenceSampler sampler(params, {});
  std::vector<int32_t> samples = Draw(sampler, logits, 5000);
  EXPECT_LT(*std::max_element(samples.begin(), samples.end()), 500);
  EXPECT_GT(*std::max_element(samples.begin(), samples.end()), 400);
}

// The nucleus by definition: sort everything, keep while the mass before is < top_p.
std::set<int32_t> ReferenceNucleus(const std::vector<float>& logits, double temperature,
                                   double top_p, std::map<int32_t, double>* probs) {
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  const float max_logit = logits[order[0]];
  double total = 0;
  for (float l : logits) total += std::exp((l - max_logit) / temperature);
  std::set<int32_t> nucleus;
  double mass = 0, kept = 0;
  for (int32_t token : order) {
    if (mass >= top_p * total) break;
    double weight = std::exp((logits[token] - max_logit) / temperature);
    mass += weight;
    (*probs)[token] = weight;
    nucleus.insert(token);
  }
  for (auto& [token, p] : *probs) kept += p;
  for (auto& [token, p] : *probs) p /= kept;
  return nucleus;
}

// Random vocabularies of 5000 with peaks spread over ~20 nats and masked (-inf) tokens,
// against the sort-everything reference: every sample lies in the nucleus, and every
// nucleus token likely enough to be seen is seen.
TEST(SamplerTest, TopPMatchesReferenceOnRandomLogits) {
  std::mt19937 rng(77);
  std::normal_distribution<float> noise(0.0f, 1.5f);
  std::uniform_real_distribution<float> peak(0.0f, 20.0f);
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<float> logits(5000);
    for (float& l : logits) l = noise(rng);
    for (int i = 0; i < 40; ++i) logits[rng() % logits.size()] = peak(rng);
    for (int i = 0; i < 100; ++i) logits[rng() % logits.size()] = -INFINITY;
    SamplingParams params = Seeded(trial);
    params.temperature = 0.3 + 0.25 * (trial % 6);
    params.top_p = trial % 2 ? 0.9 : 0.6;
    std::map<int32_t, double> probs;
    std::set<int32_t> nucleus = ReferenceNucleus(logits, params.temperature, params.top_p, &probs);
    SequenceSampler sampler(params, {});
    std::set<int32_t> seen = Distinct(Draw(sampler, logits, 3000));
    for (int32_t token : seen) EXPECT_TRUE(nucleus.count(token)) << "trial " << trial;
    for (auto [token, p] : probs) {
      if (p > 0.005) {
        EXPECT_TRUE(seen.count(token)) << "trial " << trial << " token " << token;
      }
    }
  }
}

TEST(SamplerTest, TopKThenTopP) {
  // Top-2 of {0.4, 0.3, 0.2, 0.1} renormalizes to {4/7, 3/7}; top_p 0.5 keeps id 0 only.
  const std::vector<float> logits = LogitsOf({0.4, 0.3, 0.2, 0.1});
  SamplingParams params = Seeded(9);
  params.top_k = 2;
  params.top_p = 0.5;
  SequenceSampler sampler(params, {});
  EXPECT_EQ(Distinct(Draw(sampler, logits, 500)), (std::set<int32_t>{0}));
}

TEST(SamplerTest, MinPCutOff) {
  const std::vector<float> logits = LogitsOf({0.5, 0.3, 0.15, 0.05});
  SamplingParams params = Seeded(13);
  params.min_p = 0.2;  // threshold 0.2 * 0.5 = 0.1: drops 0.05
  SequenceSampler low(params, {});
  EXPECT_EQ(Distinct(Draw(low, logits, 4000)), (std::set<int32_t>{0, 1, 2}));
  params.min_p = 0.5;  // threshold 0.25: keeps 0.5 and 0.3
  SequenceSampler high(params, {});
  EXPECT_EQ(Distinct(Draw(high, logits, 4000)), (std::set<int32_t>{0, 1}));
}

TEST(SamplerTest, RepetitionPenaltyCoversPromptAndOutput) {
  SamplingParams params;
  params.repetition_penalty = 2.0;
  std::vector<int32_t> prompt = {0, 1, 1, 9999};  // 9999: outside the logits, ignored
  SequenceSampler sampler(params, prompt);
  sampler.Accept(1);
  sampler.Accept(3);
  sampler.Accept(3);
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f};
  sampler.ApplyPenalties(logits);
  // Prompt 0: 2 / 2. Prompt and output 1: -1 * 2, once. Output 3: 3 / 2. Others untouched.
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -2.0f, 0.5f, 1.5f, -2.0f}));
}

TEST(SamplerTest, FrequencyAndPresencePenaltiesCoverOutputOnly) {
  SamplingParams params;
  params.frequency_penalty = 0.5;
  params.presence_penalty = 0.25;
  SequenceSampler sampler(params, std::vector<int32_t>{0, 2});
  sampler.Accept(1);
  sampler.Accept(3);
  sampler.Accept(3);
  sampler.Accept(3);
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f};
  sampler.ApplyPenalties(logits);
  // 1: -1 - 0.5 * 1 - 0.25. 3: 3 - 0.5 * 3 - 0.25. Prompt tokens 0 and 2 untouched.
  EXPECT_EQ(logits, (std::vector<float>{2.0f, -1.75f, 0.5f, 1.25f, -2.0f}));
}

TEST(SamplerTest, AllPenaltiesInOrderAndGreedySeesThem) {
  SamplingParams params;
  params.temperature = 0;
  params.repetition_penalty = 2.0;
  params.frequency_penalty = 0.5;
  params.presence_penalty = 0.25;
  SequenceSampler sampler(params, std::vector<int32_t>{0, 1});
  sampler.Accept(1);
  sampler.Accept(3);
  sampler.Accept(3);
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f};
  std::vector<float> copy = logits;
  sampler.ApplyPenalties(copy);
  // Repetition first (3 -> 1.5), then 1.5 - 0.5 * 2 - 0.25.
  EXPECT_EQ(copy, (std::vector<float>{1.0f, -2.75f, 0.5f, 0.25f, -2.0f}));
  EXPECT_EQ(sampler.Sample(logits), 0);  // id 3 led before the penalties
}

TEST(SamplerTest, LogitBiasComesFirstAndSteersGreedyAndSampling) {
  SamplingParams params;
  params.temperature = 0;
  params.repetition_penalty = 2.0;
  params.logit_bias = {{2, 3.0f}, {9999, 50.0f}};  // 9999: outside the logits, ignored
  SequenceSampler greedy(params, std::vector<int32_t>{2});
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f};
  std::vector<float> copy = logits;
  greedy.ApplyPenalties(copy);
  // Bias first (0.5 + 3), then the repetition penalty on the prompt token (3.5 / 2).
  EXPECT_EQ(copy, (std::vector<float>{2.0f, -1.0f, 1.75f, 3.0f, -2.0f}));
  params.repetition_penalty = 1.0;
  params.logit_bias = {{4, 100.0f}};
  std::vector<float> forced = logits;
  EXPECT_EQ(SequenceSampler(params, {}).Sample(forced), 4);
  params.temperature = 1.0;
  params.seed = 3;
  params.logit_bias = {{0, -100.0f}, {3, -100.0f}};
  SequenceSampler sampled(params, {});
  for (int i = 0; i < 200; ++i) {
    std::vector<float> row = logits;
    const int32_t token = sampled.Sample(row);
    EXPECT_NE(token, 0);
    EXPECT_NE(token, 3);
  }
}

TEST(SamplerTest, TokenCountsGrow) {
  TokenCounts counts;
  for (int32_t round = 0; round < 3; ++round) {
    for (int32_t token = 0; token < 1000; token += 7) counts.Add(token);
  }
  EXPECT_EQ(counts.tokens().size(), 143u);
  EXPECT_EQ(counts.Count(0), 3);
  EXPECT_EQ(counts.Count(994), 3);
  EXPECT_EQ(counts.Count(1), 0);
  EXPECT_EQ(TokenCounts().Count(5), 0);
}

TEST(SamplerTest, LogProbs) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  PositionLogProbs out;
  ComputeLogProbs(logits, 2, 3, &out);
  const double z = std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0));
  EXPECT_EQ(out.chosen.token, 2);
  EXPECT_NEAR(out.chosen.logprob, 2.0 - z, 1e-6);
  ASSERT_EQ(out.top.size(), 3u);
  EXPECT_EQ(out.top[0].token, 1);  // tie with 3: lower id first
  EXPECT_EQ(out.top[1].token, 3);
  EXPECT_EQ(out.top[2].token, 2);
  EXPECT_NEAR(out.top[0].logprob, 3.0 - z, 1e-6);
  ComputeLogProbs(logits, 0, 10, &out);  // more than the vocabulary: all of it
  EXPECT_EQ(out.top.size(), 4u);
  EXPECT_EQ(out.top.back().token, 0);
}

TEST(SamplerTest, ValidateNamesTheParameter) {
  EXPECT_TRUE(SamplingParams().Validate().ok());
  struct Case {
    void (*edit)(SamplingParams&);
    const char* name;
  };
  const Case cases[] = {
      {[](SamplingParams& p) { p.temperature = -0.5; }, "temperature must be >= 0, got -0.5"},
      {[](SamplingParams& p) { p.temperature = NAN; }, "temperature"},
      {[](SamplingParams& p) { p.top_k = -2; }, "top_k"},
      {[](SamplingParams& p) { p.top_p = 0; }, "top_p must be in (0, 1]"},
      {[](SamplingParams& p) { p.top_p = 1.5; }, "top_p"},
      {[](SamplingParams& p) { p.min_p = -0.1; }, "min_p must be in [0, 1]"},
      {[](SamplingParams& p) { p.min_p = 1.1; }, "min_p"},
      {[](SamplingParams& p) { p.repetition_penalty = 0; }, "repetition_penalty must be > 0"},
      {[](SamplingParams& p) { p.presence_penalty = 2.5; }, "presence_penalty must be in [-2, 2]"},
      {[](SamplingParams& p) { p.frequency_penalty = -3; }, "frequency_penalty must be in [-2, 2]"},
      {[](SamplingParams& p) { p.logit_bias = {{3, 100.5f}}; }, "logit_bias must be in [-100, 100]"},
      {[](SamplingParams& p) { p.logit_bias = {{-1, 1.0f}}; }, "logit_bias token must be >= 0"},
  };
  for (const Case& c : cases) {
    SamplingParams params;
    c.edit(params);
    Status status = params.Validate();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(status.message(), HasSubstr(c.name));
  }
}

}  // namespace
}  // namespace surge
