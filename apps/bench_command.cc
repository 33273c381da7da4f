// surge bench: a load generator for any OpenAI-compatible server (ours, vLLM, llama.cpp):
// sweeps of concurrency or request rate over synthetic or dataset workloads, with TTFT,
// TPOT, ITL, latency, throughput and goodput, and A/B comparison of two servers.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apps/bench_flags.h"
#include "apps/commands.h"
#include "bench/console_report.h"
#include "bench/csv_report.h"
#include "bench/html_report.h"
#include "bench/json_report.h"
#include "bench/progress.h"
#include "bench/runner.h"

namespace surge {
namespace {

using bench::BenchConfig;

const char kSummary[] =
    "surge bench --url http://127.0.0.1:8000 [flags]   or   surge bench --compare URL_A URL_B [flags]\n"
    "Loads an OpenAI-compatible server with streamed requests and reports TTFT, TPOT, ITL, latency,\n"
    "throughput and goodput per round (one round per --concurrency or --request-rate value).\n";

Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) return UnavailableError("cannot write " + path);
  return OkStatus();
}

Status WriteOutputs(const bench::BenchReport& report) {
  const BenchConfig& c = report.config;
  if (!c.json_path.empty()) RETURN_IF_ERROR(WriteFile(c.json_path, bench::JsonReport(report)));
  if (!c.csv_path.empty()) RETURN_IF_ERROR(WriteFile(c.csv_path, bench::CsvReport(report)));
  if (!c.html_path.empty()) RETURN_IF_ERROR(WriteFile(c.html_path, bench::HtmlReport(report)));
  return OkStatus();
}

// Thousands of concurrent streams need as many descriptors: lift the soft limit to the hard one.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}
}  // namespace

int RunBench(const std::vector<std::string>& args) {
  BenchConfig config;
  bool help = false;
  std::string usage;
  if (Status status = ParseBenchArgs(args, &config, &help, &usage); !status.ok()) {
    std::fprintf(stderr, "surge bench: %s\n", status.message().c_str());
    return 2;
  }
  if (help) return std::printf("%s%s", kSummary, usage.c_str()), 0;
  RaiseFileLimit();
  bench::StderrProgress progress(isatty(STDERR_FILENO) != 0);
  StatusOr<bench::BenchReport> report = bench::RunBenchmark(std::move(config), &progress);
  if (!report.ok()) {
    std::fprintf(stderr, "surge bench: %s\n", report.status().message().c_str());
    return 1;
  }
  std::fputs(bench::ConsoleReport(*report).c_str(), stdout);
  std::fflush(stdout);
  if (Status status = WriteOutputs(*report); !status.ok()) {
    std::fprintf(stderr, "surge bench: %s\n", status.message().c_str());
    return 1;
  }
  int64_t num_completed = 0;
  for (const bench::RoundMetrics& round : report->rounds) num_completed += round.num_completed;
  if (num_completed == 0) {
    std::fprintf(stderr, "surge bench: every request failed (see the errors above)\n");
    return 1;
  }
  return 0;
}

}  // namespace surge
