#include "autoscale/simulator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

namespace surge::autoscale {
namespace {

// autoscale/examples/diurnal_profile.json: the seed's day, hour by hour.
constexpr double kDiurnalWeights[24] = {0.02, 0.02, 0.02, 0.02, 0.02, 0.04, 0.10, 0.30, 0.60, 0.90, 1.00, 1.00,
                                        0.95, 0.90, 0.95, 1.00, 0.90, 0.70, 0.50, 0.35, 0.25, 0.15, 0.08, 0.04};
constexpr double kNoCapacityTtftS = 600;  // what a request sees with no ready replica
constexpr size_t kMaxTraceMinutes = 7 * 24 * 60 * 4;
constexpr size_t kMaxDecisionsLogged = 2000;

std::vector<double> DiurnalTrace(double base_qps, double peak_qps) {
  std::vector<double> trace(24 * 60);
  for (size_t minute = 0; minute < trace.size(); ++minute) {
    double hours = minute / 60.0 - 0.5;  // weights are for hour centres
    int h0 = static_cast<int>(std::floor(hours));
    double f = hours - h0;
    double w = kDiurnalWeights[(h0 + 24) % 24] * (1 - f) + kDiurnalWeights[(h0 + 25) % 24] * f;
    trace[minute] = base_qps + (peak_qps - base_qps) * (w - 0.02) / (1.0 - 0.02);
  }
  return trace;
}

void AppendLinear(std::vector<double>* trace, int num_minutes, double from, double to) {
  for (int i = 0; i < num_minutes; ++i) trace->push_back(from + (to - from) * (i + 1) / num_minutes);
}

StatusOr<double> ParseNumber(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return InvalidArgumentError("'" + std::string(text) + "' is not a QPS >= 0");
  }
  return value;
}

std::string ClockText(Duration since_start) {
  int64_t minutes = std::chrono::duration_cast<std::chrono::minutes>(since_start).count();
  char text[32];
  std::snprintf(text, sizeof(text), "%s%02lld:%02lld", minutes >= 1440 ? "+1d " : "",
                static_cast<long long>(minutes / 60 % 24), static_cast<long long>(minutes % 60));
  return text;
}

}  // namespace

double CapacityModel::TtftP95(double qps) const {
  const auto& c = ttft_p95_by_qps;
  if (c.empty()) return 0;
  if (qps <= c.front().first || c.size() == 1) return c.front().second;
  size_t i = 1;
  while (i + 1 < c.size() && qps > c[i].first) ++i;
  double f = (qps - c[i - 1].first) / (c[i].first - c[i - 1].first);
  return std::max(0.0, c[i - 1].second + f * (c[i].second - c[i - 1].second));
}

double CapacityModel::BusyFraction(double qps) const {
  if (max_qps <= 0) return 0;
  if (busy_by_qps.empty()) return std::min(1.0, qps / max_qps);
  // Through (0, 0) and the measured points; flat past the last one.
  double x0 = 0, y0 = 0;
  for (const auto& [x1, y1] : busy_by_qps) {
    if (qps <= x1) return std::clamp(x1 > x0 ? y0 + (qps - x0) / (x1 - x0) * (y1 - y0) : y1, 0.0, 1.0);
    x0 = x1;
    y0 = y1;
  }
  return std::clamp(y0, 0.0, 1.0);
}

StatusOr<CapacityModel> FitCapacityModel(const std::vector<BenchPoint>& points, double slo_ttft_p95_s) {
  ASSIGN_OR_RETURN(InstanceCapacity capacity, MaxInstanceThroughput(points, slo_ttft_p95_s, std::nullopt));
  CapacityModel model;
  model.slo_qps = capacity.qps;
  model.slo_source = capacity.source;
  std::vector<BenchPoint> usable;
  for (const BenchPoint& p : points) {
    if (p.num_failed == 0 && p.request_throughput > 0) usable.push_back(p);
  }
  std::sort(usable.begin(), usable.end(), [](const BenchPoint& a, const BenchPoint& b) { return a.concurrency < b.concurrency; });
  // Past saturation more clients add latency, not throughput: only points that raise the
  // throughput shape the curve, so the served rate maps to one latency.
  bool busy_measured = true;
  for (const BenchPoint& p : usable) {
    if (model.ttft_p95_by_qps.empty() || p.request_throughput > model.ttft_p95_by_qps.back().first) {
      model.ttft_p95_by_qps.emplace_back(p.request_throughput, p.ttft_p95_s);
      busy_measured = busy_measured && p.server_busy_fraction.has_value();
      if (busy_measured) model.busy_by_qps.emplace_back(p.request_throughput, *p.server_busy_fraction);
    }
  }
  if (!busy_measured) model.busy_by_qps.clear();
  model.max_qps = model.ttft_p95_by_qps.back().first;
  return model;
}

StatusOr<std::vector<double>> ParseTraceCsv(std::string_view text) {
  std::vector<double> trace;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos || line.front() == '#') continue;
    size_t comma = line.rfind(',');
    StatusOr<double> qps = ParseNumber(comma == std::string_view::npos ? line : line.substr(comma + 1));
    if (!qps.ok()) {
      if (trace.empty() && line_number == 1) continue;  // a header
      return InvalidArgumentError("trace line " + std::to_string(line_number) + ": " + qps.status().message());
    }
    if (trace.size() == kMaxTraceMinutes) return InvalidArgumentError("trace: more than 4 weeks of minutes");
    trace.push_back(*qps);
  }
  if (trace.empty()) return InvalidArgumentError("trace: no QPS values");
  return trace;
}

StatusOr<std::vector<double>> MakeTrace(std::string_view name, double base_qps, double peak_qps) {
  if (!(base_qps >= 0) || !(peak_qps >= base_qps)) return InvalidArgumentError("need 0 <= base QPS <= peak QPS");
  if (name == "diurnal") return DiurnalTrace(base_qps, peak_qps);
  std::vector<double> trace;
  if (name == "ramp") {
    trace.assign(30, base_qps);
    AppendLinear(&trace, 60, base_qps, peak_qps);
    trace.insert(trace.end(), 30, peak_qps);
    AppendLinear(&trace, 60, peak_qps, base_qps);
    trace.insert(trace.end(), 30, base_qps);
    return trace;
  }
  if (name == "spike") {
    trace.assign(30, base_qps);
    trace.insert(trace.end(), 10, peak_qps);
    trace.insert(trace.end(), 50, base_qps);
    return trace;
  }
  return InvalidArgumentError("--trace: expected diurnal, ramp, spike or a .csv file, got '" + std::string(name) + "'");
}

int FixedFleetForPeak(const CapacityModel& model, const std::vector<double>& trace) {
  double peak = trace.empty() ? 0 : *std::max_element(trace.begin(), trace.end());
  return std::max(1, static_cast<int>(std::ceil(peak / model.slo_qps - 1e-9)));
}

namespace {

// One simulated pool: replicas (by id, with the instant each is ready) on the classes' books.
class PoolSim {
 public:
  PoolSim(const PoolConfig& pool, const CapacityModel& model, const SimulationOptions& options)
      : autoscaler_(pool), model_(model), options_(options) {}

  SimulationResult Run(const std::vector<double>& trace);

 private:
  void Resize(int desired, Instant now, Instant ready_at);
  void Tick(Instant now, double demand_qps, double* worst_ttft_s);
  void Decide(Instant now);
  MinuteSample Sample(double demand_qps, double worst_ttft_s) const;

  PoolAutoscaler autoscaler_;
  const CapacityModel& model_;
  const SimulationOptions& options_;
  std::map<ReplicaId, Instant> replicas_;  // id -> ready at
  int num_ready_ = 0;
  double queue_ = 0;
  double busy_fraction_ = 0;
  double ttft_p95_s_ = 0;
  Instant last_tick_{};
  SimulationResult result_;
};

void PoolSim::Resize(int desired, Instant now, Instant ready_at) {
  CapacityClasses& classes = autoscaler_.classes();
  while (static_cast<int>(replicas_.size()) < desired) {
    std::optional<size_t> cls = classes.PlaceNext(now);
    if (!cls) break;  // every class full: capacity, not an error
    ReplicaId id = classes.Add(*cls, now);
    replicas_[id] = ready_at;
    if (ready_at <= now) classes.MarkReady(id);
  }
  while (static_cast<int>(replicas_.size()) > desired) {
    std::optional<ReplicaId> id = classes.PickForRemoval();
    if (!id) break;
    classes.Remove(*id);
    replicas_.erase(*id);
  }
}

void PoolSim::Tick(Instant now, double demand_qps, double* worst_ttft_s) {
  num_ready_ = 0;
  for (auto& [id, ready_at] : replicas_) {
    if (ready_at > now) continue;
    if (ready_at + options_.tick > now) autoscaler_.classes().MarkReady(id);  // just became ready
    ++num_ready_;
  }
  const double dt_s = std::chrono::duration<double>(options_.tick).count();
  const double capacity_qps = num_ready_ * model_.max_qps;
  const double arrivals = demand_qps * dt_s;
  const double served = std::min(queue_ + arrivals, capacity_qps * dt_s);
  queue_ = std::max(0.0, queue_ + arrivals - served);
  const double per_instance_qps = num_ready_ > 0 ? served / dt_s / num_ready_ : 0;
  busy_fraction_ = model_.BusyFraction(per_instance_qps);
  ttft_p95_s_ = num_ready_ > 0 ? model_.TtftP95(per_instance_qps) + queue_ / capacity_qps : kNoCapacityTtftS;
  *worst_ttft_s = std::max(*worst_ttft_s, ttft_p95_s_);
  result_.replica_hours += replicas_.size() * dt_s / 3600;
  result_.cost_usd += autoscaler_.classes().UsdPerHour() * dt_s / 3600;
}

void PoolSim::Decide(Instant now) {
  PoolMetrics metrics;
  metrics.num_ready_replicas = num_ready_;
  metrics.num_pending_replicas = static_cast<int>(replicas_.size()) - num_ready_;
  if (num_ready_ > 0) {
    metrics.queue_depth_per_replica = queue_ / num_ready_;
    metrics.busy_fraction = busy_fraction_;
    metrics.ttft_p95_s = ttft_p95_s_;
  }
  Decision decision = autoscaler_.Decide(now, metrics);
  int current = static_cast<int>(replicas_.size());
  if (decision.desired_replicas == current) return;
  Resize(decision.desired_replicas, now, now + options_.startup_delay);
  if (result_.decisions.size() < kMaxDecisionsLogged) {
    result_.decisions.push_back(ClockText(now - options_.start) + " " + std::to_string(current) + " -> " +
                                std::to_string(replicas_.size()) + ": " + decision.reason);
  }
}

MinuteSample PoolSim::Sample(double demand_qps, double worst_ttft_s) const {
  const CapacityClasses& classes = autoscaler_.classes();
  MinuteSample sample;
  sample.demand_qps = demand_qps;
  sample.ready_by_class.assign(classes.classes().size(), 0);
  int num_ready = 0;
  for (const auto& [id, ready_at] : replicas_) {
    if (ready_at > last_tick_) continue;
    ++num_ready;
    sample.ready_by_class[*classes.ClassOf(id)] += 1;
  }
  sample.num_pending = static_cast<int>(replicas_.size()) - num_ready;
  sample.queue = queue_;
  sample.ttft_p95_s = worst_ttft_s;
  sample.usd_per_hour = classes.UsdPerHour();
  sample.meets_slo = worst_ttft_s <= options_.slo_ttft_p95_s;
  return sample;
}

SimulationResult PoolSim::Run(const std::vector<double>& trace) {
  for (const CapacityClassConfig& c : autoscaler_.classes().classes()) result_.class_names.push_back(c.name);
  // The day starts with a warm fleet: the fixed size, or the bounds' minimum at the start.
  int initial = options_.fixed_replicas.value_or(autoscaler_.BoundsAt(options_.start).min_replicas);
  Resize(initial, options_.start, options_.start);
  const int64_t ticks_per_minute = std::chrono::minutes(1) / options_.tick;
  const int64_t ticks_per_decision = std::max<int64_t>(1, options_.interval / options_.tick);
  int64_t tick_index = 0;
  for (double demand_qps : trace) {
    double worst_ttft_s = 0;
    for (int64_t i = 0; i < ticks_per_minute; ++i, ++tick_index) {
      last_tick_ = options_.start + tick_index * options_.tick;
      Tick(last_tick_, demand_qps, &worst_ttft_s);
      if (!options_.fixed_replicas && tick_index % ticks_per_decision == 0) Decide(last_tick_);
    }
    MinuteSample sample = Sample(demand_qps, worst_ttft_s);
    result_.num_minutes_meeting_slo += sample.meets_slo ? 1 : 0;
    result_.peak_replicas = std::max(result_.peak_replicas, static_cast<int>(replicas_.size()));
    result_.max_queue = std::max(result_.max_queue, sample.queue);
    result_.max_ttft_p95_s = std::max(result_.max_ttft_p95_s, worst_ttft_s);
    result_.minutes.push_back(std::move(sample));
  }
  return std::move(result_);
}

}  // namespace

SimulationResult Simulate(const PoolConfig& pool, const CapacityModel& model, const std::vector<double>& trace,
                          const SimulationOptions& options) {
  PoolConfig config = pool;
  if (options.fixed_replicas) {  // the fixed fleet is not bounded by the policy's min/max
    config.policy.min_replicas = config.policy.max_replicas = *options.fixed_replicas;
  }
  PoolSim sim(config, model, options);
  return sim.Run(trace);
}

}  // namespace surge::autoscale
