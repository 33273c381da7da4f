// SamplingParams: what a request asks of the sampler (engine/sampler.h says what each
// parameter does and in which order). A header of its own so that the client library
// (engine_client.h) carries the parameters without the sampler.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "base/status.h"

namespace surge {

struct SamplingParams {
  double temperature = 1.0;         // 0: greedy
  int32_t top_k = -1;               // -1 or 0: off
  double top_p = 1.0;               // (0, 1]; 1: off
  double min_p = 0.0;               // [0, 1]; 0: off
  double repetition_penalty = 1.0;  // > 0; 1: off
  double presence_penalty = 0.0;    // [-2, 2], as OpenAI
  double frequency_penalty = 0.0;   // [-2, 2], as OpenAI
  std::optional<uint64_t> seed;     // absent: seeded from std::random_device
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token >= 0, bias in [-100, 100])

  // InvalidArgument naming the first parameter out of range.
  Status Validate() const;
  bool greedy() const;
};

}  // namespace surge
