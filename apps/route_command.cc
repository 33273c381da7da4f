// surge route: the gateway in front of many `surge serve` engines (router/README.md). Builds
// a RouteSetup from defaults, then --config FILE, then flags (apps/route_flags.h); runs a
// RouteRuntime until SIGTERM/SIGINT, which stops accepting and lets in-flight requests
// finish (bounded).
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/route_flags.h"
#include "apps/route_runtime.h"
#include "router/backend_set.h"

namespace surge {
namespace {

const char kSummary[] =
    "surge route [flags]\n"
    "An OpenAI-compatible gateway in front of many engines (surge serve, or any engine with /health and\n"
    "/metrics): routing policies per pool, health checks, circuit breakers, outlier ejection, retries before\n"
    "the first byte, streaming pass-through. Flags override --config; --backend and --pool repeat.\n"
    "Local engines: surge route --spawn N --model PATH [-- surge serve flags] starts N workers (per pool:\n"
    "--pool NAME:spawn=N[,model=PATH]), restarts a crashed one with back-off, stops them on SIGTERM.\n"
    "Batch API: --data-dir DIR serves /v1/files and /v1/batches; their lines come back through this router\n"
    "at batch tier (X-Priority: batch) and resume after a restart.\n"
    "Queue: --queue amqp://... consumes OpenAI requests from RabbitMQ (reply_to + correlation_id), runs them\n"
    "at batch tier and publishes each answer to reply_to, acking after; poison goes to NAME.dead.\n";

int Route(RouteSetup setup) {
  // Blocked in every thread (they inherit the mask), so that only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  RouteStartError error;
  std::unique_ptr<RouteRuntime> runtime = RouteRuntime::Start(std::move(setup), &error);
  if (!runtime) {
    std::fprintf(stderr, "surge route: %s\n", error.status.message().c_str());
    return error.exit_code;
  }
  const router::RouteConfig& c = runtime->config();
  std::printf("surge route: ready on %s (%zu backends, %zu pools)\n", runtime->gateway().url().c_str(),
              runtime->gateway().backends().Snapshot().size(), c.pools.size());
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "surge route: %s, draining (up to %lld ms)\n", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
               static_cast<long long>(c.drain_timeout_ms));
  runtime->Shutdown(std::chrono::milliseconds(c.drain_timeout_ms));
  std::fprintf(stderr, "surge route: stopped\n");
  return 0;
}

}  // namespace

int RunRoute(const std::vector<std::string>& args) {
  StatusOr<RouteArgs> parsed = ParseRouteArgs(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "surge route: %s\n", parsed.status().message().c_str());
    return 2;
  }
  if (parsed->help) return std::printf("%s%s", kSummary, parsed->usage.c_str()), 0;
  return Route(std::move(parsed->setup));
}

}  // namespace surge
