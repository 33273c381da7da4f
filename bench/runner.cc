#include "bench/runner.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

#include "bench/load_driver.h"
#include "bench/server_probe.h"
#include "bench/workload.h"

namespace surge::bench {
namespace {

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void Note(BenchReport& report, ProgressSink* progress, std::string text) {
  if (progress) progress->Note(text);
  report.notes.push_back(std::move(text));
}

net::HttpHeaders TargetHeaders(const BenchConfig& config) {
  net::HttpHeaders headers;
  if (!config.api_key.empty()) headers.Set("Authorization", "Bearer " + config.api_key);
  return headers;
}

// Fills the targets' models (asking /v1/models where none was given) and the calibration.
void ProbeTargets(net::HttpClient& client, BenchReport& report, ProgressSink* progress) {
  BenchConfig& config = report.config;
  const net::HttpHeaders headers = TargetHeaders(config);
  for (size_t i = 0; i < config.urls.size(); ++i) {
    TargetInfo target{config.compare() ? std::string(1, static_cast<char>('A' + i)) : "", config.urls[i],
                      i < config.models.size() ? config.models[i] : ""};
    if (target.model.empty()) {
      StatusOr<std::string> model = FirstModelId(client, target.url, headers);
      if (model.ok()) {
        target.model = *model;
      } else {
        Note(report, progress, "cannot list models of " + target.url + " (" + model.status().message() +
                                   "); sending requests without a model");
      }
    }
    report.targets.push_back(std::move(target));
  }
  if (config.calibrate) {
    report.calibration = CalibrateTokensPerWord(client, report.targets[0].url, report.targets[0].model, headers,
                                                config.workload.seed);
  } else {
    report.calibration.note = "calibration off: assuming 1 token per word";
  }
  config.workload.tokens_per_word = report.calibration.tokens_per_word;
  if (!report.calibration.measured) Note(report, progress, report.calibration.note);
}

int64_t MaxInFlight(const BenchConfig& config) {
  int64_t most = config.max_concurrency;
  for (const LoadPoint& point : config.points) most = std::max(most, point.concurrency);
  return most;
}

// Runs point `p` on every target, `repeat` times, alternating targets round by round.
class PointRunner {
 public:
  PointRunner(const LoadDriver& driver, net::HttpClient& client, BenchReport& report, ProgressSink* progress)
      : driver_(driver), client_(client), report_(report), progress_(progress), headers_(TargetHeaders(report.config)) {}

  void Run(size_t p) {
    const BenchConfig& c = report_.config;
    std::vector<std::vector<RoundRun>> runs(report_.targets.size());
    for (int64_t r = 0; r < c.repeat; ++r) {
      // The same key for A and B: both sides get identical requests.
      const uint64_t round_key = static_cast<uint64_t>(p) * static_cast<uint64_t>(c.repeat) + r + 1;
      for (size_t t = 0; t < report_.targets.size(); ++t) runs[t].push_back(RunRound(p, t, round_key));
    }
    for (size_t t = 0; t < report_.targets.size(); ++t) {
      RoundMetrics metrics = Aggregate(runs[t], c.slo);
      metrics.target_label = report_.targets[t].label;
      metrics.url = report_.targets[t].url;
      metrics.model = report_.targets[t].model;
      metrics.point = c.points[p];
      report_.rounds.push_back(std::move(metrics));
    }
  }

 private:
  RoundRun RunRound(size_t p, size_t t, uint64_t round_key) {
    const BenchConfig& c = report_.config;
    const TargetInfo& info = report_.targets[t];
    Target target{info.label, info.url, info.model, headers_};
    RoundPlan plan{c.points[p], c.arrival,       c.max_concurrency, c.num_requests,
                   c.duration_s, round_key, c.workload.seed, c.timeout_s};
    const int64_t num_rounds = static_cast<int64_t>(c.points.size() * report_.targets.size()) * c.repeat;
    std::string title = "round " + std::to_string(++round_number_) + "/" + std::to_string(num_rounds) + ": " +
                        (info.label.empty() ? "" : info.label + " ") + c.points[p].Label();
    if (progress_) progress_->BeginRound(title, c.num_requests, c.duration_s);
    ProgressState last;
    const std::optional<double> busy_before = ReadServerBusySeconds(client_, info.url, headers_);
    RoundRun run = driver_.Run(target, plan, [&](const ProgressState& state) {
      last = state;
      if (progress_) progress_->Update(state);
    });
    const std::optional<double> busy_after = busy_before ? ReadServerBusySeconds(client_, info.url, headers_) : std::nullopt;
    if (busy_after) run.server_busy_s = *busy_after - *busy_before;
    if (progress_) progress_->EndRound(last);
    return run;
  }

  const LoadDriver& driver_;
  net::HttpClient& client_;  // the /metrics reads around a round
  BenchReport& report_;
  ProgressSink* progress_;
  const net::HttpHeaders headers_;
  int64_t round_number_ = 0;
};

}  // namespace

StatusOr<BenchReport> RunBenchmark(BenchConfig config, ProgressSink* progress) {
  BenchReport report;
  report.config = std::move(config);
  report.started_at = UtcNow();
  net::HttpClientOptions client_options;
  client_options.max_idle_connections_per_host =
      static_cast<size_t>(std::max<int64_t>(1024, MaxInFlight(report.config)));
  net::HttpClient client(client_options);
  ProbeTargets(client, report, progress);
  for (const LoadPoint& point : report.config.points) {
    if (report.config.num_requests > 0 && point.concurrency > report.config.num_requests) {
      Note(report, progress, point.Label() + " exceeds --num-requests " + std::to_string(report.config.num_requests) +
                                 ": that round never reaches its concurrency");
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Workload> workload, MakeWorkload(report.config.workload));
  LoadDriver driver(client, *workload,
                    RequestOptions{report.config.endpoint, "", report.config.ignore_eos, report.config.temperature});
  PointRunner runner(driver, client, report, progress);
  for (size_t p = 0; p < report.config.points.size(); ++p) runner.Run(p);
  return report;
}

std::vector<ComparedPoint> PairRounds(const BenchReport& report) {
  std::vector<ComparedPoint> pairs;
  if (!report.config.compare()) return pairs;
  for (size_t i = 0; i + 1 < report.rounds.size(); i += 2) {
    pairs.push_back({&report.rounds[i], &report.rounds[i + 1]});
  }
  return pairs;
}

double Ratio(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || b == 0) return std::numeric_limits<double>::quiet_NaN();
  return a / b;
}

}  // namespace surge::bench
