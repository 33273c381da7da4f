// BenchConfig: everything one `surge bench` run is asked to do (targets, load pattern,
// workload, SLOs, outputs), and the parsers for the flag values that are not plain numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::bench {

enum class Endpoint { kCompletions, kChat };
enum class Arrival { kPoisson, kConstant };
enum class WorkloadKind { kRandom, kSharedPrefix, kMultiTurn, kShareGpt, kJsonl };

std::string_view EndpointName(Endpoint endpoint);        // "completions", "chat"
std::string_view EndpointPath(Endpoint endpoint);        // "/v1/completions", ...
std::string_view ArrivalName(Arrival arrival);           // "poisson", "constant"
std::string_view WorkloadName(WorkloadKind kind);        // "random", "shared-prefix", ...
StatusOr<Endpoint> ParseEndpoint(std::string_view text);
StatusOr<Arrival> ParseArrival(std::string_view text);
StatusOr<WorkloadKind> ParseWorkloadKind(std::string_view text);

// A length drawn uniformly from [mean * (1 - range), mean * (1 + range)], at least 1.
struct LengthSpec {
  int64_t mean_tokens = 0;
  double range = 0;  // in [0, 1]
};

struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::kRandom;
  LengthSpec input{256, 0};
  LengthSpec output{128, 0};
  bool output_len_set = false;  // datasets keep their own answer lengths unless set
  int64_t num_groups = 1;       // shared-prefix
  int64_t prefix_len_tokens = 0;
  int64_t turns = 1;            // multi-turn
  std::string dataset_path;     // sharegpt, jsonl
  uint64_t seed = 0;
  double tokens_per_word = 1.0;  // measured through /tokenize when the server has it
};

// Service-level objectives: a request is "good" when it meets every one that is set.
struct SloConfig {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2e_ms;
  bool any() const { return ttft_ms || tpot_ms || e2e_ms; }
};

// One sweep point: a fixed concurrency (closed loop) or a request rate (open loop).
struct LoadPoint {
  int64_t concurrency = 0;  // > 0: closed loop with this many requests in flight
  double request_rate = 0;  // > 0 (may be +inf): open loop, requests per second
  // "c=4", "rate=2.5", "rate=inf".
  std::string Label() const;
};

struct BenchConfig {
  std::vector<std::string> urls;    // one, or two with --compare (A, B)
  std::vector<std::string> models;  // per URL; "" = the first id /v1/models lists
  std::string api_key;              // sent as "Authorization: Bearer ..." when set
  Endpoint endpoint = Endpoint::kCompletions;
  std::vector<LoadPoint> points;
  Arrival arrival = Arrival::kPoisson;
  int64_t max_concurrency = 0;  // caps open-loop rounds; 0: no cap
  int64_t num_requests = 0;     // per round; 0: bounded by duration only
  double duration_s = 0;        // per round; 0: bounded by num_requests only
  int64_t repeat = 1;           // rounds per point (and target), merged
  WorkloadConfig workload;
  bool ignore_eos = true;
  std::optional<double> temperature;  // --temperature: sent in every request
  bool calibrate = true;        // measure tokens per word through /tokenize
  double timeout_s = 600;       // per request
  SloConfig slo;
  std::string json_path, csv_path, html_path;
  bool compare() const { return urls.size() == 2; }
};

// "1,4,8,16" -> {1, 4, 8, 16}; every value >= 1.
StatusOr<std::vector<int64_t>> ParseIntList(std::string_view text, std::string_view flag);
// "0.5,2,inf" -> {0.5, 2, inf}; every value > 0.
StatusOr<std::vector<double>> ParseRateList(std::string_view text, std::string_view flag);
// "500ms", "2s", "1.5m", "250" (milliseconds by default when `default_unit_s` is false).
StatusOr<double> ParseDurationSeconds(std::string_view text, std::string_view flag, bool default_unit_s);
// "ttft=500ms,tpot=50ms,e2e=10s".
StatusOr<SloConfig> ParseSlo(std::string_view text);
// Checks the cross-flag rules (ranges, exclusive modes); errors are usage errors.
Status Validate(const BenchConfig& config);

}  // namespace surge::bench
