// surge route: the gateway in front of many `surge serve` engines (router/README.md). Builds
// a RouteConfig from defaults, then --config FILE, then flags; runs the Gateway until
// SIGTERM/SIGINT, which stops accepting and lets in-flight requests finish (bounded).
#include <pthread.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/alarm_rules_file.h"
#include "apps/batch_flags.h"
#include "apps/commands.h"
#include "apps/queue_flags.h"
#include "apps/route_alarms.h"
#include "apps/route_autoscaler.h"
#include "apps/route_kubernetes.h"
#include "apps/route_embeddings.h"
#include "apps/worker_actuator.h"
#include "autoscale/autoscaler.h"
#include "base/flags.h"
#include "router/backend_set.h"
#include "router/auth/api_keys.h"
#include "router/gateway.h"
#include "router/policy.h"
#include "router/route_config.h"
#include "router/workers/worker_supervisor.h"

namespace surge {
namespace {

using Json = nlohmann::json;

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

// A flag that maps onto one key of the config tree; applied through RouteConfigFromJson so
// that a flag and its config key are checked by the same code.
struct MappedFlag {
  const char* flag;
  const char* section;  // "" for a top-level key
  const char* key;
  enum Kind { kInt, kDouble, kString, kBool } kind;
  const char* help;
};

constexpr MappedFlag kMapped[] = {
    {"host", "listen", "host", MappedFlag::kString, "address to listen on (default 127.0.0.1)"},
    {"port", "listen", "port", MappedFlag::kInt, "port to listen on; 0: a free one (default 8080)"},
    {"connect-timeout-ms", "timeouts", "connect_ms", MappedFlag::kInt, "connect to a backend (default 2000)"},
    {"first-byte-timeout-ms", "timeouts", "first_byte_ms", MappedFlag::kInt,
     "request sent to first response byte; 0: none (default 300000)"},
    {"idle-timeout-ms", "timeouts", "idle_ms", MappedFlag::kInt, "between two chunks of a response (default 300000)"},
    {"request-timeout-ms", "timeouts", "total_ms", MappedFlag::kInt, "one attempt, whole; 0: none (default 600000)"},
    {"retries", "retry", "max_retries", MappedFlag::kInt, "retries on other backends before any byte was sent (default 2)"},
    {"retry-backoff-ms", "retry", "backoff_base_ms", MappedFlag::kInt, "back-off base, jittered, doubling (default 10)"},
    {"retry-backoff-max-ms", "retry", "backoff_max_ms", MappedFlag::kInt, "back-off cap (default 200)"},
    {"health-interval-ms", "health", "interval_ms", MappedFlag::kInt, "between /health checks and /metrics scrapes (default 1000)"},
    {"health-timeout-ms", "health", "timeout_ms", MappedFlag::kInt, "one check (default 1000)"},
    {"unhealthy-threshold", "health", "unhealthy_threshold", MappedFlag::kInt, "failed checks in a row (default 2)"},
    {"healthy-threshold", "health", "healthy_threshold", MappedFlag::kInt, "good checks in a row (default 1)"},
    {"breaker-failures", "breaker", "failure_threshold", MappedFlag::kInt, "failed requests in a row that open it (default 5)"},
    {"breaker-cooldown-ms", "breaker", "cooldown_ms", MappedFlag::kInt, "open to half-open (default 5000)"},
    {"breaker-successes", "breaker", "success_threshold", MappedFlag::kInt, "good probes that close it (default 2)"},
    {"eject-error-rate", "ejection", "max_error_rate", MappedFlag::kDouble, "error rate that ejects (default 0.5)"},
    {"eject-window-ms", "ejection", "window_ms", MappedFlag::kInt, "error-rate window (default 10000)"},
    {"eject-min-requests", "ejection", "min_requests", MappedFlag::kInt, "requests in the window to judge (default 10)"},
    {"eject-duration-ms", "ejection", "duration_ms", MappedFlag::kInt, "time out when ejected (default 30000)"},
    {"session-header", "policy_options", "session_header", MappedFlag::kString,
     "session policy's affinity header (default x-session-id; else the body's user)"},
    {"backend-capacity", "policy_options", "backend_capacity", MappedFlag::kDouble,
     "running requests that fill a backend without KV usage (least-load; default 16)"},
    {"tokenizer", "policy_options", "tokenizer", MappedFlag::kString,
     "cache-aware: the engines' model directory (its tokenizer.json and chat template)"},
    {"chat-template", "policy_options", "chat_template", MappedFlag::kString,
     "cache-aware: the engines' --chat-template file (default: the tokenizer's own)"},
    {"cache-mode", "policy_options", "cache_mode", MappedFlag::kString,
     "cache-aware: approximate (what the router sent where; default) or precise (engines' /kv_events)"},
    {"balance-abs-threshold", "policy_options", "balance_abs_threshold", MappedFlag::kDouble,
     "cache-aware: load spread (max - min requests) above which least-load decides (default 16)"},
    {"balance-rel-threshold", "policy_options", "balance_rel_threshold", MappedFlag::kDouble,
     "cache-aware: ... and max > this x min (default 1.5)"},
    {"model", "workers", "model", MappedFlag::kString, "spawned workers' model (a directory or GGUF file)"},
    {"worker-log-dir", "workers", "log_dir", MappedFlag::kString,
     "spawned workers' output to DIR/NAME.log (default: this stderr, prefixed)"},
    {"worker-health-timeout-ms", "workers", "health_timeout_ms", MappedFlag::kInt,
     "a spawned worker slower than this to answer /health is restarted (default 120000)"},
    {"api-keys", "", "api_keys", MappedFlag::kString,
     "API keys file (JSON; router/auth/README.md), merged with $SURGE_ROUTE_API_KEYS; none: open"},
    {"otlp-endpoint", "tracing", "otlp_endpoint", MappedFlag::kString,
     "export route / backend_attempt spans as OTLP/HTTP to this URL (default: tracing off)"},
    {"otlp-protocol", "tracing", "protocol", MappedFlag::kString, "http/protobuf (default) | http/json"},
    {"trace-sample-ratio", "tracing", "sample_ratio", MappedFlag::kDouble,
     "fraction of new traces recorded (a client's traceparent decides for its own; default 1)"},
    {"otlp-service-name", "tracing", "service_name", MappedFlag::kString, "service.name (default surge-route)"},
    {"kubernetes", "kubernetes", "target", MappedFlag::kString,
     "NAMESPACE/SELECTOR: engines = ready endpoints of the matching EndpointSlices (watched)"},
    {"kubernetes-port-name", "kubernetes", "port_name", MappedFlag::kString, "the slices' port to use (default http)"},
    {"kubernetes-deployment", "kubernetes", "deployment", MappedFlag::kString,
     "the engines' Deployment: --autoscale scales it through its scale subresource"},
    {"cache", "cache", "backend", MappedFlag::kString,
     "exact response cache: memory | redis://HOST[:PORT][/DB] (default: off; router/cache/README.md)"},
    {"cache-ttl", "cache", "ttl_s", MappedFlag::kInt, "seconds a cached answer lives (default 300; a body's cache.ttl_s wins)"},
    {"cache-max-bytes", "cache", "max_bytes", MappedFlag::kInt, "memory cache: LRU bound in bytes (default 268435456)"},
    {"cache-max-entries", "cache", "max_entries", MappedFlag::kInt, "memory cache: LRU bound in entries (default 100000)"},
    {"cache-max-entry-bytes", "cache", "max_entry_bytes", MappedFlag::kInt,
     "answers larger than this are not cached (default 1048576)"},
    {"cache-redis-pool", "cache", "redis_pool", MappedFlag::kInt, "redis cache: connections (default 4)"},
    {"cache-redis-timeout-ms", "cache", "redis_timeout_ms", MappedFlag::kInt,
     "redis cache: connect and command timeout; past it the request goes on uncached (default 100)"},
    {"semantic", "cache", "semantic.all", MappedFlag::kBool,
     "semantic cache for every eligible chat request (else per model: cache.semantic.models, or per key: "
     "\"semantic_cache\": true); needs --cache and --embeddings-url or --embeddings-spawn"},
    {"embeddings-url", "cache", "semantic.embeddings_url", MappedFlag::kString,
     "semantic cache: an OpenAI-compatible base URL (http://HOST:PORT/v1); the router POSTs /embeddings"},
    {"embeddings-spawn", "cache", "semantic.embeddings_spawn", MappedFlag::kString,
     "semantic cache: a sentence-encoder directory (BERT family, e.g. models/all-MiniLM-L6-v2) that the router "
     "serves on a local surge serve worker of its own (1 thread) instead of --embeddings-url"},
    {"embeddings-model", "cache", "semantic.embeddings_model", MappedFlag::kString,
     "semantic cache: the model field of each /embeddings request (default: none sent)"},
    {"embeddings-timeout-ms", "cache", "semantic.embeddings_timeout_ms", MappedFlag::kInt,
     "semantic cache: one embeddings call; past it the request goes on uncached (default 500)"},
    {"semantic-threshold", "cache", "semantic.threshold", MappedFlag::kDouble,
     "semantic cache: cosine similarity a hit needs (default 0.94; per model: cache.semantic.models)"},
    {"semantic-guard", "cache", "semantic.guard", MappedFlag::kBool,
     "semantic cache: the lexical guard (numbers, negation, names) must agree too (default true)"},
    {"semantic-max-entries", "cache", "semantic.max_entries", MappedFlag::kInt,
     "semantic cache: vectors held across all scopes, LRU beyond (default 100000)"},
    {"max-body-bytes", "", "max_body_bytes", MappedFlag::kInt, "larger request bodies get 413 (default 8388608)"},
    {"forward-authorization", "", "forward_authorization", MappedFlag::kBool, "pass Authorization to the backends"},
    {"drain-timeout-ms", "", "drain_timeout_ms", MappedFlag::kInt, "on SIGTERM, how long requests may finish (default 30000)"},
};

struct RouteFlags {
  std::string config_file;
  std::string policy;
  std::vector<std::string> backends;  // --backend, repeatable
  std::vector<std::string> pools;     // --pool, repeatable
  std::vector<std::string> engine_args;  // after `--`: flags for every spawned worker
  int64_t spawn = 0;
  std::string tiers;  // --tiers P1,P2,P3
  std::string autoscale_file;  // --autoscale POLICY_FILE
  std::string alarm_rules_file;  // --alarm-rules FILE
  BatchFlags batch;              // --data-dir and the Batch API's other flags
  QueueFlags queue;              // --queue and the consumer's other flags
  std::vector<std::string> mapped_strings = std::vector<std::string>(std::size(kMapped));
  std::vector<int64_t> mapped_ints = std::vector<int64_t>(std::size(kMapped));
  std::vector<double> mapped_doubles = std::vector<double>(std::size(kMapped));
  std::deque<bool> mapped_bools = std::deque<bool>(std::size(kMapped));  // deque: AddBool keeps pointers
  bool help = false;
};

// --backend and --pool repeat, which FlagParser does not do: they are taken out first.
std::vector<std::string> TakeRepeated(const std::vector<std::string>& args, RouteFlags* flags, Status* status) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {  // the rest belongs to the spawned workers' `surge serve`
      flags->engine_args.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    for (auto [name, out] : {std::pair{"--backend", &flags->backends}, std::pair{"--pool", &flags->pools}}) {
      const std::string prefix = std::string(name) + "=";
      if (args[i] == name) {
        if (i + 1 == args.size()) *status = InvalidArgumentError(std::string(name) + ": missing value");
        else out->push_back(args[++i]);
        goto next;
      }
      if (args[i].rfind(prefix, 0) == 0) {
        out->push_back(args[i].substr(prefix.size()));
        goto next;
      }
    }
    rest.push_back(args[i]);
  next:;
  }
  return rest;
}

void Register(FlagParser& parser, RouteFlags& f, std::string* unused_string) {
  parser.AddString("backend", unused_string, "URL[,pool=NAME][,weight=W]: a backend (repeatable)");
  parser.AddString("pool", unused_string, "NAME[,policy=P][,models=a|b]: declare a pool (repeatable)");
  parser.AddString("policy", &f.policy, "the default pool's policy: " + [] {
    std::string names;
    for (const std::string& name : router::PolicyNames()) names += (names.empty() ? "" : ", ") + name;
    return names;
  }() + " (default least-load)");
  parser.AddString("config", &f.config_file, "a config file, JSON or YAML (README.md: surge route); flags override it");
  parser.AddString("tiers", &f.tiers,
                   "REALTIME_POOL,NORMAL_POOL,BATCH_POOL: priority tiers on, each tier's own pool (borrowing,"
                   " weighted queues; more keys in the config's tiers section)");
  parser.AddString("autoscale", &f.autoscale_file,
                   "POLICY_FILE (JSON, autoscale/README.md): scale the spawned pools by their metrics and schedules");
  parser.AddString("alarm-rules", &f.alarm_rules_file,
                   "FILE (YAML or JSON, obs/README.md): alarm rules on this router's metrics; actions log, webhook, "
                   "scale_up (needs --autoscale), restart_instance (spawned workers); GET /alarms "
                   "(e.g. deploy/alarms/seed_rules.yaml)");
  RegisterBatchFlags(parser, f.batch);
  RegisterQueueFlags(parser, f.queue);
  parser.AddInt("spawn", &f.spawn, "start N local surge serve workers in the default pool (needs --model)");
  for (size_t i = 0; i < std::size(kMapped); ++i) {
    const MappedFlag& m = kMapped[i];
    switch (m.kind) {
      case MappedFlag::kInt: parser.AddInt(m.flag, &f.mapped_ints[i], m.help); break;
      case MappedFlag::kDouble: parser.AddDouble(m.flag, &f.mapped_doubles[i], m.help); break;
      case MappedFlag::kString: parser.AddString(m.flag, &f.mapped_strings[i], m.help); break;
      case MappedFlag::kBool: parser.AddBool(m.flag, &f.mapped_bools[i], m.help); break;
    }
  }
  parser.AddBool("help", &f.help, "show this help");
}

// A key "a.b" names a nested one: {"a": {"b": value}}.
Json NestedTree(std::string_view dotted_key, Json value) {
  const size_t dot = dotted_key.find('.');
  if (dot == std::string_view::npos) return Json{{std::string(dotted_key), std::move(value)}};
  return Json{{std::string(dotted_key.substr(0, dot)), NestedTree(dotted_key.substr(dot + 1), std::move(value))}};
}

Status ApplyMappedFlags(const FlagParser& parser, const RouteFlags& f, router::RouteConfig* config) {
  for (size_t i = 0; i < std::size(kMapped); ++i) {
    const MappedFlag& m = kMapped[i];
    if (!parser.seen(m.flag)) continue;
    Json value;
    switch (m.kind) {
      case MappedFlag::kInt: value = f.mapped_ints[i]; break;
      case MappedFlag::kDouble: value = f.mapped_doubles[i]; break;
      case MappedFlag::kString: value = f.mapped_strings[i]; break;
      case MappedFlag::kBool: value = static_cast<bool>(f.mapped_bools[i]); break;
    }
    Json tree = *m.section ? Json{{m.section, NestedTree(m.key, value)}} : NestedTree(m.key, value);
    StatusOr<router::RouteConfig> applied = router::RouteConfigFromJson(tree, *config);
    if (!applied.ok()) return applied.status().WithContext(std::string("--") + m.flag);
    *config = std::move(applied).value();
  }
  return OkStatus();
}

Status BuildConfig(const FlagParser& parser, const RouteFlags& f, router::RouteConfig* config) {
  if (!f.config_file.empty()) {
    StatusOr<router::RouteConfig> loaded = router::LoadRouteConfigFile(f.config_file, *config);
    if (!loaded.ok()) return loaded.status().WithContext("--config");
    *config = std::move(loaded).value();
  }
  config->pools.try_emplace(router::kDefaultPool);
  for (const std::string& spec : f.pools) {
    if (Status status = router::ApplyPoolSpec(spec, config); !status.ok()) return status;
  }
  if (parser.seen("policy")) config->pools[router::kDefaultPool].policy = f.policy;
  if (parser.seen("spawn")) config->pools[router::kDefaultPool].spawn = f.spawn;
  if (!f.engine_args.empty()) config->engine_args = f.engine_args;
  if (parser.seen("tiers")) {
    std::vector<std::string> pools;
    for (size_t start = 0;;) {
      const size_t comma = f.tiers.find(',', start);
      pools.push_back(f.tiers.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (pools.size() != 3) return InvalidArgumentError("--tiers wants three pools: REALTIME,NORMAL,BATCH");
    Json tree{{"tiers", {{"pools", {{"realtime", pools[0]}, {"normal", pools[1]}, {"batch", pools[2]}}}}}};
    StatusOr<router::RouteConfig> applied = router::RouteConfigFromJson(tree, *config);
    if (!applied.ok()) return applied.status().WithContext("--tiers");
    *config = std::move(applied).value();
  }
  for (const std::string& spec : f.backends) {
    StatusOr<router::BackendConfig> backend = router::ParseBackendSpec(spec);
    if (!backend.ok()) return backend.status();
    config->backends.push_back(std::move(backend).value());
  }
  if (Status status = ApplyMappedFlags(parser, f, config); !status.ok()) return status;
  // cache-aware reads the engines' tokenizer: the spawned workers' model unless told otherwise.
  if (config->policy_options.tokenizer.empty()) config->policy_options.tokenizer = config->model;
  return router::ValidateRouteConfig(*config);
}

// The pools' spawned workers, joining the gateway as each answers /health (and leaving it
// when it exits); null when no pool spawns. Waits until all are up: a worker that exits
// before its first /health (a bad model or engine flag) is an error, not a retry loop.
StatusOr<std::unique_ptr<router::WorkerSupervisor>> StartWorkers(router::Gateway& gateway) {
  const router::RouteConfig& config = gateway.config();
  std::vector<router::WorkerSpec> specs;
  for (const auto& [name, pool] : config.pools) {
    if (pool.spawn == 0) continue;
    std::vector<std::string> engine_args = pool.engine_args.empty() ? config.engine_args : pool.engine_args;
    specs.push_back({.pool = name, .num_workers = static_cast<int32_t>(pool.spawn), .surge_binary = "/proc/self/exe",
                     .model_path = pool.model.empty() ? config.model : pool.model,
                     .engine_args = std::move(engine_args)});
  }
  if (specs.empty()) return std::unique_ptr<router::WorkerSupervisor>();
  router::SupervisorOptions options;
  options.health_timeout_ms = config.worker_health_timeout_ms;
  options.log_dir = config.worker_log_dir;
  // Above the workers' own --drain-timeout default (30 s): SIGTERM lets them drain.
  options.stop_timeout_ms = std::max<int64_t>(35'000, config.drain_timeout_ms + 5'000);
  auto on_event = [&gateway](const router::WorkerEvent& event) {
    Status status = event.kind == router::WorkerEvent::kUp ? gateway.AddBackend(event.pool, event.url)
                                                           : gateway.RemoveBackend(event.url);
    if (!status.ok()) std::fprintf(stderr, "surge route: worker %s: %s\n", event.name.c_str(), status.message().c_str());
  };
  StatusOr<std::unique_ptr<router::WorkerSupervisor>> supervisor =
      router::WorkerSupervisor::Start(std::move(specs), options, on_event);
  if (!supervisor.ok()) return supervisor.status();
  if (Status status = (*supervisor)->WaitUntilUp(config.worker_health_timeout_ms); !status.ok()) return status;
  // WaitUntilUp sees the workers up; their kUp events (AddBackend) follow on the
  // supervisor's thread: the router is ready once the gateway has them all.
  size_t num_expected = config.backends.size();
  for (const auto& [name, pool] : config.pools) num_expected += static_cast<size_t>(pool.spawn);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (gateway.backends().Snapshot().size() < num_expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return supervisor;
}

// The Batch API on the gateway (--data-dir), or its routes answering 404 saying how to turn
// it on; null when off.
StatusOr<std::unique_ptr<batch::BatchService>> MountBatchApi(router::Gateway& gateway,
                                                             std::optional<batch::BatchServiceOptions> options) {
  const batch::AddRoute add = [&gateway](std::string method, std::string path, net::Handler handler, size_t max_body_bytes) {
    gateway.AddRoute(std::move(method), std::move(path), std::move(handler), max_body_bytes);
  };
  if (!options) {
    batch::MountBatchApiOff(add, "start surge route with --data-dir DIR");
    return std::unique_ptr<batch::BatchService>();
  }
  options->metrics = &gateway.metrics_registry();
  ASSIGN_OR_RETURN(std::unique_ptr<batch::BatchService> service, batch::BatchService::Open(*std::move(options)));
  service->Mount(add);
  return service;
}

int Route(router::RouteConfig config, std::optional<autoscale::AutoscaleConfig> autoscale_config,
          std::optional<obs::AlarmConfig> alarm_config, std::optional<batch::BatchServiceOptions> batch_options,
          std::optional<queue::QueueOptions> queue_options) {
  // Blocked in every thread (they inherit the mask), so that only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  StatusOr<std::unique_ptr<router::WorkerSupervisor>> embedder = StartEmbeddingsWorker(&config);
  if (!embedder.ok()) {
    std::fprintf(stderr, "surge route: --embeddings-spawn: %s\n", embedder.status().message().c_str());
    return 2;
  }
  StatusOr<std::unique_ptr<router::Gateway>> gateway = router::Gateway::Create(std::move(config));
  if (!gateway.ok()) {
    std::fprintf(stderr, "surge route: %s\n", gateway.status().message().c_str());
    return 2;  // bad config: a policy name, a backend URL
  }
  StatusOr<std::unique_ptr<batch::BatchService>> batch_api = MountBatchApi(**gateway, std::move(batch_options));
  if (!batch_api.ok()) {
    std::fprintf(stderr, "surge route: --data-dir: %s\n", batch_api.status().message().c_str());
    return 1;
  }
  if (Status status = (*gateway)->Start(); !status.ok()) {
    std::fprintf(stderr, "surge route: %s\n", status.message().c_str());
    return 1;
  }
  StatusOr<std::unique_ptr<router::WorkerSupervisor>> workers = StartWorkers(**gateway);
  if (!workers.ok()) {
    std::fprintf(stderr, "surge route: %s\n", workers.status().message().c_str());
    return 2;  // a worker that cannot start: a bad model path or engine flag
  }
  const router::RouteConfig::Kubernetes& kube = (*gateway)->config().kubernetes;
  const KubernetesFlags kube_flags{kube.target, kube.port_name, kube.deployment};
  std::unique_ptr<autoscale::k8s::EndpointSliceWatcher> discovery;
  if (!kube.target.empty()) {
    StatusOr<std::unique_ptr<autoscale::k8s::EndpointSliceWatcher>> started = StartKubernetesDiscovery(kube_flags, **gateway);
    if (!started.ok()) {
      std::fprintf(stderr, "surge route: %s\n", started.status().message().c_str());
      return 2;
    }
    discovery = std::move(started).value();
  }
  std::unique_ptr<RouteAutoscaler> autoscaler;
  if (autoscale_config) {
    StatusOr<std::unique_ptr<ScaleActuator>> actuator =
        *workers ? StatusOr<std::unique_ptr<ScaleActuator>>(MakeWorkerActuator((*gateway)->config(), **workers))
        : !kube.target.empty()
            ? MakeKubernetesActuator(kube_flags)
            : StatusOr<std::unique_ptr<ScaleActuator>>(InvalidArgumentError(
                  "--autoscale scales spawned workers (--spawn N) or a Kubernetes Deployment (--kubernetes-deployment)"));
    StatusOr<std::unique_ptr<RouteAutoscaler>> started =
        actuator.ok() ? RouteAutoscaler::Start(std::move(*autoscale_config), **gateway, std::move(actuator).value())
                      : StatusOr<std::unique_ptr<RouteAutoscaler>>(actuator.status());
    if (!started.ok()) {
      std::fprintf(stderr, "surge route: %s\n", started.status().message().c_str());
      return 2;
    }
    autoscaler = std::move(started).value();
  }
  std::shared_ptr<obs::AlarmRunner> alarms;
  if (alarm_config) {
    StatusOr<std::shared_ptr<obs::AlarmRunner>> started =
        StartRouteAlarms(std::move(*alarm_config), **gateway, workers->get(), autoscaler.get());
    if (!started.ok()) {
      std::fprintf(stderr, "surge route: %s\n", started.status().message().c_str());
      return 2;
    }
    alarms = std::move(started).value();
  }
  const router::RouteConfig& c = (*gateway)->config();
  // After the workers are up: the lines go through this router, at batch tier.
  if (*batch_api) (*batch_api)->StartRunner(batch::LoopbackBaseUrl(c.host, (*gateway)->port()));
  std::unique_ptr<queue::QueueConsumer> consumer;  // like the runner: through this router, at batch tier
  if (queue_options) {
    queue_options->base_url = batch::LoopbackBaseUrl(c.host, (*gateway)->port());
    queue_options->metrics = &(*gateway)->metrics_registry();
    consumer = std::make_unique<queue::QueueConsumer>(*std::move(queue_options));
  }
  std::printf("surge route: ready on %s (%zu backends, %zu pools)\n", (*gateway)->url().c_str(),
              (*gateway)->backends().Snapshot().size(), c.pools.size());
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "surge route: %s, draining (up to %lld ms)\n", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
               static_cast<long long>(c.drain_timeout_ms));
  if (consumer) consumer->Stop();  // unacked messages go back to the queue
  if (*batch_api) (*batch_api)->Stop();  // lines in flight stay pending for the next start
  if (alarms) alarms->Stop();  // no actions from here on
  if (autoscaler) autoscaler->Stop();  // no resizing while the workers drain
  if (discovery) discovery->Stop();
  (*gateway)->Shutdown(std::chrono::milliseconds(c.drain_timeout_ms));
  if (*workers) (*workers)->Stop();  // after the drain: the workers finish what the router sent
  if (*embedder) (*embedder)->Stop();
  std::fprintf(stderr, "surge route: stopped\n");
  return 0;
}

}  // namespace

int RunRoute(const std::vector<std::string>& raw_args) {
  RouteFlags flags;
  Status status;
  const std::vector<std::string> args = TakeRepeated(raw_args, &flags, &status);
  FlagParser parser("route");
  std::string unused;
  Register(parser, flags, &unused);
  if (status.ok()) status = parser.Parse(args);
  if (!status.ok()) {
    std::fprintf(stderr, "surge route: %s\n", status.message().c_str());
    return 2;
  }
  if (flags.help) return std::printf("%s%s", kSummary, parser.Usage().c_str()), 0;
  router::RouteConfig config;
  if (status = BuildConfig(parser, flags, &config); !status.ok()) {
    std::fprintf(stderr, "surge route: %s\n", status.message().c_str());
    return 2;
  }
  std::optional<autoscale::AutoscaleConfig> autoscale_config;
  if (!flags.autoscale_file.empty()) {
    StatusOr<autoscale::AutoscaleConfig> loaded = autoscale::LoadAutoscaleConfig(flags.autoscale_file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "surge route: --autoscale: %s\n", loaded.status().message().c_str());
      return 2;
    }
    autoscale_config = std::move(loaded).value();
  }
  std::optional<obs::AlarmConfig> alarm_config;
  if (!flags.alarm_rules_file.empty()) {
    StatusOr<obs::AlarmConfig> loaded = LoadAlarmRulesFile(flags.alarm_rules_file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "surge route: --alarm-rules: %s\n", loaded.status().message().c_str());
      return 2;
    }
    alarm_config = std::move(loaded).value();
  }
  StatusOr<std::optional<queue::QueueOptions>> queue_options = ToQueueOptions(flags.queue, flags.batch.max_in_flight, parser);
  if (!queue_options.ok()) {
    std::fprintf(stderr, "surge route: %s\n", queue_options.status().message().c_str());
    return 2;
  }
  // --batch-max-in-flight also bounds the queue consumer: it needs --data-dir or --queue.
  if (parser.seen("batch-max-in-flight") && flags.batch.data_dir.empty() && !queue_options->has_value()) {
    std::fprintf(stderr, "surge route: --batch-max-in-flight needs --data-dir or --queue\n");
    return 2;
  }
  StatusOr<std::optional<batch::BatchServiceOptions>> batch_options =
      ToBatchOptions(flags.batch, parser, /*in_flight_used_elsewhere=*/queue_options->has_value());
  if (!batch_options.ok()) {
    std::fprintf(stderr, "surge route: %s\n", batch_options.status().message().c_str());
    return 2;
  }
  // The batch runner and the queue consumer send their requests back through this router
  // without a key: with keys on they would all be 401s, so the combination is refused. (A
  // keys file that does not load is the gateway's error to report.)
  StatusOr<router::ApiKeyStore> keys = router::ApiKeyStore::Load(config.api_keys_file, std::getenv(router::kApiKeysEnv));
  if (keys.ok() && !keys->open() && (batch_options->has_value() || queue_options->has_value())) {
    std::fprintf(stderr, "surge route: %s cannot be used with API keys (--api-keys, $SURGE_ROUTE_API_KEYS) yet: "
                 "its requests to this router would carry no key\n",
                 batch_options->has_value() ? "--data-dir (the Batch API)" : "--queue");
    return 2;
  }
  return Route(std::move(config), std::move(autoscale_config), std::move(alarm_config), *std::move(batch_options),
               *std::move(queue_options));
}

}  // namespace surge
