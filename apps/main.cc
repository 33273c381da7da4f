// surge: one binary, one subcommand per job.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/version.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* summary;
};

constexpr Command kCommands[] = {
    {"generate", surge::RunGenerate, "generate text from a prompt on one model (offline)"},
    {"tokenize", surge::RunTokenize, "encode text to token ids, or decode ids to text"},
    {"serve", surge::RunServe, "serve a model over an OpenAI-compatible HTTP API"},
    {"route", surge::RunRoute, "an OpenAI-compatible gateway in front of many engines"},
    {"convert", surge::RunConvert, "convert a Hugging Face model directory to a GGUF file, or a GGUF file to one"},
    {"perplexity", surge::RunPerplexity, "perplexity of a model over a text file, llama-perplexity's way"},
    {"bench", surge::RunBench, "load-test an OpenAI-compatible server: latency, throughput, A/B"},
    {"plan", surge::RunPlan, "instances, concurrency and cost for a target QPS and SLO, from bench results"},
    {"alarms", surge::RunAlarms, "alarms export --prometheus: the --alarm-rules file as Prometheus alerting rules"},
    {"batch", surge::RunBatch, "batch run IN.jsonl OUT.jsonl --url URL: an OpenAI batch file run offline against a server"},
    {"scale", surge::RunScale, "scale simulate: replay a load trace through the autoscaling policy (HTML report)"},
};

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: surge COMMAND [flags]   (surge COMMAND --help for its flags; surge --version)\n\n");
  for (const Command& command : kCommands) {
    std::fprintf(out, "  %-10s %s\n", command.name, command.summary);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0) {
    std::printf("surge %s\n", surge::kSurgeVersion);
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& command : kCommands) {
    if (std::strcmp(argv[1], command.name) == 0) return command.run(args);
  }
  std::fprintf(stderr, "surge: unknown command '%s' (try `surge --help`)\n", argv[1]);
  return 2;
}
