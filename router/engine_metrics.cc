#include "router/engine_metrics.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace surge::router {
namespace {

enum class Field { kNone, kRunning, kWaiting, kKvUsage, kBusy };

// Request counts beyond this are no engine's (and keep the sums far from overflow).
constexpr double kMaxRequests = 1e9;

Field FieldOf(std::string_view name) {
  if (name == "surge_num_requests_running" || name == "vllm:num_requests_running") return Field::kRunning;
  if (name == "surge_num_requests_waiting" || name == "vllm:num_requests_waiting") return Field::kWaiting;
  if (name == "surge_kv_cache_usage_ratio" || name == "vllm:gpu_cache_usage_perc" ||
      name == "vllm:kv_cache_usage_perc") {
    return Field::kKvUsage;
  }
  if (name == "surge_engine_busy_fraction") return Field::kBusy;
  return Field::kNone;
}

// "name{labels} value [timestamp]" -> name and value; false for anything else.
bool ParseSample(std::string_view line, std::string_view* name, double* value) {
  size_t name_end = line.find_first_of("{ ");
  if (name_end == std::string_view::npos || name_end == 0) return false;
  *name = line.substr(0, name_end);
  size_t rest = name_end;
  if (line[name_end] == '{') {
    rest = line.find('}', name_end);
    if (rest == std::string_view::npos) return false;
    ++rest;
  }
  const std::string number(line.substr(rest));
  char* end = nullptr;
  *value = std::strtod(number.c_str(), &end);
  return end != number.c_str();
}

// A value routing can use: finite, a count in [0, kMaxRequests], a fraction in [0, 1].
bool InRange(Field field, double value) {
  if (!std::isfinite(value) || value < 0) return false;
  return field == Field::kKvUsage || field == Field::kBusy ? value <= 1 : value <= kMaxRequests;
}

}  // namespace

StatusOr<EngineLoad> ParseEngineLoad(std::string_view text) {
  double sums[5] = {0, 0, 0, 0, 0};
  int64_t counts[5] = {0, 0, 0, 0, 0};
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line[0] == '#') continue;
    std::string_view name;
    double value = 0;
    if (!ParseSample(line, &name, &value)) continue;
    const Field field = FieldOf(name);
    if (field == Field::kNone) continue;
    if (!InRange(field, value)) {
      return InvalidArgumentError("/metrics: " + std::string(name) + " is " + std::to_string(value) +
                                  (field == Field::kKvUsage || field == Field::kBusy ? ", not a fraction in [0, 1]"
                                                                                     : ", not a request count"));
    }
    sums[static_cast<int>(field)] += value;
    ++counts[static_cast<int>(field)];
  }
  EngineLoad load;
  if (counts[1] > 0) load.num_running = sums[1];
  if (counts[2] > 0) load.num_waiting = sums[2];
  if (counts[3] > 0) load.kv_usage = sums[3] / static_cast<double>(counts[3]);
  if (counts[4] > 0) load.busy_fraction = sums[4] / static_cast<double>(counts[4]);
  return load;
}

}  // namespace surge::router
