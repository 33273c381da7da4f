#include "autoscale/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "autoscale/read_file.h"

namespace surge::autoscale {
namespace {

using Json = nlohmann::json;

std::string Fixed(double value, int digits = 3) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
  return buffer;
}

// A number at round[key] or round[key][sub]; errors name the round and field.
StatusOr<double> Field(const Json& round, size_t index, const std::string& key, const char* sub = nullptr) {
  std::string name = sub ? key + "." + sub : key;
  auto error = [&](const std::string& what) {
    return InvalidArgumentError("bench report: rounds[" + std::to_string(index) + "]." + name + ": " + what);
  };
  auto it = round.find(key);
  if (it == round.end()) return error("missing");
  const Json* value = &*it;
  if (sub) {
    if (!value->is_object() || !value->contains(sub)) return error("missing");
    value = &(*value)[sub];
  }
  if (!value->is_number()) return error(value->is_null() ? "null (no successful requests?)" : "not a number");
  double number = value->get<double>();
  if (!std::isfinite(number) || number < 0) return error("must be a finite number >= 0");
  return number;
}

StatusOr<BenchPoint> ParseRound(const Json& round, size_t index) {
  if (!round.is_object()) return InvalidArgumentError("bench report: rounds[" + std::to_string(index) + "]: not an object");
  BenchPoint p;
  p.label = round.value("point", std::string("round ") + std::to_string(index));
  ASSIGN_OR_RETURN(double completed, Field(round, index, "completed"));
  ASSIGN_OR_RETURN(double failed, Field(round, index, "failed"));
  p.num_completed = static_cast<int64_t>(completed);
  p.num_failed = static_cast<int64_t>(failed);
  bool fixed_concurrency = round.contains("concurrency") && !round["concurrency"].is_null();
  if (fixed_concurrency) {
    ASSIGN_OR_RETURN(p.concurrency, Field(round, index, "concurrency"));
  }
  if (p.num_completed == 0) {
    p.num_failed = std::max<int64_t>(p.num_failed, 1);  // nothing measured: cannot meet any SLO
    return p;
  }
  ASSIGN_OR_RETURN(p.request_throughput, Field(round, index, "request_throughput"));
  ASSIGN_OR_RETURN(double ttft_p95_ms, Field(round, index, "ttft_ms", "p95"));
  ASSIGN_OR_RETURN(double ttft_median_ms, Field(round, index, "ttft_ms", "median"));
  ASSIGN_OR_RETURN(double e2e_p95_ms, Field(round, index, "e2e_latency_ms", "p95"));
  ASSIGN_OR_RETURN(double e2e_median_ms, Field(round, index, "e2e_latency_ms", "median"));
  p.ttft_p95_s = ttft_p95_ms / 1000;
  p.ttft_median_s = ttft_median_ms / 1000;
  p.e2e_p95_s = e2e_p95_ms / 1000;
  p.e2e_median_s = e2e_median_ms / 1000;
  if (auto busy = round.find("server_busy_fraction"); busy != round.end() && !busy->is_null()) {
    if (!busy->is_number() || busy->get<double>() < 0 || busy->get<double>() > 1) {
      return InvalidArgumentError("bench report: rounds[" + std::to_string(index) +
                                  "].server_busy_fraction: not a number in [0, 1]");
    }
    p.server_busy_fraction = busy->get<double>();
  }
  if (!fixed_concurrency) {
    ASSIGN_OR_RETURN(double e2e_mean_ms, Field(round, index, "e2e_latency_ms", "mean"));
    p.concurrency = p.request_throughput * e2e_mean_ms / 1000;  // Little's law
    p.concurrency_estimated = true;
  }
  return p;
}

bool MeetsSlo(const BenchPoint& p, double slo_ttft, std::optional<double> slo_e2e) {
  return p.num_failed == 0 && p.ttft_p95_s <= slo_ttft && (!slo_e2e || p.e2e_p95_s <= *slo_e2e);
}

// Fraction f in (0, 1) of the way from a (meets) to b (misses on latency only) where the
// first latency reaches its SLO.
double CrossingFraction(const BenchPoint& a, const BenchPoint& b, double slo_ttft, std::optional<double> slo_e2e) {
  double f = 1;
  if (b.ttft_p95_s > slo_ttft) f = std::min(f, (slo_ttft - a.ttft_p95_s) / (b.ttft_p95_s - a.ttft_p95_s));
  if (slo_e2e && b.e2e_p95_s > *slo_e2e) f = std::min(f, (*slo_e2e - a.e2e_p95_s) / (b.e2e_p95_s - a.e2e_p95_s));
  return std::clamp(f, 0.0, 1.0);
}

double Lerp(double a, double b, double f) { return a + f * (b - a); }

}  // namespace

StatusOr<std::vector<BenchPoint>> ParseBenchReport(std::string_view json_text) {
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgumentError("bench report: not valid JSON (expected `surge bench --json` output)");
  if (!root.is_object() || root.value("tool", "") != "surge bench") {
    return InvalidArgumentError("bench report: not a `surge bench --json` report (no \"tool\": \"surge bench\")");
  }
  const Json& rounds = root.value("rounds", Json());
  if (!rounds.is_array() || rounds.empty()) return InvalidArgumentError("bench report: no rounds");
  std::set<std::string> targets;
  std::vector<BenchPoint> points;
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (rounds[i].is_object()) targets.insert(rounds[i].value("url", std::string()));
    ASSIGN_OR_RETURN(BenchPoint point, ParseRound(rounds[i], i));
    points.push_back(std::move(point));
  }
  if (targets.size() > 1) {
    return InvalidArgumentError("bench report: compares " + std::to_string(targets.size()) +
                                " servers; plan needs the rounds of one (rerun surge bench against one URL)");
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const BenchPoint& a, const BenchPoint& b) { return a.concurrency < b.concurrency; });
  return points;
}

StatusOr<std::vector<BenchPoint>> LoadBenchReport(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kMaxBenchReportBytes, "bench report"));
  StatusOr<std::vector<BenchPoint>> points = ParseBenchReport(text);
  if (!points.ok()) return points.status().WithContext(path);
  return points;
}

StatusOr<std::vector<double>> ParseHourlyProfile(std::string_view json_text) {
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  auto error = InvalidArgumentError("profile: expected a JSON array of 24 non-negative hourly weights, max > 0");
  if (root.is_discarded() || !root.is_array() || root.size() != 24) return error;
  std::vector<double> weights;
  for (const Json& w : root) {
    if (!w.is_number() || !std::isfinite(w.get<double>()) || w.get<double>() < 0) return error;
    weights.push_back(w.get<double>());
  }
  if (*std::max_element(weights.begin(), weights.end()) <= 0) return error;
  return weights;
}

StatusOr<std::vector<double>> LoadHourlyProfile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, 1 << 20, "profile"));
  StatusOr<std::vector<double>> weights = ParseHourlyProfile(text);
  if (!weights.ok()) return weights.status().WithContext(path);
  return weights;
}

StatusOr<InstanceCapacity> MaxInstanceThroughput(const std::vector<BenchPoint>& points, double slo_ttft,
                                                 std::optional<double> slo_e2e) {
  std::optional<InstanceCapacity> best;
  auto offer = [&](InstanceCapacity c) {
    if (!best || c.qps > best->qps) best = std::move(c);
  };
  for (size_t i = 0; i < points.size(); ++i) {
    const BenchPoint& a = points[i];
    if (!MeetsSlo(a, slo_ttft, slo_e2e)) continue;
    offer({a.request_throughput, a.concurrency, a.ttft_p95_s, a.e2e_p95_s, "measured at " + a.label});
    if (i + 1 == points.size()) continue;
    const BenchPoint& b = points[i + 1];
    if (b.num_failed > 0 || MeetsSlo(b, slo_ttft, slo_e2e)) continue;
    double f = CrossingFraction(a, b, slo_ttft, slo_e2e);
    offer({Lerp(a.request_throughput, b.request_throughput, f), Lerp(a.concurrency, b.concurrency, f),
           Lerp(a.ttft_p95_s, b.ttft_p95_s, f), Lerp(a.e2e_p95_s, b.e2e_p95_s, f),
           "interpolated between " + a.label + " and " + b.label});
  }
  if (best && best->qps > 0) return *best;
  const BenchPoint* fastest = nullptr;
  for (const BenchPoint& p : points) {
    if (p.num_completed > 0 && (!fastest || p.ttft_p95_s < fastest->ttft_p95_s)) fastest = &p;
  }
  std::string slo = "P95 TTFT <= " + Fixed(slo_ttft) + " s" + (slo_e2e ? ", P95 E2E <= " + Fixed(*slo_e2e) + " s" : "");
  if (!fastest) return InvalidArgumentError("no measured point meets the SLO (" + slo + "): no round completed a request");
  return InvalidArgumentError("no measured point meets the SLO (" + slo + "): the lowest P95 TTFT measured is " +
                              Fixed(fastest->ttft_p95_s) + " s (P95 E2E " + Fixed(fastest->e2e_p95_s) + " s, " +
                              std::to_string(fastest->num_failed) + " failed) at " + fastest->label +
                              "; measure lighter loads or relax the SLO");
}

namespace {

PlanScenario Scenario(std::string name, const InstanceCapacity& capacity, double factor, double peak_engine_qps,
                      const PlanRequest& request) {
  PlanScenario s;
  s.name = std::move(name);
  s.throughput_factor = factor;
  s.instance_qps = capacity.qps * factor;
  s.peak_engine_qps = peak_engine_qps;
  auto instances = [&](double qps) { return qps <= 0 ? 0 : static_cast<int>(std::ceil(qps / s.instance_qps - 1e-9)); };
  s.peak_instances = instances(peak_engine_qps);
  if (request.hourly_weights.empty()) {
    s.instance_hours_per_day = 24.0 * s.peak_instances;
  } else {
    double max_weight = *std::max_element(request.hourly_weights.begin(), request.hourly_weights.end());
    for (int h = 0; h < 24; ++h) {
      double qps = peak_engine_qps * request.hourly_weights[static_cast<size_t>(h)] / max_weight;
      s.hours.push_back({h, qps, instances(qps)});
      s.instance_hours_per_day += s.hours.back().num_instances;
    }
  }
  for (const auto& [name_of_class, price] : request.usd_per_hour) {
    s.usd_per_month.emplace_back(name_of_class, s.instance_hours_per_day / 24 * kHoursPerMonth * price);
  }
  return s;
}

}  // namespace

StatusOr<PlanResult> Plan(const std::vector<BenchPoint>& points, const PlanRequest& r) {
  if (!(r.target_qps > 0)) return InvalidArgumentError("--target-qps must be > 0");
  if (!(r.slo_ttft_p95_s > 0)) return InvalidArgumentError("--slo-ttft-p95 must be > 0 seconds");
  if (r.slo_e2e_p95_s && !(*r.slo_e2e_p95_s > 0)) return InvalidArgumentError("--slo-e2e-p95 must be > 0 seconds");
  if (!(r.prefix_hit_rate >= 0 && r.prefix_hit_rate < 1)) return InvalidArgumentError("--prefix-hit-rate must be in [0, 1)");
  if (!(r.cache_hit_rate >= 0 && r.cache_hit_rate < 1)) return InvalidArgumentError("--cache-hit-rate must be in [0, 1)");
  if (!r.hourly_weights.empty() && r.hourly_weights.size() != 24) return InvalidArgumentError("profile: need 24 hourly weights");
  PlanResult plan;
  ASSIGN_OR_RETURN(plan.capacity, MaxInstanceThroughput(points, r.slo_ttft_p95_s, r.slo_e2e_p95_s));
  // At the lightest load TTFT is nearly all prefill and E2E the whole request: their ratio
  // estimates the share of engine time a prefix-cache hit can save.
  for (const BenchPoint& p : points) {
    if (p.num_completed > 0 && p.e2e_median_s > 0) {
      plan.prefill_share = std::clamp(p.ttft_median_s / p.e2e_median_s, 0.0, 1.0);
      break;
    }
  }
  plan.scenarios.push_back(Scenario("as measured", plan.capacity, 1, r.target_qps, r));
  if (r.prefix_hit_rate > 0 || r.cache_hit_rate > 0) {
    double factor = 1 / (1 - plan.prefill_share * r.prefix_hit_rate);
    plan.scenarios.push_back(Scenario("with caching", plan.capacity, factor, r.target_qps * (1 - r.cache_hit_rate), r));
  }
  return plan;
}

}  // namespace surge::autoscale
