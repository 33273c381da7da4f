// The capacity planner behind `surge plan`: from `surge bench --json` measurements, a target
// QPS and an SLO, how many instances at what concurrency, and what they cost per month.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace surge::autoscale {

inline constexpr double kHoursPerMonth = 730;  // 8760 / 12
inline constexpr size_t kMaxBenchReportBytes = 64 << 20;

// One load point of a bench report (one round), in seconds and requests per second.
struct BenchPoint {
  std::string label;                  // the round's "point", e.g. "c=8"
  double concurrency = 0;             // clients in flight; for a request-rate round, estimated
  bool concurrency_estimated = false; // by Little's law: throughput * mean E2E
  double request_throughput = 0;      // completed requests per second
  double ttft_p95_s = 0;
  double e2e_p95_s = 0;
  double ttft_median_s = 0;
  double e2e_median_s = 0;
  int64_t num_completed = 0;
  int64_t num_failed = 0;
  // The engine's busy fraction during the round (`server_busy_fraction`, when the bench could
  // read the server's surge_engine_busy_seconds_total).
  std::optional<double> server_busy_fraction;
};

// Parses `surge bench --json` output; errors name the round and field. Refuses a report that
// compares several servers (its rounds are not one instance's curve). Points come back
// sorted by concurrency.
StatusOr<std::vector<BenchPoint>> ParseBenchReport(std::string_view json_text);
StatusOr<std::vector<BenchPoint>> LoadBenchReport(const std::string& path);
// A traffic profile file: a JSON array of 24 non-negative hourly weights, max > 0.
StatusOr<std::vector<double>> LoadHourlyProfile(const std::string& path);
StatusOr<std::vector<double>> ParseHourlyProfile(std::string_view json_text);

struct PlanRequest {
  double target_qps = 0;  // the peak when a profile is given
  double slo_ttft_p95_s = 0;
  std::optional<double> slo_e2e_p95_s;
  std::vector<std::pair<std::string, double>> usd_per_hour;  // (class, price per instance-hour)
  std::vector<double> hourly_weights;  // empty: flat; else 24, hour h gets target * w[h] / max(w)
  double prefix_hit_rate = 0;  // fraction of prompt tokens served from the prefix cache beyond the bench's
  double cache_hit_rate = 0;   // fraction of requests the router's response cache answers
};

// The most one instance sustains within the SLO.
struct InstanceCapacity {
  double qps = 0;
  double concurrency = 0;
  double ttft_p95_s = 0;
  double e2e_p95_s = 0;
  std::string source;  // "measured at c=8" or "interpolated between c=8 and c=16"
};

struct HourPlan {
  int hour = 0;
  double engine_qps = 0;
  int num_instances = 0;
};

struct PlanScenario {
  std::string name;             // "as measured" or "with caching"
  double throughput_factor = 1; // per-instance capacity multiplier from prefix caching
  double instance_qps = 0;      // capacity.qps * throughput_factor
  double peak_engine_qps = 0;   // target_qps * (1 - cache_hit_rate) or target_qps
  int peak_instances = 0;
  double instance_hours_per_day = 0;
  std::vector<HourPlan> hours;  // [24] when a profile is given
  std::vector<std::pair<std::string, double>> usd_per_month;  // per class, all instances in it
};

struct PlanResult {
  InstanceCapacity capacity;
  double prefill_share = 0;  // of a request's engine time, at the lightest measured load
  std::vector<PlanScenario> scenarios;
};

// The per-instance capacity: the highest throughput among the points that meet the SLO (no
// failed requests, P95 TTFT and P95 E2E within it), or between such a point and the next
// heavier one that misses it only on latency: there throughput, concurrency and latencies are
// taken as linear in concurrency and the point where the first latency reaches its SLO is
// used. InvalidArgument when no point meets the SLO, saying how close the best one came.
StatusOr<InstanceCapacity> MaxInstanceThroughput(const std::vector<BenchPoint>& points, double slo_ttft_p95_s,
                                                 std::optional<double> slo_e2e_p95_s);
StatusOr<PlanResult> Plan(const std::vector<BenchPoint>& points, const PlanRequest& request);

// Human-readable and JSON renderings of a plan.
std::string FormatPlan(const PlanResult& plan, const PlanRequest& request);
std::string PlanJson(const PlanResult& plan, const PlanRequest& request);

}  // namespace surge::autoscale
