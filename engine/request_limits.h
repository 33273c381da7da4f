// RequestLimits: the bounds of an EngineRequest's numeric fields as one table -- each
// limit with its name (as the OpenAI API names the field), its bounds and the message a
// request outside them gets. ValidateRequest (request_validation.h) checks every request
// against it, so `surge generate` and `surge serve` refuse the same requests with the
// same words.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "engine/engine_client.h"

namespace surge {

// What the bounds depend on: the model's vocabulary and the engine's options.
struct RequestLimitContext {
  int32_t vocab_size = 0;
  int32_t max_num_seqs = 0;
};

// An interval of values; an infinite end is open. Written as !(inside) where it is
// checked, so that NaN is outside every interval.
struct LimitBounds {
  double min = 0;
  double max = 0;
  bool min_open = false;  // (min, ...: min itself is outside
  bool max_open = false;  // ..., max): max itself is outside
  bool integer = false;   // bounds and values print as integers
  bool Contains(double value) const;
  // ">= 0", "> 0", "in (0, 1]", "in [-1, 512]".
  std::string Describe() const;
};

struct RequestLimit {
  const char* name;  // "max_tokens", "top_p", ...
  double (*value)(const EngineRequest& request);
  LimitBounds (*bounds)(const EngineRequest& request, const RequestLimitContext& context);
};

// Every limit, in the order they are checked.
std::span<const RequestLimit> EngineRequestLimits();

// InvalidArgument "NAME must be BOUNDS, got VALUE" for the first limit `request` breaks.
Status CheckRequestLimits(const EngineRequest& request, const RequestLimitContext& context);

}  // namespace surge
