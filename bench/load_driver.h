// LoadDriver: runs one round against one server — a closed loop at fixed concurrency or an
// open loop of Poisson / constant arrivals (optionally capped) — until its request count or
// duration is reached, then waits for the requests in flight and returns their records.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "bench/config.h"
#include "bench/request_builder.h"
#include "bench/request_record.h"
#include "bench/workload.h"
#include "net/http_client.h"

namespace surge::bench {

struct Target {
  std::string label;     // "A", "B", or "" without --compare
  std::string base_url;  // "http://127.0.0.1:8000", no trailing slash
  std::string model;     // sent in every body (unless empty)
  net::HttpHeaders headers;  // e.g. Authorization
};

struct RoundPlan {
  LoadPoint point;
  Arrival arrival = Arrival::kPoisson;
  int64_t max_concurrency = 0;  // open loop only; 0: none
  int64_t num_requests = 0;     // 0: bounded by duration
  double duration_s = 0;        // 0: bounded by num_requests
  uint64_t round_key = 0;       // picks the workload's sessions (same key: same requests)
  uint64_t seed = 0;            // arrival times
  double timeout_s = 600;       // per request
};

struct ProgressState {
  int64_t num_done = 0;  // finished, failed included
  int64_t num_failed = 0;
  int64_t num_sent = 0;
  int64_t num_in_flight = 0;
  double elapsed_s = 0;
};
using ProgressFn = std::function<void(const ProgressState&)>;

struct RoundRun {
  std::vector<RequestRecord> records;  // in completion order
  double wall_s = 0;        // first send to last completion
  double client_cpu_s = 0;  // this process's CPU time (user + system) during the round
  std::optional<double> server_busy_s;  // the engine's busy seconds during it, when it says
};

class LoadDriver {
 public:
  // `request` holds what every request's body gets (the model is each target's).
  LoadDriver(net::HttpClient& client, const Workload& workload, RequestOptions request)
      : client_(client), workload_(workload), request_(std::move(request)) {}

  // Blocks until the round is over. `progress` (optional) is called about every 100 ms.
  RoundRun Run(const Target& target, const RoundPlan& plan, const ProgressFn& progress) const;

 private:
  net::HttpClient& client_;
  const Workload& workload_;
  RequestOptions request_;
};

// User + system CPU seconds this process has used so far.
double ProcessCpuSeconds();

}  // namespace surge::bench
