// A reader of the Prometheus text exposition format 0.0.4: what the alarm evaluator reads
// from its own process's /metrics text each interval.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "obs/alarms/alarm_rules.h"

namespace surge::obs {

struct Sample {
  std::string name;  // as written: "x_bucket", "x_sum", ...
  Labels labels;     // "le" included for buckets
  double value = 0;
};

struct Exposition {
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family name -> "counter", "gauge", "histogram", ...
};

// INVALID_ARGUMENT "line N: ..." for a line that is not a comment, a blank or a sample.
// Timestamps after the value are accepted and ignored.
StatusOr<Exposition> ParseExposition(std::string_view text);

}  // namespace surge::obs
