// `surge serve`'s flags into a ServeConfig (apps/serve_runtime.h): each flag's range and name
// checked here, errors naming the flag; the model given first (as `vllm serve MODEL`) or with
// --model; vLLM's names (apps/vllm_flags.h), the Batch API's and speculation's flags too.
#pragma once

#include <string>
#include <vector>

#include "apps/serve_runtime.h"
#include "base/status.h"

namespace surge {

struct ServeArgs {
  bool help = false;
  std::string usage;  // the flags' help text
  ServeConfig config;  // the rest: only when !help
  double drain_timeout_s = 30;
};

// On an error, `exit_code` says what it means: 2 a usage error, 1 a file that is not there
// (the default model not installed, a model id not in the cache, the chat template).
StatusOr<ServeArgs> ParseServeArgs(const std::vector<std::string>& raw_args, int* exit_code);

}  // namespace surge
