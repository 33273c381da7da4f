// The project's one reader of the Prometheus text exposition format 0.0.4: the alarm
// evaluator reads its own process's /metrics with it, the router its engines' /metrics
// (router/engine_metrics.h), benchmarks and tests whatever they scrape.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::obs {

// Sorted label name -> value (a series' identity, with the metric name).
using Labels = std::map<std::string, std::string>;

struct Sample {
  std::string name;  // as written: "x_bucket", "x_sum", ...
  Labels labels;     // "le" included for buckets; values unescaped
  double value = 0;  // "NaN", "+Inf", "-Inf" and out-of-range numbers (1e999: +Inf) read as such
};

struct Exposition {
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family name -> "counter", "gauge", "histogram", ...
};

// INVALID_ARGUMENT "line N: ..." for a line that is not a comment, a blank or a sample.
// Timestamps after the value are accepted and ignored; a trailing '\r' is dropped.
StatusOr<Exposition> ParseExposition(std::string_view text);

// One sample line, `name{a="x",b="y"} value [timestamp]`; false when the line is not one.
bool ParseSampleLine(std::string_view line, Sample* sample);

// Lenient: calls `visit` for each line that is a sample, in order, skipping comments,
// blanks and lines that are not samples (an engine's answer may carry families this
// reader has no use for); returns the first non-OK Status `visit` returns.
Status VisitSamples(std::string_view text, const std::function<Status(const Sample&)>& visit);

}  // namespace surge::obs
