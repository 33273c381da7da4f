// The JSON report (--json FILE, and the data inside the HTML report): the configuration,
// the targets, every metric of every round, and with --compare the A/B ratio of each.
#pragma once

#include <string>

#include "bench/runner.h"

namespace surge::bench {

// Pretty-printed with `indent` spaces (-1: one line). NaN metrics are null.
std::string JsonReport(const BenchReport& report, int indent = 2);

}  // namespace surge::bench
