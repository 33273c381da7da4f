// surge plan: instance count, concurrency per instance and monthly cost for a target QPS and
// SLO, from `surge bench --json` measurements (the arithmetic is autoscale/planner.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "autoscale/planner.h"
#include "base/flags.h"
#include "base/status.h"

namespace surge {
namespace {

const std::string kSummary =
    "Plans capacity from `surge bench --json` results: the most one instance serves within the SLO\n"
    "(interpolated between measured points), the instances needed for --target-qps (per hour of a\n"
    "--profile), the concurrency per instance and the cost per month at each --price.\n"
    "  --price CLASS=USD_PER_HOUR   price of one instance-hour in a class; repeat for several\n";

struct PlanArgs {
  std::string bench;
  double target_qps = 0;
  double slo_ttft_p95_s = 0;
  double slo_e2e_p95_s = 0;
  std::string profile = "flat";
  double prefix_hit_rate = 0;
  double cache_hit_rate = 0;
  bool json = false;
  bool show_help = false;
  std::vector<std::string> prices;  // CLASS=USD_PER_HOUR, in order
};

// FlagParser keeps one value per flag; --price may repeat, so it is taken out first.
Status TakePrices(const std::vector<std::string>& args, std::vector<std::string>* rest, PlanArgs* parsed) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--price") {
      if (i + 1 == args.size()) return InvalidArgumentError("--price: missing value CLASS=USD_PER_HOUR");
      parsed->prices.push_back(args[++i]);
    } else if (args[i].rfind("--price=", 0) == 0) {
      parsed->prices.push_back(args[i].substr(8));
    } else {
      rest->push_back(args[i]);
    }
  }
  return OkStatus();
}

StatusOr<std::vector<std::pair<std::string, double>>> ParsePrices(const std::vector<std::string>& prices) {
  std::vector<std::pair<std::string, double>> out;
  std::set<std::string> seen;
  for (const std::string& price : prices) {
    size_t eq = price.find('=');
    char* end = nullptr;
    double usd = eq == std::string::npos ? 0 : std::strtod(price.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == price.c_str() + eq + 1 || *end != '\0' || !std::isfinite(usd) ||
        usd < 0) {
      return InvalidArgumentError("--price: expected CLASS=USD_PER_HOUR like spot=0.9, got '" + price + "'");
    }
    if (!seen.insert(price.substr(0, eq)).second) {
      return InvalidArgumentError("--price: class '" + price.substr(0, eq) + "' given twice");
    }
    out.emplace_back(price.substr(0, eq), usd);
  }
  return out;
}

Status ParseArgs(const std::vector<std::string>& args, PlanArgs* parsed, std::string* usage) {
  FlagParser flags("plan");
  flags.AddString("bench", &parsed->bench, "`surge bench --json` output of one server (required)");
  flags.AddDouble("target-qps", &parsed->target_qps, "requests per second to serve; the peak with --profile (required)");
  flags.AddDouble("slo-ttft-p95", &parsed->slo_ttft_p95_s, "P95 time to first token to meet, seconds (required)");
  flags.AddDouble("slo-e2e-p95", &parsed->slo_e2e_p95_s, "P95 end-to-end latency to meet, seconds");
  flags.AddString("profile", &parsed->profile, "flat, or a JSON file of 24 hourly weights (default flat)");
  flags.AddDouble("prefix-hit-rate", &parsed->prefix_hit_rate,
                  "share of prompt tokens the prefix cache serves beyond the bench's, 0..1 (default 0)");
  flags.AddDouble("cache-hit-rate", &parsed->cache_hit_rate,
                  "share of requests the router's response cache answers, 0..1 (default 0)");
  flags.AddBool("json", &parsed->json, "print the plan as JSON");
  *usage = kSummary + flags.Usage();
  for (const std::string& arg : args) parsed->show_help |= arg == "--help" || arg == "-h";
  if (parsed->show_help) return OkStatus();
  std::vector<std::string> rest;
  RETURN_IF_ERROR(TakePrices(args, &rest, parsed));
  RETURN_IF_ERROR(flags.Parse(rest));
  for (const char* required : {"bench", "target-qps", "slo-ttft-p95"}) {
    if (!flags.seen(required)) return InvalidArgumentError(std::string("--") + required + " is required (see --help)");
  }
  if (flags.seen("slo-e2e-p95") && !(parsed->slo_e2e_p95_s > 0)) {
    return InvalidArgumentError("--slo-e2e-p95 must be > 0 seconds");
  }
  return OkStatus();
}

// Builds the planner's request from the flags; errors are usage errors.
StatusOr<autoscale::PlanRequest> MakeRequest(const PlanArgs& a, bool has_e2e) {
  autoscale::PlanRequest r;
  r.target_qps = a.target_qps;
  r.slo_ttft_p95_s = a.slo_ttft_p95_s;
  if (has_e2e) r.slo_e2e_p95_s = a.slo_e2e_p95_s;
  r.prefix_hit_rate = a.prefix_hit_rate;
  r.cache_hit_rate = a.cache_hit_rate;
  for (auto [name, rate] : {std::pair{"--prefix-hit-rate", a.prefix_hit_rate}, std::pair{"--cache-hit-rate", a.cache_hit_rate}}) {
    if (!(rate >= 0 && rate < 1)) return InvalidArgumentError(std::string(name) + " must be in [0, 1)");
  }
  ASSIGN_OR_RETURN(r.usd_per_hour, ParsePrices(a.prices));
  if (a.profile != "flat") {
    StatusOr<std::vector<double>> weights = autoscale::LoadHourlyProfile(a.profile);
    if (!weights.ok()) return weights.status().WithContext("--profile");
    r.hourly_weights = *weights;
  }
  return r;
}

}  // namespace

int RunPlan(const std::vector<std::string>& args) {
  PlanArgs parsed;
  std::string usage;
  if (Status status = ParseArgs(args, &parsed, &usage); !status.ok()) {
    std::fprintf(stderr, "surge plan: %s\n", status.message().c_str());
    return 2;
  }
  if (parsed.show_help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  bool has_e2e = parsed.slo_e2e_p95_s > 0;
  StatusOr<autoscale::PlanRequest> request = MakeRequest(parsed, has_e2e);
  if (!request.ok()) {
    std::fprintf(stderr, "surge plan: %s\n", request.status().message().c_str());
    return 2;
  }
  StatusOr<std::vector<autoscale::BenchPoint>> points = autoscale::LoadBenchReport(parsed.bench);
  StatusOr<autoscale::PlanResult> plan =
      points.ok() ? autoscale::Plan(*points, *request) : StatusOr<autoscale::PlanResult>(points.status());
  if (!plan.ok()) {
    std::fprintf(stderr, "surge plan: %s\n", plan.status().message().c_str());
    return 1;
  }
  std::string out = parsed.json ? autoscale::PlanJson(*plan, *request) : autoscale::FormatPlan(*plan, *request);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace surge
