// surge batch run IN.jsonl OUT.jsonl --url URL: an OpenAI batch input file run offline
// against any OpenAI-compatible server (vLLM's run-batch), at batch tier.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/flags.h"
#include "batch/offline_run.h"
#include "net/url.h"

namespace surge {
namespace {

const char kSummary[] =
    "surge batch run IN.jsonl OUT.jsonl --url URL [--max-in-flight N]\n"
    "Sends every line of an OpenAI batch input file ({custom_id, method: POST, url, body} per line; url\n"
    "/v1/chat/completions, /v1/completions or /v1/embeddings) to the server at URL with X-Priority: batch,\n"
    "at most N at once (the window adapts below N to the server's load; 429/503 are retried), and writes\n"
    "OUT.jsonl: one OpenAI batch output line per input line, in input order, errors included.\n";

struct BatchRunFlags {
  std::string url;
  int64_t max_in_flight = 64;
  double request_timeout_s = 600;
  bool help = false;
};

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "surge batch run: %s\n", message.c_str());
  return code;
}

}  // namespace

int RunBatch(const std::vector<std::string>& raw_args) {
  if (raw_args.empty() || raw_args[0] != "run") {
    if (!raw_args.empty() && (raw_args[0] == "--help" || raw_args[0] == "-h")) return std::printf("%s", kSummary), 0;
    return Fail(2, "the only subcommand is `run` (surge batch run IN.jsonl OUT.jsonl --url URL)");
  }
  std::vector<std::string> positional;
  std::vector<std::string> args;
  for (size_t i = 1; i < raw_args.size(); ++i) {
    const bool takes_value = raw_args[i] == "--url" || raw_args[i] == "--max-in-flight" || raw_args[i] == "--request-timeout";
    if (raw_args[i].rfind("-", 0) != 0) positional.push_back(raw_args[i]);
    else args.push_back(raw_args[i]);
    if (takes_value && i + 1 < raw_args.size()) args.push_back(raw_args[++i]);
  }
  BatchRunFlags flags;
  FlagParser parser("batch run");
  parser.AddString("url", &flags.url, "the OpenAI-compatible server, http://HOST:PORT (required)");
  parser.AddInt("max-in-flight", &flags.max_in_flight, "most requests in flight at once (default 64)");
  parser.AddDouble("request-timeout", &flags.request_timeout_s, "seconds one request may take (default 600)");
  parser.AddBool("help", &flags.help, "show this help");
  if (Status status = parser.Parse(args); !status.ok()) return Fail(2, status.message());
  if (flags.help) return std::printf("%s%s", kSummary, parser.Usage().c_str()), 0;
  if (positional.size() != 2) return Fail(2, "wants IN.jsonl and OUT.jsonl (see surge batch --help)");
  if (flags.url.empty()) return Fail(2, "--url is required");
  if (Status url = net::ParseUrl(flags.url).status(); !url.ok()) return Fail(2, "--url: " + url.message());
  if (flags.max_in_flight < 1 || flags.max_in_flight > 4096) return Fail(2, "--max-in-flight must be in [1, 4096]");
  if (!(flags.request_timeout_s > 0)) return Fail(2, "--request-timeout must be > 0");
  while (flags.url.ends_with('/')) flags.url.pop_back();
  batch::OfflineRunOptions options{positional[0], positional[1], {}};
  options.dispatch.base_url = flags.url;
  options.dispatch.max_in_flight = static_cast<int>(flags.max_in_flight);
  options.dispatch.request_timeout_ms = static_cast<int64_t>(flags.request_timeout_s * 1000);
  StatusOr<batch::OfflineRunSummary> summary = batch::RunBatchFile(options);
  if (!summary.ok()) return Fail(1, summary.status().message());
  const int64_t num_lines = summary->num_completed + summary->num_failed;
  std::printf("surge batch run: %lld lines (%lld completed, %lld failed) in %.2f s, %.1f lines/s -> %s\n",
              static_cast<long long>(num_lines), static_cast<long long>(summary->num_completed),
              static_cast<long long>(summary->num_failed), summary->seconds,
              summary->seconds > 0 ? num_lines / summary->seconds : 0.0, options.output_path.c_str());
  return 0;
}

}  // namespace surge
