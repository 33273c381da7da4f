// The console report: a header naming targets and workload, one table row per round (with
// --compare: A, B and A/B for each point), then the errors by kind with an example cause.
#pragma once

#include <string>

#include "bench/runner.h"

namespace surge::bench {

std::string ConsoleReport(const BenchReport& report);

}  // namespace surge::bench
