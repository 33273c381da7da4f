// surge serve: one model behind the OpenAI-compatible HTTP API until SIGTERM/SIGINT, which
// drains in-flight requests (up to --drain-timeout) and exits 0. The flags: apps/serve_flags.h.
#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/serve_flags.h"
#include "apps/serve_runtime.h"

namespace surge {
namespace {

const char kSummary[] =
    "surge serve [MODEL] [flags] (or --model MODEL)\n"
    "Serves MODEL (a Hugging Face model directory or a llama/qwen2/qwen3 .gguf file; default\n"
    "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf, installed by scripts/setup.sh)\n"
    "over an OpenAI-compatible HTTP API:\n"
    "/v1/completions, /v1/chat/completions, /v1/embeddings, /v1/models, /tokenize, /detokenize, /health, /metrics,\n"
    "/ping, /version, and what sgl-router and vllm-router ask of a worker (/get_load, /server_info, /model_info);\n"
    "MODEL may also be a model id (ORG/NAME) already in the local Hugging Face cache. vLLM's flags: docs/VLLM_COMPAT.md.\n"
    "with --data-dir DIR also the Batch API (/v1/files, /v1/batches), its lines run here at batch priority.\n";

void PrintReadyLine(const ServeRuntime& runtime) {
  const ServeConfig& config = runtime.config();
  const std::string host = config.server.host == "0.0.0.0" || config.server.host == "::" ? "127.0.0.1" : config.server.host;
  const std::string url = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                          std::to_string(runtime.port());
  const char* example = config.server.encoder ? "/v1/embeddings -H 'Content-Type: application/json' -d '{\"input\": \"Once upon a time\"}'"
                                             : "/v1/completions -H 'Content-Type: application/json' -d '{\"prompt\": "
                                               "\"Once upon a time\", \"max_tokens\": 32}'";
  std::printf("surge serve: ready on %s (model %s) -- try: curl %s%s\n", url.c_str(),
              config.server.served_model_name.c_str(), url.c_str(), example);
  std::fflush(stdout);
}

int Serve(ServeConfig config, double drain_timeout_s) {
  // Blocked in every thread (they inherit the mask), so that only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto runtime = ServeRuntime::Start(std::move(config));
  if (!runtime.ok()) {
    std::fprintf(stderr, "surge serve: %s\n", runtime.status().message().c_str());
    return 1;
  }
  PrintReadyLine(**runtime);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "surge serve: %s, draining (up to %g s)\n", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
               drain_timeout_s);
  (*runtime)->Shutdown(std::chrono::milliseconds(static_cast<int64_t>(std::llround(drain_timeout_s * 1000))));
  std::fprintf(stderr, "surge serve: stopped\n");
  return 0;
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  int exit_code = 2;
  StatusOr<ServeArgs> parsed = ParseServeArgs(args, &exit_code);
  if (!parsed.ok()) {
    std::fprintf(stderr, "surge serve: %s\n", parsed.status().message().c_str());
    return exit_code;
  }
  if (parsed->help) return std::printf("%s%s", kSummary, parsed->usage.c_str()), 0;
  return Serve(std::move(parsed->config), parsed->drain_timeout_s);
}

}  // namespace surge
