#include "router/engine_metrics.h"

#include <cmath>
#include <string>

#include "obs/exposition.h"

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

// A value routing can use: finite, a count in [0, kMaxRequests], a fraction in [0, 1].
bool InRange(Field field, double value) {
  if (!std::isfinite(value) || value < 0) return false;
  return field == Field::kKvUsage || field == Field::kBusy ? value <= 1 : value <= kMaxRequests;
}

}  // namespace

StatusOr<EngineLoad> ParseEngineLoad(std::string_view text) {
  double sums[5] = {0, 0, 0, 0, 0};
  int64_t counts[5] = {0, 0, 0, 0, 0};
  Status status = obs::VisitSamples(text, [&](const obs::Sample& sample) {
    const Field field = FieldOf(sample.name);
    if (field == Field::kNone) return OkStatus();
    if (!InRange(field, sample.value)) {
      return InvalidArgumentError("/metrics: " + sample.name + " is " + std::to_string(sample.value) +
                                  (field == Field::kKvUsage || field == Field::kBusy ? ", not a fraction in [0, 1]"
                                                                                     : ", not a request count"));
    }
    sums[static_cast<int>(field)] += sample.value;
    ++counts[static_cast<int>(field)];
    return OkStatus();
  });
  if (!status.ok()) return status;
  EngineLoad load;
  if (counts[1] > 0) load.num_running = sums[1];
  if (counts[2] > 0) load.num_waiting = sums[2];
  if (counts[3] > 0) load.kv_usage = sums[3] / static_cast<double>(counts[3]);
  if (counts[4] > 0) load.busy_fraction = sums[4] / static_cast<double>(counts[4]);
  return load;
}

}  // namespace surge::router
