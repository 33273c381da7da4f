// The CSV report (--csv FILE): one row per round with every scalar metric as a column;
// with --compare an extra "A/B" row of ratios after each point's A and B rows.
#pragma once

#include <string>

#include "bench/runner.h"

namespace surge::bench {

std::string CsvReport(const BenchReport& report);

}  // namespace surge::bench
