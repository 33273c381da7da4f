// surge scale simulate: a load trace replayed through the autoscaling policy against a
// capacity model fitted from bench results, with an HTML report and a JSON summary (the
// simulation is autoscale/simulator.h).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "autoscale/autoscaler.h"
#include "autoscale/read_file.h"
#include "autoscale/simulator.h"
#include "base/flags.h"
#include "base/status.h"

namespace surge {
namespace {

const std::string kSummary =
    "usage: surge scale simulate --bench FILE --trace diurnal|ramp|spike|FILE.csv --policy POLICY_FILE --html OUT\n"
    "Replays a load trace (QPS per minute) through the autoscaling policy of POLICY_FILE (the\n"
    "--autoscale file) against one engine's capacity fitted from `surge bench --json` results,\n"
    "and reports minutes within the P95 TTFT SLO, replica-hours and cost, against a fixed\n"
    "fleet sized for the peak. A CSV trace has one QPS per line (or minute,qps).\n";

struct ScaleArgs {
  std::string bench, trace, policy, html, json, pool, startup_delay = "60s", start;
  double slo_ttft_p95_s = 0, base_qps = 10, peak_qps = 500;
  bool show_help = false;
};

Status ParseArgs(const std::vector<std::string>& args, ScaleArgs* a, std::string* usage, FlagParser* flags) {
  flags->AddString("bench", &a->bench, "`surge bench --json` output of one engine (required)");
  flags->AddString("trace", &a->trace, "diurnal, ramp, spike, or a .csv file of QPS per minute (required)");
  flags->AddString("policy", &a->policy, "the autoscale policy file, as for --autoscale (required)");
  flags->AddString("html", &a->html, "write the HTML report here (required)");
  flags->AddString("json", &a->json, "write the JSON summary (with per-minute series) here");
  flags->AddString("pool", &a->pool, "the policy's pool to simulate (default: its only pool)");
  flags->AddDouble("slo-ttft-p95", &a->slo_ttft_p95_s, "P95 TTFT SLO, seconds (default: the pool's ttft_p95 target)");
  flags->AddString("startup-delay", &a->startup_delay, "a new replica's time to ready, e.g. 90s (default 60s)");
  flags->AddDouble("base-qps", &a->base_qps, "the built-in traces' low (default 10)");
  flags->AddDouble("peak-qps", &a->peak_qps, "the built-in traces' peak (default 500)");
  flags->AddString("start", &a->start, "the trace's first minute, UTC: 2025-12-01T23:00Z (default: a Tuesday, 00:00 Berlin)");
  *usage = kSummary + flags->Usage();
  for (const std::string& arg : args) a->show_help |= arg == "--help" || arg == "-h";
  if (a->show_help) return OkStatus();
  RETURN_IF_ERROR(flags->Parse(args));
  for (const char* required : {"bench", "trace", "policy", "html"}) {
    if (!flags->seen(required)) return InvalidArgumentError(std::string("--") + required + " is required (see --help)");
  }
  bool builtin = a->trace == "diurnal" || a->trace == "ramp" || a->trace == "spike";
  if (!builtin && (flags->seen("base-qps") || flags->seen("peak-qps"))) {
    return InvalidArgumentError("--base-qps / --peak-qps shape the built-in traces only, not a CSV trace");
  }
  if (flags->seen("slo-ttft-p95") && !(a->slo_ttft_p95_s > 0)) return InvalidArgumentError("--slo-ttft-p95 must be > 0");
  return OkStatus();
}

// "2025-12-01T23:00Z" or "2025-12-01T23:00:00Z".
StatusOr<autoscale::Instant> ParseStart(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char z = 0;
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z);
  if (n != 7) {
    s = 0;
    n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d%c", &y, &mo, &d, &h, &mi, &z) == 6 ? 7 : 0;
  }
  if (n != 7 || z != 'Z' || mo < 1 || mo > 12 || d < 1 || d > autoscale::DaysInMonth(y, mo) || h > 23 || mi > 59 ||
      s > 59) {
    return InvalidArgumentError("--start: expected a UTC time like 2025-12-01T23:00Z, got '" + text + "'");
  }
  return autoscale::FromUnixSeconds(autoscale::DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s);
}

StatusOr<const autoscale::PoolConfig*> PickPool(const autoscale::AutoscaleConfig& config, const std::string& name) {
  if (name.empty()) {
    if (config.pools.size() == 1) return &config.pools[0];
    return InvalidArgumentError("the policy has " + std::to_string(config.pools.size()) + " pools: name one with --pool");
  }
  for (const autoscale::PoolConfig& pool : config.pools) {
    if (pool.name == name) return &pool;
  }
  return InvalidArgumentError("--pool: the policy has no pool '" + name + "'");
}

StatusOr<std::vector<double>> LoadTrace(const ScaleArgs& a) {
  if (a.trace == "diurnal" || a.trace == "ramp" || a.trace == "spike") return autoscale::MakeTrace(a.trace, a.base_qps, a.peak_qps);
  if (!a.trace.ends_with(".csv")) return autoscale::MakeTrace(a.trace, a.base_qps, a.peak_qps);  // the error names it
  ASSIGN_OR_RETURN(std::string text, autoscale::ReadBoundedFile(a.trace, 16 << 20, "trace"));
  StatusOr<std::vector<double>> trace = autoscale::ParseTraceCsv(text);
  if (!trace.ok()) return trace.status().WithContext(a.trace);
  return trace;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status(StatusCode::kUnavailable, path + ": cannot write");
  return OkStatus();
}

StatusOr<autoscale::SimulationReport> Run(const ScaleArgs& a, bool slo_given) {
  ASSIGN_OR_RETURN(autoscale::AutoscaleConfig config, autoscale::LoadAutoscaleConfig(a.policy));
  ASSIGN_OR_RETURN(const autoscale::PoolConfig* pool, PickPool(config, a.pool));
  autoscale::SimulationReport report;
  report.trace_name = a.trace;
  report.policy_path = a.policy;
  report.options.interval = config.interval;
  report.options.slo_ttft_p95_s = slo_given ? a.slo_ttft_p95_s : pool->policy.targets.ttft_p95_s.value_or(0);
  if (!(report.options.slo_ttft_p95_s > 0)) {
    return InvalidArgumentError("pool '" + pool->name + "' has no ttft_p95 target: give --slo-ttft-p95");
  }
  StatusOr<autoscale::Duration> delay = autoscale::ParseDuration(a.startup_delay);
  if (!delay.ok()) return delay.status().WithContext("--startup-delay");
  report.options.startup_delay = *delay;
  if (!a.start.empty()) {
    ASSIGN_OR_RETURN(report.options.start, ParseStart(a.start));
  }
  ASSIGN_OR_RETURN(std::vector<double> trace, LoadTrace(a));
  ASSIGN_OR_RETURN(std::vector<autoscale::BenchPoint> points, autoscale::LoadBenchReport(a.bench));
  ASSIGN_OR_RETURN(report.model, autoscale::FitCapacityModel(points, report.options.slo_ttft_p95_s));
  report.autoscaled = autoscale::Simulate(*pool, report.model, trace, report.options);
  report.fixed_replicas = autoscale::FixedFleetForPeak(report.model, trace);
  autoscale::SimulationOptions fixed = report.options;
  fixed.fixed_replicas = report.fixed_replicas;
  report.fixed = autoscale::Simulate(*pool, report.model, trace, fixed);
  return report;
}

void PrintSummary(const autoscale::SimulationReport& r) {
  auto line = [](const char* name, const autoscale::SimulationResult& s) {
    std::printf("%-22s %5d / %zu minutes within the SLO (%.2f%%), %.1f replica-hours, $%.2f, peak %d replicas\n", name,
                s.num_minutes_meeting_slo, s.minutes.size(), 100.0 * s.num_minutes_meeting_slo / std::max<size_t>(1, s.minutes.size()),
                s.replica_hours, s.cost_usd, s.peak_replicas);
  };
  std::printf("one instance: %.3g QPS within P95 TTFT %.3g s (%s), %.3g QPS at saturation\n", r.model.slo_qps,
              r.options.slo_ttft_p95_s, r.model.slo_source.c_str(), r.model.max_qps);
  line("autoscaled:", r.autoscaled);
  line(("fixed fleet of " + std::to_string(r.fixed_replicas) + ":").c_str(), r.fixed);
}

int RunSimulate(const std::vector<std::string>& args) {
  ScaleArgs a;
  std::string usage;
  FlagParser flags("scale simulate");
  if (Status status = ParseArgs(args, &a, &usage, &flags); !status.ok()) {
    std::fprintf(stderr, "surge scale simulate: %s\n", status.message().c_str());
    return 2;
  }
  if (a.show_help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  StatusOr<autoscale::SimulationReport> report = Run(a, flags.seen("slo-ttft-p95"));
  Status written = report.ok() ? WriteFile(a.html, autoscale::SimulationHtml(*report)) : report.status();
  if (written.ok() && !a.json.empty()) written = WriteFile(a.json, autoscale::SimulationJson(*report));
  if (!written.ok()) {
    std::fprintf(stderr, "surge scale simulate: %s\n", written.message().c_str());
    return written.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  PrintSummary(*report);
  return 0;
}

}  // namespace

int RunScale(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "simulate") return RunSimulate(std::vector<std::string>(args.begin() + 1, args.end()));
  bool help = !args.empty() && (args[0] == "--help" || args[0] == "-h");
  std::fprintf(help ? stdout : stderr, "usage: surge scale simulate [flags]   (surge scale simulate --help)\n%s",
               args.empty() || help ? "" : ("surge scale: unknown subcommand '" + args[0] + "'\n").c_str());
  return help ? 0 : 2;
}

}  // namespace surge
