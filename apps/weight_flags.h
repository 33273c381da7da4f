// Flags that choose how a model is loaded (--dtype, --quantize, --group-size,
// --int4-lm-head, --mla-attention), shared by `surge serve` and `surge generate`.
#pragma once

#include <cstdint>
#include <string>

#include "base/flags.h"
#include "base/status.h"
#include "model/model.h"

namespace surge {

struct WeightFlags {
  std::string dtype = "f32";
  std::string quantize = "none";
  int64_t group_size = 32;
  bool int4_lm_head = false;
  std::string mla_attention = "absorbed";
};

void RegisterWeightFlags(FlagParser& parser, WeightFlags& flags);

// InvalidArgument naming the flag for an unknown value; Model::Load checks combinations.
StatusOr<LoadOptions> ToLoadOptions(const WeightFlags& flags);

}  // namespace surge
