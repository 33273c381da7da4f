// Renderings of a capacity plan: a table for people, JSON for scripts.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "autoscale/planner.h"

namespace surge::autoscale {
namespace {

std::string Printf(const char* format, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

std::string SloText(const PlanRequest& r) {
  std::string slo = Printf("P95 TTFT <= %g s", r.slo_ttft_p95_s);
  if (r.slo_e2e_p95_s) slo += Printf(", P95 E2E <= %g s", *r.slo_e2e_p95_s);
  return slo;
}

std::string ScenarioText(const PlanScenario& s, const PlanRequest& r, const PlanResult& plan) {
  std::string out = Printf("\n%s:\n", s.name.c_str());
  if (s.name != "as measured") {
    out += Printf("  response cache hit rate %g: engines see %.4g of %.4g QPS\n", r.cache_hit_rate, s.peak_engine_qps,
                  r.target_qps);
    out += Printf("  prefix hit rate %g on a prefill share of %.2f: per-instance capacity x%.3f\n", r.prefix_hit_rate,
                  plan.prefill_share, s.throughput_factor);
  }
  out += Printf("  per-instance capacity  %.4g req/s\n", s.instance_qps);
  out += Printf("  instances at peak      %d  (%.4g QPS)\n", s.peak_instances, s.peak_engine_qps);
  out += Printf("  instance-hours per day %.4g\n", s.instance_hours_per_day);
  if (!s.hours.empty() && s.peak_instances > 0) {
    double fixed = 24.0 * s.peak_instances;
    out += Printf("  a fixed fleet for the peak would run %.4g (following the profile saves %.0f%%)\n", fixed,
                  100 * (1 - s.instance_hours_per_day / fixed));
  }
  for (const auto& [name, usd] : s.usd_per_month) {
    out += Printf("  cost per month on %-12s $%.2f\n", (name + ":").c_str(), usd);
  }
  if (!s.hours.empty()) {
    out += "  hour  engine QPS  instances\n";
    for (const HourPlan& h : s.hours) out += Printf("  %4d  %10.4g  %9d\n", h.hour, h.engine_qps, h.num_instances);
  }
  return out;
}

}  // namespace

std::string FormatPlan(const PlanResult& plan, const PlanRequest& r) {
  const InstanceCapacity& c = plan.capacity;
  std::string out = Printf("surge plan: %.4g QPS%s, SLO %s\n", r.target_qps,
                           r.hourly_weights.empty() ? " (flat)" : " at the profile's peak", SloText(r).c_str());
  out += Printf("per instance: %.4g req/s at concurrency %.3g, %s (P95 TTFT %.3g s, P95 E2E %.3g s)\n", c.qps,
                c.concurrency, c.source.c_str(), c.ttft_p95_s, c.e2e_p95_s);
  // Rounded down (a little slack for interpolation error): the limit must not pass the SLO point.
  int concurrency = std::max(1, static_cast<int>(std::floor(c.concurrency + 1e-6)));
  out += Printf("concurrency per instance: %d (cap in-flight requests per instance here)\n", concurrency);
  for (const PlanScenario& s : plan.scenarios) out += ScenarioText(s, r, plan);
  return out;
}

std::string PlanJson(const PlanResult& plan, const PlanRequest& r) {
  using Json = nlohmann::json;
  const InstanceCapacity& c = plan.capacity;
  Json scenarios = Json::array();
  for (const PlanScenario& s : plan.scenarios) {
    Json hours = Json::array(), cost = Json::object();
    for (const HourPlan& h : s.hours) hours.push_back({{"hour", h.hour}, {"engine_qps", h.engine_qps}, {"instances", h.num_instances}});
    for (const auto& [name, usd] : s.usd_per_month) cost[name] = usd;
    scenarios.push_back({{"name", s.name}, {"throughput_factor", s.throughput_factor}, {"instance_qps", s.instance_qps},
                         {"peak_engine_qps", s.peak_engine_qps}, {"peak_instances", s.peak_instances},
                         {"instance_hours_per_day", s.instance_hours_per_day}, {"hours", hours},
                         {"usd_per_month", cost}});
  }
  Json root = {{"target_qps", r.target_qps},
               {"slo", {{"ttft_p95_s", r.slo_ttft_p95_s}, {"e2e_p95_s", r.slo_e2e_p95_s ? Json(*r.slo_e2e_p95_s) : Json()}}},
               {"capacity", {{"qps", c.qps}, {"concurrency", c.concurrency}, {"ttft_p95_s", c.ttft_p95_s},
                             {"e2e_p95_s", c.e2e_p95_s}, {"source", c.source}}},
               {"prefill_share", plan.prefill_share},
               {"scenarios", scenarios}};
  return root.dump(2) + "\n";
}

}  // namespace surge::autoscale
