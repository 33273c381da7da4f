// The autoscaling simulator behind `surge scale simulate`: a load trace (QPS per minute)
// replayed in virtual time through the same PoolAutoscaler / ScalingPolicy / CapacityClasses
// code the actuators run, against a capacity model fitted from `surge bench --json` results.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autoscale/autoscaler.h"
#include "autoscale/planner.h"
#include "base/status.h"

namespace surge::autoscale {

// What one engine does at a given load, from the bench curve (points sorted by throughput):
// it serves up to max_qps; P95 TTFT is interpolated linearly in the served rate between
// measured points (flat below the lightest, extended along the last segment above the
// heaviest), and a backlog adds its wait: queue / (ready * max_qps).
struct CapacityModel {
  std::vector<std::pair<double, double>> ttft_p95_by_qps;  // (served QPS, P95 TTFT s), ascending
  // (served QPS, engine busy fraction), ascending, when every point of the curve measured it;
  // empty: busy = served / max_qps. Batching makes the real curve concave (a half-loaded
  // engine runs smaller batches, not half as many steps).
  std::vector<std::pair<double, double>> busy_by_qps;
  double max_qps = 0;       // the highest measured throughput: saturation
  double slo_qps = 0;       // the most within the SLO (planner's MaxInstanceThroughput)
  std::string slo_source;   // "interpolated between c=32 and c=64"
  double TtftP95(double served_qps_per_instance) const;
  double BusyFraction(double served_qps_per_instance) const;  // in [0, 1]
};

// Fits the model; INVALID_ARGUMENT when no point meets the SLO (the planner's message).
StatusOr<CapacityModel> FitCapacityModel(const std::vector<BenchPoint>& points, double slo_ttft_p95_s);

// A trace: QPS for each minute. "diurnal": the seed day, base_qps at night to peak_qps at the
// busiest hour, following autoscale/examples/diurnal_profile.json's weights (linear between
// hour centres), 1440 minutes. "ramp": 30 min at base, linear to peak over 60, 30 at peak,
// linear back over 60, 30 at base (210). "spike": 30 min at base, 10 at peak, 50 at base (90).
// Otherwise a CSV file: one QPS per line, or "minute,qps" lines (a header line is skipped).
StatusOr<std::vector<double>> MakeTrace(std::string_view name, double base_qps, double peak_qps);
StatusOr<std::vector<double>> ParseTraceCsv(std::string_view text);

struct SimulationOptions {
  Instant start = FromUnixSeconds(1764630000);  // 2025-12-01T23:00:00Z: a Tuesday's local midnight in Berlin
  Duration startup_delay{std::chrono::seconds(60)};  // a new replica's time to ready
  Duration tick{std::chrono::seconds(1)};            // the queue model's step
  Duration interval{std::chrono::seconds(15)};       // how often the policy decides (the file's "interval")
  double slo_ttft_p95_s = 0;                         // a minute meets the SLO when its worst P95 is within
  std::optional<int> fixed_replicas{};               // set: no policy, a fixed fleet of this size
};

struct MinuteSample {
  double demand_qps = 0;
  std::vector<int> ready_by_class;  // at the minute's end
  int num_pending = 0;
  double queue = 0;          // backlog at the minute's end (requests)
  double ttft_p95_s = 0;     // the worst P95 within the minute
  double usd_per_hour = 0;   // replicas (pending included) x their class price, at the minute's end
  bool meets_slo = false;
};

struct SimulationResult {
  std::vector<std::string> class_names;
  std::vector<MinuteSample> minutes;
  int num_minutes_meeting_slo = 0;
  double replica_hours = 0;  // pending replicas count: they are paid for
  double cost_usd = 0;
  int peak_replicas = 0;
  double max_queue = 0;
  double max_ttft_p95_s = 0;
  std::vector<std::string> decisions;  // "12:04 4 -> 8: busy_fraction: ..." when the count changed
};

// Replays `trace` through a PoolAutoscaler built from `pool` (or a fixed fleet).
SimulationResult Simulate(const PoolConfig& pool, const CapacityModel& model, const std::vector<double>& trace,
                          const SimulationOptions& options);

// The fixed fleet sized for the trace's peak: ceil(peak / model.slo_qps).
int FixedFleetForPeak(const CapacityModel& model, const std::vector<double>& trace);

struct SimulationReport {
  std::string trace_name;
  std::string policy_path;
  CapacityModel model;
  SimulationOptions options;
  SimulationResult autoscaled;
  SimulationResult fixed;
  int fixed_replicas = 0;
};

// The JSON summary (with per-minute series) and the self-contained HTML report (inline SVG).
std::string SimulationJson(const SimulationReport& report);
std::string SimulationHtml(const SimulationReport& report);

}  // namespace surge::autoscale
