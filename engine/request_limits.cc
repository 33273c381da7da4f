#include "engine/request_limits.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace surge {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string Format(double value, bool integer) {
  std::ostringstream out;
  if (integer && std::isfinite(value)) {
    out << static_cast<int64_t>(value);
  } else {
    out << value;
  }
  return out.str();
}

LimitBounds Real(double min, double max, bool min_open = false, bool max_open = false) {
  return {min, max, min_open || std::isinf(min), max_open || std::isinf(max), /*integer=*/false};
}
LimitBounds Integer(double min, double max) {
  return {min, max, std::isinf(min), std::isinf(max), /*integer=*/true};
}

// -1 turns logprobs off; k >= 0 asks for k alternatives, at most the whole vocabulary.
LimitBounds LogprobsBounds(const EngineRequest&, const RequestLimitContext& c) {
  return Integer(-1, c.vocab_size);
}

const RequestLimit kLimits[] = {
    {"n", [](const EngineRequest& r) -> double { return r.n; },
     [](const EngineRequest&, const RequestLimitContext& c) { return Integer(1, c.max_num_seqs); }},
    {"prompt_logprobs", [](const EngineRequest& r) -> double { return r.prompt_logprobs; }, LogprobsBounds},
    // max_tokens 0 only scores the prompt (completions' echo with logprobs).
    {"max_tokens", [](const EngineRequest& r) -> double { return r.stop.max_tokens; },
     [](const EngineRequest& r, const RequestLimitContext&) {
       return Integer(r.prompt_logprobs >= 0 ? 0 : 1, kInf);
     }},
    {"top_logprobs", [](const EngineRequest& r) -> double { return r.top_logprobs; }, LogprobsBounds},
    {"temperature", [](const EngineRequest& r) { return r.sampling.temperature; },
     [](const EngineRequest&, const RequestLimitContext&) { return Real(0, kInf); }},
    {"top_k", [](const EngineRequest& r) -> double { return r.sampling.top_k; },
     [](const EngineRequest&, const RequestLimitContext&) {  // -1 and 0: off
       return Integer(-1, std::numeric_limits<int32_t>::max());
     }},
    {"top_p", [](const EngineRequest& r) { return r.sampling.top_p; },
     [](const EngineRequest&, const RequestLimitContext&) { return Real(0, 1, /*min_open=*/true); }},
    {"min_p", [](const EngineRequest& r) { return r.sampling.min_p; },
     [](const EngineRequest&, const RequestLimitContext&) { return Real(0, 1); }},
    {"repetition_penalty", [](const EngineRequest& r) { return r.sampling.repetition_penalty; },
     [](const EngineRequest&, const RequestLimitContext&) { return Real(0, kInf, /*min_open=*/true); }},
    {"presence_penalty", [](const EngineRequest& r) { return r.sampling.presence_penalty; },
     [](const EngineRequest&, const RequestLimitContext&) { return Real(-2, 2); }},
    {"frequency_penalty", [](const EngineRequest& r) { return r.sampling.frequency_penalty; },
     [](const EngineRequest&, const RequestLimitContext&) { return Real(-2, 2); }},
    // -1: the constraint applies from the first token.
    {"constraint_start_token_id", [](const EngineRequest& r) -> double { return r.constraint_start_token_id; },
     [](const EngineRequest&, const RequestLimitContext& c) { return Integer(-kInf, c.vocab_size - 1); }},
};

}  // namespace

bool LimitBounds::Contains(double value) const {
  const bool above_min = min_open ? value > min : value >= min;
  const bool below_max = max_open ? value < max : value <= max;
  return above_min && below_max;
}

std::string LimitBounds::Describe() const {
  if (std::isinf(max)) return (min_open ? "> " : ">= ") + Format(min, integer);
  if (std::isinf(min)) return (max_open ? "< " : "<= ") + Format(max, integer);
  return std::string("in ") + (min_open ? "(" : "[") + Format(min, integer) + ", " + Format(max, integer) +
         (max_open ? ")" : "]");
}

std::span<const RequestLimit> EngineRequestLimits() { return kLimits; }

Status CheckRequestLimits(const EngineRequest& request, const RequestLimitContext& context) {
  for (const RequestLimit& limit : kLimits) {
    const LimitBounds bounds = limit.bounds(request, context);
    const double value = limit.value(request);
    if (!bounds.Contains(value)) {
      return InvalidArgumentError(std::string(limit.name) + " must be " + bounds.Describe() + ", got " +
                                  Format(value, bounds.integer));
    }
  }
  return OkStatus();
}

}  // namespace surge
