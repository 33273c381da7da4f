#include "bench/config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace surge::bench {
namespace {

std::vector<std::string> SplitCommas(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.emplace_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

// A finite or infinite number with nothing after it.
std::optional<double> ParseNumber(const std::string& text) {
  if (text == "inf") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string FlagName(std::string_view flag) { return "--" + std::string(flag); }

}  // namespace

std::string_view EndpointName(Endpoint endpoint) {
  return endpoint == Endpoint::kChat ? "chat" : "completions";
}
std::string_view EndpointPath(Endpoint endpoint) {
  return endpoint == Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions";
}
std::string_view ArrivalName(Arrival arrival) {
  return arrival == Arrival::kConstant ? "constant" : "poisson";
}
std::string_view WorkloadName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kRandom: return "random";
    case WorkloadKind::kSharedPrefix: return "shared-prefix";
    case WorkloadKind::kMultiTurn: return "multi-turn";
    case WorkloadKind::kShareGpt: return "sharegpt";
    case WorkloadKind::kJsonl: return "jsonl";
  }
  return "?";
}

StatusOr<Endpoint> ParseEndpoint(std::string_view text) {
  if (text == "completions") return Endpoint::kCompletions;
  if (text == "chat") return Endpoint::kChat;
  return InvalidArgumentError("--endpoint must be chat or completions, got '" + std::string(text) + "'");
}
StatusOr<Arrival> ParseArrival(std::string_view text) {
  if (text == "poisson") return Arrival::kPoisson;
  if (text == "constant") return Arrival::kConstant;
  return InvalidArgumentError("--arrival must be poisson or constant, got '" + std::string(text) + "'");
}
StatusOr<WorkloadKind> ParseWorkloadKind(std::string_view text) {
  for (WorkloadKind kind : {WorkloadKind::kRandom, WorkloadKind::kSharedPrefix, WorkloadKind::kMultiTurn,
                            WorkloadKind::kShareGpt, WorkloadKind::kJsonl}) {
    if (text == WorkloadName(kind)) return kind;
  }
  return InvalidArgumentError("--workload must be random, shared-prefix, multi-turn, sharegpt or jsonl, got '" +
                              std::string(text) + "'");
}

std::string LoadPoint::Label() const {
  if (concurrency > 0) return "c=" + std::to_string(concurrency);
  if (std::isinf(request_rate)) return "rate=inf";
  std::ostringstream out;
  out << "rate=" << request_rate;
  return out.str();
}

StatusOr<std::vector<int64_t>> ParseIntList(std::string_view text, std::string_view flag) {
  std::vector<int64_t> values;
  for (const std::string& part : SplitCommas(text)) {
    char* end = nullptr;
    errno = 0;
    long long value = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno == ERANGE || value < 1 || value > 1'000'000) {
      return InvalidArgumentError(FlagName(flag) + ": expected a comma-separated list of integers >= 1, got '" +
                                  std::string(text) + "'");
    }
    values.push_back(value);
  }
  return values;
}

StatusOr<std::vector<double>> ParseRateList(std::string_view text, std::string_view flag) {
  std::vector<double> values;
  for (const std::string& part : SplitCommas(text)) {
    std::optional<double> value = ParseNumber(part);
    if (!value || !(*value > 0)) {
      return InvalidArgumentError(FlagName(flag) + ": expected a comma-separated list of rates > 0 (or inf), got '" +
                                  std::string(text) + "'");
    }
    values.push_back(*value);
  }
  return values;
}

StatusOr<double> ParseDurationSeconds(std::string_view text, std::string_view flag, bool default_unit_s) {
  std::string number(text);
  double scale = default_unit_s ? 1.0 : 1e-3;
  struct Unit { const char* suffix; double seconds; };
  for (Unit unit : {Unit{"ms", 1e-3}, Unit{"us", 1e-6}, Unit{"s", 1.0}, Unit{"m", 60.0}}) {
    std::string_view suffix = unit.suffix;
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.resize(number.size() - suffix.size());
      scale = unit.seconds;
      break;
    }
  }
  std::optional<double> value = ParseNumber(number);
  if (!value || !std::isfinite(*value) || *value < 0) {
    return InvalidArgumentError(FlagName(flag) + ": expected a duration such as 500ms, 2s or 1m, got '" +
                                std::string(text) + "'");
  }
  return *value * scale;
}

StatusOr<SloConfig> ParseSlo(std::string_view text) {
  SloConfig slo;
  for (const std::string& part : SplitCommas(text)) {
    size_t eq = part.find('=');
    std::string name = part.substr(0, eq);
    std::optional<double>* target = name == "ttft" ? &slo.ttft_ms
                                    : name == "tpot" ? &slo.tpot_ms
                                    : name == "e2e"  ? &slo.e2e_ms
                                                     : nullptr;
    if (eq == std::string::npos || target == nullptr) {
      return InvalidArgumentError("--slo: expected ttft=DURATION,tpot=DURATION,e2e=DURATION, got '" +
                                  std::string(text) + "'");
    }
    ASSIGN_OR_RETURN(double seconds, ParseDurationSeconds(part.substr(eq + 1), "slo", false));
    if (!(seconds > 0)) return InvalidArgumentError("--slo: " + name + " must be > 0");
    *target = seconds * 1e3;
  }
  return slo;
}

Status Validate(const BenchConfig& c) {
  const WorkloadConfig& w = c.workload;
  if (c.urls.empty()) return InvalidArgumentError("--url is required (or --compare URL_A URL_B)");
  if (c.points.empty()) return InvalidArgumentError("nothing to run: no --concurrency or --request-rate value");
  if (c.num_requests < 0) return InvalidArgumentError("--num-requests must be >= 0");
  if (c.num_requests == 0 && c.duration_s <= 0) return InvalidArgumentError("--num-requests or --duration must bound a round");
  if (c.max_concurrency < 0) return InvalidArgumentError("--max-concurrency must be >= 0");
  for (const LoadPoint& point : c.points) {
    if (std::isinf(point.request_rate) && c.num_requests == 0 && c.max_concurrency == 0) {
      return InvalidArgumentError("--request-rate inf needs --num-requests or --max-concurrency");
    }
  }
  if (c.repeat < 1 || c.repeat > 1000) return InvalidArgumentError("--repeat must be in [1, 1000]");
  if (!(c.timeout_s > 0)) return InvalidArgumentError("--timeout must be > 0");
  if (w.input.mean_tokens < 1 || w.output.mean_tokens < 1) return InvalidArgumentError("--input-len and --output-len must be >= 1");
  if (!(w.input.range >= 0 && w.input.range <= 1)) return InvalidArgumentError("--input-len-range must be in [0, 1]");
  if (!(w.output.range >= 0 && w.output.range <= 1)) return InvalidArgumentError("--output-len-range must be in [0, 1]");
  if (w.num_groups < 1) return InvalidArgumentError("--num-groups must be >= 1");
  if (w.prefix_len_tokens < 0) return InvalidArgumentError("--prefix-len must be >= 0");
  if (w.turns < 1 || w.turns > 1000) return InvalidArgumentError("--turns must be in [1, 1000]");
  if (w.kind == WorkloadKind::kMultiTurn && c.endpoint != Endpoint::kChat) {
    return InvalidArgumentError("--workload multi-turn needs --endpoint chat");
  }
  bool needs_dataset = w.kind == WorkloadKind::kShareGpt || w.kind == WorkloadKind::kJsonl;
  if (needs_dataset && w.dataset_path.empty()) return InvalidArgumentError("--workload " + std::string(WorkloadName(w.kind)) + " needs --dataset FILE");
  if (!needs_dataset && !w.dataset_path.empty()) return InvalidArgumentError("--dataset is only for --workload sharegpt or jsonl");
  return OkStatus();
}

}  // namespace surge::bench
