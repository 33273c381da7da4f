// `surge generate`'s flags and the one engine request they make (the same SamplingParams
// and StopConditions `surge serve` fills from a request body).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/speculative_flags.h"
#include "apps/weight_flags.h"
#include "base/flags.h"
#include "base/status.h"
#include "engine/engine.h"

namespace surge {

struct GenerateFlags {
  std::string model;  // "": kDefaultModelPath
  std::string prompt;
  std::string tokenizer;
  int64_t max_tokens = 128;
  double temperature = 0.0;
  double top_p = 1.0;
  int64_t top_k = -1;
  double min_p = 0.0;
  double repetition_penalty = 1.0;
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  int64_t seed = -1;
  int64_t threads = 0;
  WeightFlags weights;
  SpeculativeFlags speculative;
  std::string kv_cache_dtype = "auto";
  bool ignore_eos = false;
  bool json = false;
  bool help = false;
};

void RegisterGenerateFlags(FlagParser& parser, GenerateFlags& f);
EngineRequest ToRequest(const GenerateFlags& f, std::vector<int32_t> prompt_ids);
// Integer flags the request holds in 32 bits; beyond them a usage error, not a wrap.
Status CheckInt32Flags(const GenerateFlags& f);

}  // namespace surge
