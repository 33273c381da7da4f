// Speculative decoding: the n-gram proposer, rejection sampling's distribution, and the
// engine's output with speculation on equal to its output with it off (greedy) on the
// bundled stories260K, random Llama and Qwen3 models and the DeepSeek V3 tiny model, with
// preemption, prefix caching and chunked prefill in the mix, at batch 1 and 32.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <type_traits>

#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "engine/sampler.h"
#include "engine/spec_decode/draft_proposer.h"
#include "engine/spec_decode/mtp_proposer.h"
#include "engine/spec_decode/ngram_proposer.h"
#include "engine/spec_decode/proposer.h"
#include "kernels/ops.h"

namespace surge {
namespace {

std::vector<int32_t> Propose(const NgramProposer& proposer, std::vector<int32_t> tokens, int32_t max_tokens) {
  std::vector<int32_t> out = {99};
  proposer.ProposeFor(tokens, max_tokens, out);
  return out;
}

TEST(NgramProposerTest, ProposesWhatFollowedTheMostRecentLongestMatch) {
  const NgramProposer proposer(1, 3);
  // The suffix [7 8] occurred twice; the later one is followed by 5 6.
  EXPECT_EQ(Propose(proposer, {7, 8, 1, 2, 7, 8, 5, 6, 9, 7, 8}, 2), (std::vector<int32_t>{5, 6}));
  // A 3-gram match beats a more recent 1-gram one.
  EXPECT_EQ(Propose(proposer, {1, 2, 3, 4, 3, 9, 1, 2, 3}, 1), (std::vector<int32_t>{4}));
  // Limited by max_tokens and by the end of the sequence.
  EXPECT_EQ(Propose(proposer, {4, 5, 6, 4}, 8), (std::vector<int32_t>{5, 6, 4}));
  EXPECT_EQ(Propose(proposer, {4, 5, 6, 4}, 0), (std::vector<int32_t>{}));
  EXPECT_EQ(Propose(proposer, {1, 2, 3}, 4), (std::vector<int32_t>{}));  // no match
  EXPECT_EQ(Propose(NgramProposer(2, 3), {1, 2, 3, 2}, 4), (std::vector<int32_t>{}));  // only a 1-gram
  EXPECT_EQ(Propose(proposer, {5}, 4), (std::vector<int32_t>{}));
}

TEST(SpeculativeMethodTest, NamesRoundTripAndUnknownIsRefused) {
  for (auto method : {SpeculativeMethod::kNone, SpeculativeMethod::kNgram, SpeculativeMethod::kDraft,
                      SpeculativeMethod::kMtp}) {
    EXPECT_EQ(*ParseSpeculativeMethod(SpeculativeMethodName(method)), method);
  }
  EXPECT_NE(ParseSpeculativeMethod("eagle").status().message().find("unknown speculative method 'eagle'"),
            std::string::npos);
}

// The distribution Sample draws from, computed independently: softmax(logits / T) over
// the top_k most likely tokens.
std::vector<double> TargetDistribution(const std::vector<float>& logits, double temperature, int top_k) {
  std::vector<int> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<double> p(logits.size(), 0.0);
  double total = 0;
  for (int i = 0; i < top_k; ++i) total += p[order[i]] = std::exp(logits[order[i]] / temperature);
  for (double& x : p) x /= total;
  return p;
}

// Rejection sampling keeps the target distribution whatever the draft: chi-square of
// 200,000 verified draws against it, for a likely draft, an unlikely one and one the
// target can never draw (outside top-k).
TEST(RejectionSamplingTest, VerifiedTokensFollowTheTargetDistribution) {
  const std::vector<float> logits = {1.2f, 0.3f, -0.5f, 2.0f, 0.9f, -1.5f, 0.0f, 1.6f};
  SamplingParams params;
  params.temperature = 0.8;
  params.top_k = 6;
  params.seed = 1234;
  const std::vector<double> p = TargetDistribution(logits, params.temperature, params.top_k);
  for (int32_t draft : {3, 6, 5}) {
    SequenceSampler sampler(params, {});
    SamplerScratch scratch;
    constexpr int kDraws = 200000;
    std::vector<int> counts(logits.size(), 0);
    int num_accepted = 0;
    for (int i = 0; i < kDraws; ++i) {
      std::vector<float> row = logits;
      const SequenceSampler::Verdict verdict = sampler.Verify(row, draft, scratch);
      ++counts[verdict.token];
      num_accepted += verdict.accepted;
      EXPECT_EQ(verdict.accepted, verdict.token == draft);
    }
    double chi2 = 0;
    int support = 0;
    for (size_t t = 0; t < p.size(); ++t) {
      if (p[t] == 0) {
        EXPECT_EQ(counts[t], 0) << "token " << t << " is outside top-k";
        continue;
      }
      ++support;
      const double expected = p[t] * kDraws;
      chi2 += (counts[t] - expected) * (counts[t] - expected) / expected;
    }
    // df = 5: P(chi2 > 20.5) = 0.001.
    EXPECT_LT(chi2, 20.5) << "draft " << draft << ": chi-square " << chi2 << " over " << support << " tokens";
    // The draft is taken exactly as often as the target would draw it.
    EXPECT_NEAR(static_cast<double>(num_accepted) / kDraws, p[draft], 0.005) << "draft " << draft;
  }
}

TEST(RejectionSamplingTest, GreedyAcceptsExactlyTheArgmax) {
  SamplingParams params;
  params.temperature = 0;
  SequenceSampler sampler(params, {});
  SamplerScratch scratch;
  std::vector<float> row = {0.1f, 3.0f, 2.9f};
  EXPECT_TRUE(sampler.Verify(row, 1, scratch).accepted);
  row = {0.1f, 3.0f, 2.9f};
  const SequenceSampler::Verdict verdict = sampler.Verify(row, 2, scratch);
  EXPECT_FALSE(verdict.accepted);
  EXPECT_EQ(verdict.token, 1);
}

// Proposes each sequence's true greedy continuation (from a run without speculation),
// with every proposed token replaced by a random one at `noise` rate: drafts are taken
// in full, in part and not at all. Sequences it does not know get random guesses.
class OracleProposer final : public Proposer {
 public:
  OracleProposer(std::map<std::vector<int32_t>, std::vector<int32_t>> continuations, double noise)
      : continuations_(std::move(continuations)), noise_(noise) {}
  SpeculativeMethod method() const override { return SpeculativeMethod::kDraft; }
  void Propose(std::span<const ProposalRequest> requests) override {
    for (const ProposalRequest& request : requests) {
      Sequence& seq = *request.seq;
      seq.draft_token_ids.clear();
      const std::vector<int32_t> prompt(seq.token_ids.begin(), seq.token_ids.begin() + seq.num_prompt_tokens);
      auto it = continuations_.find(prompt);
      for (int32_t i = 0; i < request.max_tokens; ++i) {
        const size_t at = static_cast<size_t>(seq.num_output_tokens() + i);
        const bool known = it != continuations_.end() && at < it->second.size();
        const bool corrupt = std::uniform_real_distribution<double>(0, 1)(rng_) < noise_;
        seq.draft_token_ids.push_back(known && !corrupt ? it->second[at] : std::uniform_int_distribution<int32_t>(3, 511)(rng_));
      }
    }
  }

 private:
  std::map<std::vector<int32_t>, std::vector<int32_t>> continuations_;
  double noise_;
  std::mt19937 rng_{7};
};

inline constexpr char kLlamaTiny[] = "tiny";
inline constexpr char kQwen3Tiny[] = "qwen3-tiny";
using LlamaTinyModel = testing_util::GeneratedDeepseekModel<kLlamaTiny>;
using Qwen3TinyModel = testing_util::GeneratedDeepseekModel<kQwen3Tiny>;
using SpeculationModels = ::testing::Types<testing_util::StoriesModel, LlamaTinyModel, Qwen3TinyModel,
                                           testing_util::DeepseekV3TinyModel>;

template <typename ModelSpec>
class SpeculativeEngineTest : public testing_util::ModelEngineTest<ModelSpec> {
  using Base = testing_util::ModelEngineTest<ModelSpec>;

 protected:
  // Greedy requests; half share a 20-token prefix (prefix caching), half ignore EOS.
  static std::vector<EngineRequest> Requests(int num_requests, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> shared = {1};
    for (int t = 0; t < 20; ++t) shared.push_back(std::uniform_int_distribution<int32_t>(3, 511)(rng));
    std::vector<EngineRequest> requests;
    for (int i = 0; i < num_requests; ++i) {
      std::vector<int32_t> prompt = i % 2 == 0 ? shared : std::vector<int32_t>{1};
      const int num_prompt = std::uniform_int_distribution<int>(1, 40)(rng);
      for (int t = 0; t < num_prompt; ++t) prompt.push_back(std::uniform_int_distribution<int32_t>(3, 511)(rng));
      const int32_t max_tokens = std::uniform_int_distribution<int32_t>(1, 48)(rng);
      requests.push_back(Base::Greedy(prompt, max_tokens, /*ignore_eos=*/i % 2 == 0));
    }
    return requests;
  }

  // All at once (batch up to 32), or one after the other (batch 1).
  static std::vector<std::vector<int32_t>> RunAll(Engine& engine, const std::vector<EngineRequest>& requests,
                                                  bool concurrently) {
    std::vector<std::vector<int32_t>> outputs;
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (const EngineRequest& request : requests) {
      auto stream = engine.Submit(request, nullptr);
      EXPECT_TRUE(stream.ok()) << stream.status().ToString();
      if (!stream.ok()) return outputs;
      streams.push_back(*stream);
      if (!concurrently) outputs.push_back(testing_util::Drain(*streams.back()).choices.at(0).token_ids);
    }
    if (concurrently) {
      for (auto& stream : streams) outputs.push_back(testing_util::Drain(*stream).choices.at(0).token_ids);
    }
    return outputs;
  }

  // A small pool (preemption), small passes (chunked prefill), prefix caching on.
  static EngineOptions Tight(int64_t kv_blocks) {
    EngineOptions options;
    options.block_size = 4;
    options.max_num_batched_tokens = 24;
    options.max_num_seqs = 32;
    const int64_t block_bytes = Base::model_->kv_layout(options.block_size).bytes_per_block();
    options.kv_cache_bytes = kv_blocks * block_bytes;
    return options;
  }

  using Continuations = std::map<std::vector<int32_t>, std::vector<int32_t>>;
  using MakeProposer = std::function<std::shared_ptr<Proposer>(const Continuations&)>;
  struct NamedProposer {
    std::string name;
    MakeProposer make;
    bool mostly_right;  // expect drafts taken, and some not
  };

  void ExpectSameWithSpeculation(bool concurrently) {
    ExpectSameWith(concurrently,
                   {{"ngram", [](const Continuations&) { return std::make_shared<NgramProposer>(1, 3); }, false},
                    {"oracle",
                     [](const Continuations& c) { return std::make_shared<OracleProposer>(c, 0.25); }, true}});
  }

  void ExpectSameWith(bool concurrently, const std::vector<NamedProposer>& proposers) {
    const std::vector<EngineRequest> requests = Requests(32, concurrently ? 11 : 12);
    const int64_t kv_blocks = concurrently ? 96 : 40;
    auto plain = Base::StartEngine(Tight(kv_blocks));
    const std::vector<std::vector<int32_t>> expected = RunAll(*plain, requests, concurrently);
    ASSERT_EQ(expected.size(), requests.size());
    Continuations continuations;
    for (size_t i = 0; i < requests.size(); ++i) continuations[requests[i].prompt_ids] = expected[i];

    for (const NamedProposer& proposer : proposers) {
      EngineOptions options = Tight(kv_blocks);
      options.num_speculative_tokens = 4;
      options.speculative_max_decodes = 64;
      options.proposer = proposer.make(continuations);
      auto engine = Base::StartEngine(options);
      const std::vector<std::vector<int32_t>> outputs = RunAll(*engine, requests, concurrently);
      ASSERT_EQ(outputs.size(), expected.size());
      for (size_t i = 0; i < outputs.size(); ++i) {
        EXPECT_EQ(outputs[i], expected[i]) << "request " << i << " (" << proposer.name << ")";
      }
      const EngineStats stats = engine->Stats();
      EXPECT_GT(stats.spec_decode_num_drafts, 0);
      EXPECT_LE(stats.spec_decode_num_accepted_tokens, stats.spec_decode_num_draft_tokens);
      EXPECT_GT(stats.prefix_cache_hit_tokens, 0);  // the shared prefix was reused
      if (concurrently) EXPECT_GT(stats.num_preemptions, 0) << "the pool is meant to be too small for all at once";
      if (proposer.mostly_right) {  // e.g. the oracle: mostly right, sometimes wrong
        EXPECT_GT(stats.spec_decode_num_accepted_tokens, 0);
        EXPECT_LT(stats.spec_decode_num_accepted_tokens, stats.spec_decode_num_draft_tokens);
      }
      engine->Stop();
      Base::ExpectNoLeaks(*engine);
    }
  }
};

TYPED_TEST_SUITE(SpeculativeEngineTest, SpeculationModels);

// Sampled requests (temperature, top-k/top-p, penalties) take the rejection path: every one
// runs to its length with the invariants checked after each step, and both outcomes occur.
TYPED_TEST(SpeculativeEngineTest, SampledRequestsVerifyByRejection) {
  using Base = testing_util::ModelEngineTest<TypeParam>;
  std::vector<EngineRequest> requests = this->Requests(16, 31);
  for (size_t i = 0; i < requests.size(); ++i) {
    EngineRequest& request = requests[i];
    request.sampling.temperature = 0.7;
    request.sampling.top_k = i % 2 == 0 ? 40 : -1;
    request.sampling.top_p = 0.9;
    request.sampling.frequency_penalty = i % 3 == 0 ? 0.5 : 0.0;
    request.sampling.seed = i;
    request.stop.ignore_eos = true;
  }
  EngineOptions options = this->Tight(96);
  options.num_speculative_tokens = 4;
  options.speculative_max_decodes = 64;
  options.proposer = std::make_shared<NgramProposer>(1, 2);
  auto engine = Base::StartEngine(options);
  const std::vector<std::vector<int32_t>> outputs = this->RunAll(*engine, requests, true);
  ASSERT_EQ(outputs.size(), requests.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(static_cast<int32_t>(outputs[i].size()), requests[i].stop.max_tokens) << "request " << i;
  }
  const EngineStats stats = engine->Stats();
  EXPECT_GT(stats.spec_decode_num_draft_tokens, stats.spec_decode_num_accepted_tokens);
  // A trained model's distributions are peaked enough for sampled drafts to be kept; a
  // random model's are near uniform over 512 ids (p(draft) ~ 1/512).
  if constexpr (std::is_same_v<TypeParam, testing_util::StoriesModel>) EXPECT_GT(stats.spec_decode_num_accepted_tokens, 0);
  engine->Stop();
  Base::ExpectNoLeaks(*engine);
}

// The target as its own draft: batch invariance makes the draft's logits those the target
// computes, however the passes are chunked, so every greedy guess is accepted -- a check
// that the draft's cache follows each sequence exactly through acceptance and rollback
// (and through catch-ups bounded to 8 tokens a step).
TYPED_TEST(SpeculativeEngineTest, TheTargetAsItsOwnDraftIsAlwaysRight) {
  using Base = testing_util::ModelEngineTest<TypeParam>;
  const std::vector<EngineRequest> requests = this->Requests(12, 21);
  EngineOptions options = this->Tight(512);
  options.num_speculative_tokens = 3;
  options.speculative_max_decodes = 64;
  auto plain = Base::StartEngine(options);
  const std::vector<std::vector<int32_t>> expected = this->RunAll(*plain, requests, true);
  auto proposer = DraftModelProposer::Create(*Base::model_, Base::model_->config().vocab_size, 4, 512, /*max_catch_up_tokens=*/8);
  ASSERT_TRUE(proposer.ok()) << proposer.status().ToString();
  options.proposer = std::move(*proposer);
  auto engine = Base::StartEngine(options);
  EXPECT_EQ(this->RunAll(*engine, requests, true), expected);
  const EngineStats stats = engine->Stats();
  EXPECT_GT(stats.spec_decode_num_draft_tokens, 0);
  EXPECT_EQ(stats.spec_decode_num_accepted_tokens, stats.spec_decode_num_draft_tokens);
}

TYPED_TEST(SpeculativeEngineTest, GreedyOutputIsUnchangedAtBatchOne) { this->ExpectSameWithSpeculation(false); }

TYPED_TEST(SpeculativeEngineTest, GreedyOutputIsUnchangedAtBatchThirtyTwo) { this->ExpectSameWithSpeculation(true); }

// Counts the tokens of each pass it runs for the model it wraps.
class PassRecordingExecutor final : public ModelExecutor {
 public:
  explicit PassRecordingExecutor(ModelExecutor& model) : model_(model) {}
  const ModelConfig& config() const override { return model_.config(); }
  KvLayout kv_layout(int32_t block_size, KvDType dtype) const override { return model_.kv_layout(block_size, dtype); }
  void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits, std::span<float> hidden) override {
    pass_tokens.push_back(static_cast<int32_t>(batch.token_ids.size()));
    model_.Run(batch, kv, logits, hidden);
  }
  int64_t linear_weight_bytes() const override { return model_.linear_weight_bytes(); }
  std::string linear_weight_formats() const override { return model_.linear_weight_formats(); }
  std::vector<int32_t> pass_tokens;

 private:
  ModelExecutor& model_;
};

// While several sequences decode, a draft with a long backlog (here 41-token prompts it
// has never seen) catches up at most max_catch_up_tokens per step, a sequence proposing
// nothing until it has; its guesses then are those of a draft that caught up at once.
using StoriesSpeculationTest = testing_util::StoriesEngineTest;
TEST_F(StoriesSpeculationTest, DraftCatchUpIsBoundedWhileOthersDecode) {
  std::mt19937 rng(5);
  std::vector<Sequence> seqs(3);
  for (size_t i = 0; i < seqs.size(); ++i) {
    seqs[i].id = static_cast<SequenceId>(i + 1);
    seqs[i].token_ids.push_back(1);
    for (int t = 0; t < 40; ++t) seqs[i].token_ids.push_back(std::uniform_int_distribution<int32_t>(3, 511)(rng));
    seqs[i].num_prompt_tokens = seqs[i].num_tokens();
    seqs[i].num_computed_tokens = seqs[i].num_tokens() - 1;  // decoding
  }
  PassRecordingExecutor bounded_model(*model_);
  auto bounded = DraftModelProposer::Create(bounded_model, model_->config().vocab_size, 4, 256, 16);
  auto unbounded = DraftModelProposer::Create(*model_, model_->config().vocab_size, 4, 256);
  ASSERT_TRUE(bounded.ok() && unbounded.ok());
  std::vector<ProposalRequest> requests;
  for (Sequence& seq : seqs) requests.push_back({&seq, 3});
  std::vector<bool> proposed(seqs.size(), false);
  int num_delayed = 0;
  for (int step = 0; step < 12; ++step) {
    bounded_model.pass_tokens.clear();
    (*bounded)->Propose(requests);
    std::vector<std::vector<int32_t>> got;
    for (const Sequence& seq : seqs) got.push_back(seq.draft_token_ids);
    ASSERT_FALSE(bounded_model.pass_tokens.empty());
    EXPECT_LE(bounded_model.pass_tokens[0], 16) << "step " << step;
    (*unbounded)->Propose(requests);
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (!got[i].empty()) {
        EXPECT_EQ(got[i], seqs[i].draft_token_ids) << "step " << step << ", sequence " << i;
        proposed[i] = true;
      } else {
        ++num_delayed;
      }
    }
    for (Sequence& seq : seqs) {  // the target takes the first guess (or some token)
      seq.token_ids.push_back(seq.draft_token_ids.empty() ? 7 : seq.draft_token_ids[0]);
      seq.num_computed_tokens = seq.num_tokens() - 1;
    }
  }
  EXPECT_EQ(proposed, std::vector<bool>(seqs.size(), true)) << "every sequence caught up and proposed";
  EXPECT_GE(num_delayed, 3) << "3 x 41 tokens at 16 a step: some steps must go without guesses";
}

// Wraps a real proposer: records each of its proposals (the sequence's tokens, its
// guesses), then replaces each guess by the sequence's true greedy continuation except at
// `noise` rate, so that drafts are taken in full, in part and not at all even where the
// proposer itself is a random model's (the MTP layer of a random DeepSeek is right ~1/512).
class RecordingOracleProposer final : public Proposer {
 public:
  struct Record {
    std::vector<int32_t> tokens;
    std::vector<int32_t> guesses;
  };
  RecordingOracleProposer(std::shared_ptr<Proposer> inner, std::map<std::vector<int32_t>, std::vector<int32_t>> continuations,
                          double noise)
      : inner_(std::move(inner)), continuations_(std::move(continuations)), noise_(noise) {}
  SpeculativeMethod method() const override { return inner_->method(); }
  bool wants_target_hidden() const override { return inner_->wants_target_hidden(); }
  void ObserveTargetHidden(const Sequence& seq, int32_t start_position, std::span<const float> rows) override {
    inner_->ObserveTargetHidden(seq, start_position, rows);
  }
  void Propose(std::span<const ProposalRequest> requests) override {
    inner_->Propose(requests);
    for (const ProposalRequest& request : requests) {
      Sequence& seq = *request.seq;
      if (seq.draft_token_ids.empty()) continue;
      records.push_back({seq.token_ids, seq.draft_token_ids});
      const std::vector<int32_t> prompt(seq.token_ids.begin(), seq.token_ids.begin() + seq.num_prompt_tokens);
      auto it = continuations_.find(prompt);
      for (size_t i = 0; i < seq.draft_token_ids.size(); ++i) {
        const size_t at = static_cast<size_t>(seq.num_output_tokens()) + i;
        const bool keep = std::uniform_real_distribution<double>(0, 1)(rng_) < noise_;
        if (it != continuations_.end() && at < it->second.size() && !keep) seq.draft_token_ids[i] = it->second[at];
      }
    }
  }
  std::vector<Record> records;

 private:
  std::shared_ptr<Proposer> inner_;
  std::map<std::vector<int32_t>, std::vector<int32_t>> continuations_;
  double noise_;
  std::mt19937 rng_{9};
};

// Speculation by DeepSeek-V3's MTP layer, on the V3 tiny model loaded with it.
class MtpEngineTest : public SpeculativeEngineTest<testing_util::DeepseekV3TinyWithMtp> {
 protected:
  using Base = testing_util::ModelEngineTest<testing_util::DeepseekV3TinyWithMtp>;
  static std::shared_ptr<Proposer> MakeMtp() {
    auto proposer = MtpProposer::Create(*Base::model_, 4, 1024);
    EXPECT_TRUE(proposer.ok()) << proposer.status().ToString();
    return std::move(*proposer);
  }

  // The guesses the MTP layer makes for `tokens` computed from scratch, in one pass each:
  // the target's hidden states of positions [0, n - 1), the module's rows over them, then
  // the chained rows.
  static std::vector<int32_t> GuessesFromScratch(std::span<const int32_t> tokens, size_t num_guesses) {
    Model& model = *Base::model_;
    const int32_t n = static_cast<int32_t>(tokens.size());
    const size_t hidden_size = static_cast<size_t>(model.config().hidden_size);
    const size_t vocab = static_cast<size_t>(model.config().vocab_size);
    std::vector<BlockId> table((n + static_cast<int32_t>(num_guesses)) / 4 + 2);
    for (size_t b = 0; b < table.size(); ++b) table[b] = static_cast<BlockId>(b);
    KvStorage target_kv(model.kv_layout(4), static_cast<int32_t>(table.size()));
    std::vector<int32_t> rows(n - 1);
    for (int32_t r = 0; r < n - 1; ++r) rows[r] = r;
    std::vector<float> target_hidden(rows.size() * hidden_size);
    const std::vector<SequenceChunk> target_chunk = {{0, n - 1, 0, table}};
    model.Run({tokens.first(n - 1), target_chunk, {}, rows}, target_kv, {}, target_hidden);
    MtpExecutor& mtp = *model.mtp();
    KvStorage mtp_kv(mtp.kv_layout(4), static_cast<int32_t>(table.size()));
    std::vector<float> logits(vocab), hidden(hidden_size), previous;
    const std::vector<int32_t> last = {n - 2};
    const std::vector<SequenceChunk> mtp_chunk = {{0, n - 1, 0, table}};
    mtp.Run({tokens.subspan(1), mtp_chunk, last, last}, target_hidden, mtp_kv, logits, hidden);
    std::vector<int32_t> guesses = {static_cast<int32_t>(Argmax(logits.data(), static_cast<int64_t>(vocab)))};
    const std::vector<int32_t> first = {0};
    while (guesses.size() < num_guesses) {
      previous = hidden;
      const std::vector<SequenceChunk> chunk = {{0, 1, n - 2 + static_cast<int32_t>(guesses.size()), table}};
      const std::vector<int32_t> token = {guesses.back()};
      mtp.Run({token, chunk, first, first}, previous, mtp_kv, logits, hidden);
      guesses.push_back(static_cast<int32_t>(Argmax(logits.data(), static_cast<int64_t>(vocab))));
    }
    return guesses;
  }
};

// Greedy output with MTP speculation equals the output without, at batch 1 and 32, with
// prefix caching (hit positions have no target hidden state), chunked prefill and
// preemption; alone, and with the oracle making most drafts right.
TEST_F(MtpEngineTest, GreedyOutputIsUnchanged) {
  for (bool concurrently : {false, true}) {
    ExpectSameWith(concurrently,
                   {{"mtp", [](const Continuations&) { return MakeMtp(); }, false},
                    {"mtp+oracle",
                     [](const Continuations& c) { return std::make_shared<RecordingOracleProposer>(MakeMtp(), c, 0.25); },
                     true}});
  }
}

// Every guess the MTP proposer made inside the engine -- through chunked prefill,
// preemption, drafts taken in full, in part and not at all -- is the one the module makes
// over the whole sequence from scratch: its cache and hidden states follow each sequence
// exactly (bit for bit, by batch invariance). Prefix caching off: a hit leaves positions
// without the target's hidden state.
TEST_F(MtpEngineTest, GuessesAreTheModuleRunOverTheWholeSequence) {
  const std::vector<EngineRequest> requests = Requests(24, 41);
  EngineOptions options = Tight(96);
  options.enable_prefix_caching = false;
  auto plain = StartEngine(options);
  const std::vector<std::vector<int32_t>> expected = RunAll(*plain, requests, true);
  plain->Stop();
  std::map<std::vector<int32_t>, std::vector<int32_t>> continuations;
  for (size_t i = 0; i < requests.size(); ++i) continuations[requests[i].prompt_ids] = expected[i];
  auto recorder = std::make_shared<RecordingOracleProposer>(MakeMtp(), continuations, 0.25);
  options.num_speculative_tokens = 4;
  options.speculative_max_decodes = 64;
  options.proposer = recorder;
  auto engine = StartEngine(options);
  EXPECT_EQ(RunAll(*engine, requests, true), expected);
  const EngineStats stats = engine->Stats();
  engine->Stop();
  EXPECT_GT(stats.num_preemptions, 0);
  EXPECT_GT(stats.spec_decode_num_accepted_tokens, 0);
  EXPECT_LT(stats.spec_decode_num_accepted_tokens, stats.spec_decode_num_draft_tokens);
  ASSERT_GT(recorder->records.size(), 50u);
  size_t num_chained = 0;
  for (size_t i = 0; i < recorder->records.size(); ++i) {
    const RecordingOracleProposer::Record& record = recorder->records[i];
    ASSERT_EQ(GuessesFromScratch(record.tokens, record.guesses.size()), record.guesses)
        << "proposal " << i << " of a " << record.tokens.size() << "-token sequence";
    num_chained += record.guesses.size() > 1;
  }
  EXPECT_GT(num_chained, 10u);
}

TEST_F(MtpEngineTest, ModelsWithoutTheLayerAreRefused) {
  auto stories = Model::Load("models/stories260K", nullptr, {.load_mtp = true});
  ASSERT_FALSE(stories.ok());
  EXPECT_NE(stories.status().message().find("no multi-token-prediction layer"), std::string::npos)
      << stories.status().ToString();
  auto plain = Model::Load(testing_util::DeepseekV3TinyModel::Dir(), nullptr);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(MtpProposer::Create(**plain, 4, 16).ok());
}

}  // namespace
}  // namespace surge
