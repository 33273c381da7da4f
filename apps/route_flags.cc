#include "apps/route_flags.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "apps/alarm_rules_file.h"
#include "apps/batch_flags.h"
#include "apps/queue_flags.h"
#include "base/flags.h"
#include "router/auth/api_keys.h"
#include "router/policy.h"

namespace surge {
namespace {

using Json = nlohmann::json;

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

// The side configs the flags name: the autoscale policy, the alarm rules, the Batch API and
// the queue consumer.
Status LoadSideConfigs(const FlagParser& parser, const RouteFlags& flags, RouteSetup* setup) {
  if (!flags.autoscale_file.empty()) {
    StatusOr<autoscale::AutoscaleConfig> loaded = autoscale::LoadAutoscaleConfig(flags.autoscale_file);
    if (!loaded.ok()) return loaded.status().WithContext("--autoscale");
    setup->autoscale = std::move(loaded).value();
  }
  if (!flags.alarm_rules_file.empty()) {
    StatusOr<obs::AlarmConfig> loaded = LoadAlarmRulesFile(flags.alarm_rules_file);
    if (!loaded.ok()) return loaded.status().WithContext("--alarm-rules");
    setup->alarms = std::move(loaded).value();
  }
  ASSIGN_OR_RETURN(setup->queue, ToQueueOptions(flags.queue, flags.batch.max_in_flight, parser));
  // --batch-max-in-flight also bounds the queue consumer: it needs --data-dir or --queue.
  if (parser.seen("batch-max-in-flight") && flags.batch.data_dir.empty() && !setup->queue) {
    return InvalidArgumentError("--batch-max-in-flight needs --data-dir or --queue");
  }
  ASSIGN_OR_RETURN(setup->batch, ToBatchOptions(flags.batch, parser, /*in_flight_used_elsewhere=*/setup->queue.has_value()));
  // The batch runner and the queue consumer send their requests back through this router
  // without a key: with keys on they would all be 401s, so the combination is refused. (A
  // keys file that does not load is the gateway's error to report.)
  StatusOr<router::ApiKeyStore> keys =
      router::ApiKeyStore::Load(setup->config.api_keys_file, std::getenv(router::kApiKeysEnv));
  if (keys.ok() && !keys->open() && (setup->batch || setup->queue)) {
    return InvalidArgumentError(std::string(setup->batch ? "--data-dir (the Batch API)" : "--queue") +
                                " cannot be used with API keys (--api-keys, $SURGE_ROUTE_API_KEYS) yet: "
                                "its requests to this router would carry no key");
  }
  return OkStatus();
}

}  // namespace

StatusOr<RouteArgs> ParseRouteArgs(const std::vector<std::string>& raw_args) {
  RouteFlags flags;
  Status status;
  const std::vector<std::string> args = TakeRepeated(raw_args, &flags, &status);
  FlagParser parser("route");
  std::string unused;
  Register(parser, flags, &unused);
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(parser.Parse(args));
  RouteArgs parsed;
  parsed.help = flags.help;
  parsed.usage = parser.Usage();
  if (flags.help) return parsed;
  RETURN_IF_ERROR(BuildConfig(parser, flags, &parsed.setup.config));
  RETURN_IF_ERROR(LoadSideConfigs(parser, flags, &parsed.setup));
  return parsed;
}

}  // namespace surge
