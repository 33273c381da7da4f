// Random, shared-prefix and multi-turn workloads: prompts built from the common word list,
// sized through the measured tokens-per-word ratio.
#include <algorithm>
#include <cmath>

#include "bench/rng.h"
#include "bench/word_list.h"
#include "bench/workload.h"

namespace surge::bench {
namespace {

constexpr uint64_t kPrefixStream = 0x5052454649585eull;  // "PREFIX": group prefixes

class SyntheticWorkload : public Workload {
 public:
  explicit SyntheticWorkload(const WorkloadConfig& config) : config_(config) {}

  Session MakeSession(uint64_t round_key, int64_t index) const override {
    Rng rng(MixSeed(config_.seed, round_key, static_cast<uint64_t>(index)));
    Session session;
    if (config_.kind == WorkloadKind::kSharedPrefix && config_.prefix_len_tokens > 0) {
      int64_t group = rng.UniformInt(0, config_.num_groups - 1);
      Rng prefix_rng(MixSeed(config_.seed ^ kPrefixStream, round_key, static_cast<uint64_t>(group)));
      session.system_prompt =
          RandomWords(prefix_rng, WordsForTokens(config_.prefix_len_tokens, config_.tokens_per_word));
      session.system_tokens = config_.prefix_len_tokens;
    }
    int64_t num_turns = config_.kind == WorkloadKind::kMultiTurn ? config_.turns : 1;
    for (int64_t t = 0; t < num_turns; ++t) {
      Turn turn;
      turn.prompt_tokens = DrawLength(rng, config_.input);
      turn.max_tokens = DrawLength(rng, config_.output);
      turn.text = RandomWords(rng, WordsForTokens(turn.prompt_tokens, config_.tokens_per_word));
      session.turns.push_back(std::move(turn));
    }
    return session;
  }

 private:
  WorkloadConfig config_;
};

}  // namespace

int64_t DrawLength(Rng& rng, const LengthSpec& spec) {
  double mean = static_cast<double>(spec.mean_tokens);
  int64_t lo = std::max<int64_t>(1, std::llround(mean * (1 - spec.range)));
  int64_t hi = std::max<int64_t>(lo, std::llround(mean * (1 + spec.range)));
  return rng.UniformInt(lo, hi);
}

std::unique_ptr<Workload> MakeSyntheticWorkload(const WorkloadConfig& config) {
  return std::make_unique<SyntheticWorkload>(config);
}

StatusOr<std::unique_ptr<Workload>> MakeWorkload(const WorkloadConfig& config) {
  switch (config.kind) {
    case WorkloadKind::kShareGpt: return LoadShareGptWorkload(config);
    case WorkloadKind::kJsonl: return LoadJsonlWorkload(config);
    default: return MakeSyntheticWorkload(config);
  }
}

}  // namespace surge::bench
