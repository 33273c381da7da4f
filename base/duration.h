// Duration strings as configs spell them ("500ms", "30s", "5m", "1h30m"), shared by the
// autoscale policy and the alarm rules (the same spelling Prometheus accepts, plus fractions).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace surge {

// A sequence of number+unit (ms, s, m, h); no bare numbers, no sign. INVALID_ARGUMENT
// quoting the text otherwise.
StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The shortest spelling of `ms` in one unit Prometheus reads: "5m", "30s", "1500ms".
std::string FormatDuration(std::chrono::milliseconds ms);

}  // namespace surge
