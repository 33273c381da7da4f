#include "engine/sampling_params.h"

#include <cmath>
#include <sstream>
#include <string>

namespace surge {
namespace {

// vLLM's _SAMPLING_EPS: temperatures below it are treated as greedy.
constexpr double kGreedyTemperature = 1e-5;

std::string Format(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

Status OutOfRange(const char* name, const char* range, double value) {
  return InvalidArgumentError(std::string(name) + " must be " + range + ", got " + Format(value));
}

}  // namespace

Status SamplingParams::Validate() const {
  // Written as !(in range) so that NaN fails too.
  if (!(temperature >= 0 && std::isfinite(temperature))) {
    return OutOfRange("temperature", ">= 0", temperature);
  }
  if (top_k < -1) return OutOfRange("top_k", "-1 or 0 (off) or positive", top_k);
  if (!(top_p > 0 && top_p <= 1)) return OutOfRange("top_p", "in (0, 1]", top_p);
  if (!(min_p >= 0 && min_p <= 1)) return OutOfRange("min_p", "in [0, 1]", min_p);
  if (!(repetition_penalty > 0 && std::isfinite(repetition_penalty))) {
    return OutOfRange("repetition_penalty", "> 0", repetition_penalty);
  }
  if (!(presence_penalty >= -2 && presence_penalty <= 2)) {
    return OutOfRange("presence_penalty", "in [-2, 2]", presence_penalty);
  }
  if (!(frequency_penalty >= -2 && frequency_penalty <= 2)) {
    return OutOfRange("frequency_penalty", "in [-2, 2]", frequency_penalty);
  }
  for (const auto& [token, bias] : logit_bias) {
    if (token < 0) return OutOfRange("logit_bias token", ">= 0", token);
    if (!(bias >= -100 && bias <= 100)) return OutOfRange("logit_bias", "in [-100, 100]", bias);
  }
  return OkStatus();
}

bool SamplingParams::greedy() const { return temperature < kGreedyTemperature; }

}  // namespace surge
