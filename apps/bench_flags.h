// `surge bench`'s flags into a bench::BenchConfig (bench/config.h), which bench::Validate
// checks: --url or --compare URL_A URL_B, the sweep (concurrency or request rate), the
// workload and the report files. Errors name the flag; all are usage errors.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/config.h"

namespace surge {

// `help` set: only `usage` is filled.
Status ParseBenchArgs(std::vector<std::string> args, bench::BenchConfig* config, bool* help, std::string* usage);

}  // namespace surge
