#include "apps/bench_flags.h"

#include <string>
#include <vector>

#include "base/flags.h"
#include "bench/server_probe.h"

namespace surge {
namespace {

using bench::BenchConfig;

constexpr int64_t kDefaultNumRequests = 200;

struct BenchFlags {
  std::string url, model, model_b, api_key;
  std::vector<std::string> compare;  // taken out of the arguments before parsing
  std::string compare_listed;        // only so that --help lists --compare
  std::string endpoint = "completions";
  std::string concurrency, request_rate;
  std::string arrival = "poisson";
  int64_t max_concurrency = 0;
  int64_t num_requests = 0;
  std::string duration = "0";
  int64_t repeat = 1;
  std::string workload = "random";
  int64_t input_len = 256, output_len = 128;
  double input_len_range = 0, output_len_range = 0;
  int64_t num_groups = 1, prefix_len = 0, turns = 1;
  std::string dataset;
  int64_t seed = 0;
  bool ignore_eos = true;
  double temperature = 0;
  bool calibrate = true;
  std::string timeout = "600";
  std::string slo;
  std::string json, csv, html;
  bool help = false;
};

void Register(FlagParser& p, BenchFlags& f) {
  p.AddString("url", &f.url, "the server's base URL, e.g. http://127.0.0.1:8000");
  p.AddString("compare", &f.compare_listed, "--compare URL_A URL_B: the same workload on two servers, rounds alternating");
  p.AddString("model", &f.model, "model name to request (default: the first id /v1/models lists)");
  p.AddString("model-b", &f.model_b, "with --compare: B's model (default: --model, else B's /v1/models)");
  p.AddString("api-key", &f.api_key, "sent as 'Authorization: Bearer KEY'");
  p.AddString("endpoint", &f.endpoint, "completions (default) or chat; multi-turn implies chat");
  p.AddString("concurrency", &f.concurrency, "fixed concurrency, a sweep as a list: 1,4,8,16 (default 1)");
  p.AddString("request-rate", &f.request_rate, "requests per second instead, a list too (inf: all at once)");
  p.AddString("arrival", &f.arrival, "with --request-rate: poisson (default) or constant");
  p.AddInt("max-concurrency", &f.max_concurrency, "with --request-rate: most requests in flight (default: no cap)");
  p.AddInt("num-requests", &f.num_requests, "requests per round (default 200 unless --duration is given)");
  p.AddString("duration", &f.duration, "length of a round: 30s, 2m (requests in flight then finish)");
  p.AddInt("repeat", &f.repeat, "rounds per point (and server), merged into one result (default 1)");
  p.AddString("workload", &f.workload, "random (default), shared-prefix, multi-turn, sharegpt or jsonl");
  p.AddInt("input-len", &f.input_len, "prompt tokens per request or turn (default 256)");
  p.AddDouble("input-len-range", &f.input_len_range, "spread: lengths uniform in len*(1 +- range) (default 0)");
  p.AddInt("output-len", &f.output_len, "max_tokens per request (default 128; sent with ignore_eos)");
  p.AddDouble("output-len-range", &f.output_len_range, "spread of the output length (default 0)");
  p.AddInt("num-groups", &f.num_groups, "shared-prefix: number of distinct prefixes (default 1)");
  p.AddInt("prefix-len", &f.prefix_len, "shared-prefix: tokens of the common prefix (system prompt)");
  p.AddInt("turns", &f.turns, "multi-turn: turns per conversation, each resending the history (default 4)");
  p.AddString("dataset", &f.dataset, "sharegpt: a ShareGPT JSON file; jsonl: one request body per line");
  p.AddInt("seed", &f.seed, "seed of prompts, lengths and arrivals (default 0)");
  p.AddBool("ignore-eos", &f.ignore_eos, "ask for exactly max_tokens tokens (default true; --ignore-eos=false)");
  p.AddDouble("temperature", &f.temperature,
              "sent in every request (a jsonl line's own wins; default: not sent, the server's default): "
              "0 for greedy runs, e.g. speculative decoding or response caches");
  p.AddBool("calibrate", &f.calibrate, "size prompts through the server's /tokenize (default true)");
  p.AddString("timeout", &f.timeout, "per request (default 600s)");
  p.AddString("slo", &f.slo, "goodput objectives, e.g. ttft=500ms,tpot=50ms,e2e=10s");
  p.AddString("json", &f.json, "write every metric of every round (and the configuration) to FILE");
  p.AddString("csv", &f.csv, "write one row per round to FILE");
  p.AddString("html", &f.html, "write a self-contained report with charts to FILE");
  p.AddBool("help", &f.help, "show this help");
}

// "--compare A B" takes two values, which FlagParser cannot express: they are taken out
// here ("--compare=A,B" works too).
Status TakeCompare(std::vector<std::string>& args, std::vector<std::string>* urls) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--compare=", 0) == 0) {
      std::string value = args[i].substr(10);
      size_t comma = value.find(',');
      if (comma == std::string::npos) return InvalidArgumentError("--compare=URL_A,URL_B needs two URLs");
      *urls = {value.substr(0, comma), value.substr(comma + 1)};
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      return OkStatus();
    }
    if (args[i] != "--compare") continue;
    if (i + 2 >= args.size() || args[i + 1].rfind("--", 0) == 0 || args[i + 2].rfind("--", 0) == 0) {
      return InvalidArgumentError("--compare needs two URLs: --compare URL_A URL_B");
    }
    *urls = {args[i + 1], args[i + 2]};
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 3);
    return OkStatus();
  }
  return OkStatus();
}

Status FillTargets(const BenchFlags& f, BenchConfig& c) {
  if (!f.compare.empty() && !f.url.empty()) return InvalidArgumentError("give --url or --compare, not both");
  if (!f.model_b.empty() && f.compare.empty()) return InvalidArgumentError("--model-b is only for --compare");
  std::vector<std::string> urls = f.compare.empty() ? std::vector<std::string>{f.url} : f.compare;
  if (urls[0].empty()) return InvalidArgumentError("--url is required (or --compare URL_A URL_B)");
  for (const std::string& url : urls) {
    ASSIGN_OR_RETURN(std::string base, bench::NormalizeBaseUrl(url));
    c.urls.push_back(base);
  }
  c.models = {f.model};
  if (urls.size() == 2) c.models.push_back(f.model_b.empty() ? f.model : f.model_b);
  c.api_key = f.api_key;
  return OkStatus();
}

Status FillLoad(const BenchFlags& f, const FlagParser& parser, BenchConfig& c) {
  if (!f.concurrency.empty() && !f.request_rate.empty()) {
    return InvalidArgumentError("--concurrency and --request-rate exclude each other (cap a rate with --max-concurrency)");
  }
  if (!f.request_rate.empty()) {
    ASSIGN_OR_RETURN(std::vector<double> rates, bench::ParseRateList(f.request_rate, "request-rate"));
    for (double rate : rates) c.points.push_back({0, rate});
  } else {
    ASSIGN_OR_RETURN(std::vector<int64_t> values,
                     bench::ParseIntList(f.concurrency.empty() ? "1" : f.concurrency, "concurrency"));
    for (int64_t value : values) c.points.push_back({value, 0});
    if (parser.seen("max-concurrency") || parser.seen("arrival")) {
      return InvalidArgumentError("--max-concurrency and --arrival go with --request-rate");
    }
  }
  ASSIGN_OR_RETURN(c.arrival, bench::ParseArrival(f.arrival));
  c.max_concurrency = f.max_concurrency;
  ASSIGN_OR_RETURN(c.duration_s, bench::ParseDurationSeconds(f.duration, "duration", true));
  c.num_requests = f.num_requests;
  if (!parser.seen("num-requests") && c.duration_s <= 0) c.num_requests = kDefaultNumRequests;
  c.repeat = f.repeat;
  ASSIGN_OR_RETURN(c.timeout_s, bench::ParseDurationSeconds(f.timeout, "timeout", true));
  if (!f.slo.empty()) {
    ASSIGN_OR_RETURN(c.slo, bench::ParseSlo(f.slo));
  }
  return OkStatus();
}

Status FillWorkload(const BenchFlags& f, const FlagParser& parser, BenchConfig& c) {
  bench::WorkloadConfig& w = c.workload;
  ASSIGN_OR_RETURN(w.kind, bench::ParseWorkloadKind(f.workload));
  ASSIGN_OR_RETURN(c.endpoint, bench::ParseEndpoint(f.endpoint));
  if (w.kind == bench::WorkloadKind::kMultiTurn && !parser.seen("endpoint")) c.endpoint = bench::Endpoint::kChat;
  w.input = {f.input_len, f.input_len_range};
  w.output = {f.output_len, f.output_len_range};
  w.output_len_set = parser.seen("output-len");
  w.num_groups = f.num_groups;
  w.prefix_len_tokens = f.prefix_len;
  w.turns = parser.seen("turns") || w.kind != bench::WorkloadKind::kMultiTurn ? f.turns : 4;
  w.dataset_path = f.dataset;
  w.seed = static_cast<uint64_t>(f.seed);
  c.ignore_eos = f.ignore_eos;
  if (parser.seen("temperature")) {
    if (!(f.temperature >= 0 && f.temperature <= 100)) return InvalidArgumentError("--temperature must be in [0, 100]");
    c.temperature = f.temperature;
  }
  c.calibrate = f.calibrate;
  c.json_path = f.json;
  c.csv_path = f.csv;
  c.html_path = f.html;
  return OkStatus();
}

}  // namespace

Status ParseBenchArgs(std::vector<std::string> args, BenchConfig* config, bool* help, std::string* usage) {
  BenchFlags flags;
  FlagParser parser("bench");
  Register(parser, flags);
  *usage = parser.Usage();
  RETURN_IF_ERROR(TakeCompare(args, &flags.compare));
  RETURN_IF_ERROR(parser.Parse(args));
  if (parser.seen("compare")) return InvalidArgumentError("--compare needs two URLs: --compare URL_A URL_B");
  *help = flags.help;
  if (flags.help) return OkStatus();
  RETURN_IF_ERROR(FillTargets(flags, *config));
  RETURN_IF_ERROR(FillLoad(flags, parser, *config));
  RETURN_IF_ERROR(FillWorkload(flags, parser, *config));
  return bench::Validate(*config);
}


}  // namespace surge
