// Workloads: what each request asks for. A workload turns (round, index) into a Session —
// one or more turns of prompt text with their output lengths — deterministically, so that
// a seed reproduces a run and the two sides of --compare see identical requests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/config.h"
#include "bench/rng.h"

namespace surge::bench {

struct Turn {
  std::string text;           // the prompt (completions) or the user message (chat)
  int64_t max_tokens = 0;     // 0: not sent (the raw body or the server decides)
  int64_t prompt_tokens = 0;  // the workload's estimate of this turn's own text
};

// One conversation; every workload but multi-turn has exactly one turn.
struct Session {
  std::string system_prompt;  // shared-prefix: a system message (chat) or a leading text (completions)
  int64_t system_tokens = 0;
  std::vector<Turn> turns;    // at least one
  std::string raw_body;       // jsonl: the request body as given (turns[0] holds its estimates)
};

class Workload {
 public:
  virtual ~Workload() = default;
  // The same (round_key, index) always gives the same session; different round keys give
  // different prompts, so that one round never warms the server's prefix cache for the next.
  virtual Session MakeSession(uint64_t round_key, int64_t index) const = 0;
};

// Synthetic workloads (random, shared-prefix, multi-turn) cannot fail; datasets are read
// and validated here (NOT_FOUND, INVALID_ARGUMENT naming the file and the line or entry).
StatusOr<std::unique_ptr<Workload>> MakeWorkload(const WorkloadConfig& config);

// Internal factories, one per file.
std::unique_ptr<Workload> MakeSyntheticWorkload(const WorkloadConfig& config);
StatusOr<std::unique_ptr<Workload>> LoadShareGptWorkload(const WorkloadConfig& config);
StatusOr<std::unique_ptr<Workload>> LoadJsonlWorkload(const WorkloadConfig& config);

// A length drawn from `spec` (uniform over its range, at least 1).
int64_t DrawLength(Rng& rng, const LengthSpec& spec);

}  // namespace surge::bench
