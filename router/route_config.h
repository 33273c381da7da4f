// RouteConfig: everything `surge route` is told (backends, pools, policies, health, breaker,
// ejection, retries, timeouts, limits, listen address), parsed from one JSON tree so that a
// --config JSON file, a YAML file converted to the same tree and the command-line flags all
// end in the same struct.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "router/cache/cache_config.h"
#include "router/complexity.h"
#include "router/tiers/tiers_config.h"

namespace surge::router {

inline constexpr char kDefaultPool[] = "default";

struct BackendConfig {
  std::string url;                // "http://127.0.0.1:8001"
  std::string pool = kDefaultPool;
  double weight = 1.0;            // > 0; round-robin share, session ring share
};

struct PoolConfig {
  std::string policy = "least-load";
  std::vector<std::string> models;  // `model` values this pool serves besides its own name
  // Local engines `surge route` starts for this pool (router/workers/): `spawn` workers of
  // `surge serve MODEL ENGINE_ARGS`; model and engine_args default to RouteConfig's.
  int64_t spawn = 0;
  std::string model;
  std::vector<std::string> engine_args;
};

struct PolicyOptions {
  std::string session_header = "x-session-id";  // session affinity key; else the body's "user"
  // Running requests a backend counts as full when it reports no KV usage (least-load's
  // load = running / capacity).
  double backend_capacity = 16;
  uint64_t seed = 0;  // p2c's and cache-aware's random choices; 0: seeded from the clock
  // cache-aware: the engines' tokenizer (a model directory) and chat template file ("" = the
  // tokenizer's own), approximate (what this router sent where) or precise (GET /kv_events),
  // and the balance guard (router/prefix/README.md "Scoring").
  std::string tokenizer;
  std::string chat_template;
  std::string cache_mode = "approximate";
  double balance_abs_threshold = 16;
  double balance_rel_threshold = 1.5;
};

struct HealthConfig {
  int64_t interval_ms = 1'000;     // between /health checks of one backend (and /metrics scrapes)
  int64_t timeout_ms = 1'000;      // one check
  int64_t unhealthy_threshold = 2; // consecutive failed checks before a backend is unhealthy
  int64_t healthy_threshold = 1;   // consecutive good checks before it is healthy again
};

struct BreakerConfig {
  int64_t failure_threshold = 5;   // consecutive failed requests that open the breaker
  int64_t cooldown_ms = 5'000;     // open → half-open (one probe request)
  int64_t success_threshold = 2;   // successful probes that close it again
};

struct EjectionConfig {
  int64_t window_ms = 10'000;      // error rate measured over this sliding window
  int64_t min_requests = 10;       // fewer requests in the window never eject
  double max_error_rate = 0.5;     // errors + timeouts / requests above it eject
  int64_t duration_ms = 30'000;    // how long an ejected backend stays out
};

struct RetryConfig {
  int64_t max_retries = 2;         // further attempts on other backends, before any byte is sent
  int64_t backoff_base_ms = 10;    // attempt n waits a uniform random [0, base * 2^n], capped
  int64_t backoff_max_ms = 200;
};

// LLM answers are slow by nature: a non-streamed answer's head comes only when the whole
// generation is done, and a stream queued behind a busy engine may be silent for as long
// as its prefill waits. Minutes, not nginx's 60 s, or long answers fail under load.
struct TimeoutConfig {
  int64_t connect_ms = 2'000;
  int64_t first_byte_ms = 300'000;  // request sent → first response byte (covers prefill)
  int64_t idle_ms = 300'000;        // between two chunks of a response
  int64_t total_ms = 600'000;      // one attempt, whole; 0: none
};

struct RouteConfig {
  std::string host = "127.0.0.1";
  int64_t port = 8080;
  std::vector<BackendConfig> backends;
  std::map<std::string, PoolConfig> pools;  // always holds kDefaultPool after parsing
  PolicyOptions policy_options;
  HealthConfig health;
  BreakerConfig breaker;
  EjectionConfig ejection;
  RetryConfig retry;
  TimeoutConfig timeouts;
  int64_t max_body_bytes = 8 << 20;  // a larger request body is refused with 413
  bool forward_authorization = false;  // pass the client's Authorization header to backends
  int64_t drain_timeout_ms = 30'000;   // SIGTERM: how long in-flight requests may finish
  // Spawned workers (`--spawn`, `--model`, flags after `--`, `--worker-log-dir`; config
  // section "workers": {"model", "engine_args", "log_dir", "health_timeout_ms"}).
  std::string model;
  std::vector<std::string> engine_args;
  std::string worker_log_dir;             // "": worker output goes to stderr, prefixed
  // API keys (router/auth/README.md): a JSON file, merged with $SURGE_ROUTE_API_KEYS; none = open.
  std::string api_keys_file;
  // Priority tiers (router/tiers/README.md): off unless the "tiers" section or --tiers is given.
  std::optional<TiersConfig> tiers;
  // OTLP/HTTP export of the route and backend_attempt spans (router/route_trace.h); off
  // while otlp_endpoint is empty. Config section "tracing": {"otlp_endpoint", "protocol",
  // "sample_ratio", "service_name"}.
  struct Tracing {
    std::string otlp_endpoint;
    std::string protocol = "http/protobuf";  // or http/json
    double sample_ratio = 1.0;
    std::string service_name = "surge-route";
  } tracing;
  // Engines discovered on Kubernetes (fleet/route_kubernetes.h): the ready endpoints of the
  // EndpointSlices `target` ("NAMESPACE/SELECTOR") matches, in the default pool; off when
  // empty. Config section "kubernetes": {"target", "port_name", "deployment"}.
  struct Kubernetes {
    std::string target;
    std::string port_name = "http";
    std::string deployment;  // the engines' Deployment, scaled by --autoscale
  } kubernetes;
  // `model` aliases routed by request complexity (router/complexity.h), by alias name.
  std::map<std::string, ComplexityRule> aliases;
  int64_t worker_health_timeout_ms = 120'000;
  // The response cache (router/cache/README.md); off while cache.backend is empty.
  // Config section "cache": {"backend", "ttl_s", "max_entry_bytes", "max_bytes",
  // "max_entries", "redis_pool", "redis_timeout_ms", "semantic": {"all", "models",
  // "embeddings_url", "embeddings_model", "embeddings_timeout_ms", "threshold", "guard",
  // "max_entries"}}.
  ResponseCacheConfig cache;
};

// The JSON tree's shape (every key optional; an unknown key anywhere is INVALID_ARGUMENT
// naming its path, as is a value of the wrong type or out of range):
//   {"listen": {"host", "port"}, "backends": [{"url", "pool", "weight"}],
//    "pools": {"NAME": {"policy", "models": [..], "spawn", "model", "engine_args": [..]}},
//    "workers": {"model", "engine_args": [..], "log_dir", "health_timeout_ms"},
//    "tiers": {...} (router/tiers/README.md), "api_keys": FILE,
//    "aliases": {"auto": {"small", "large", "prompt_tokens_over", "max_tokens_over", "reasoning", "code"}},
//    "policy_options": {...}, "health": {...},
//    "breaker": {...}, "ejection": {...}, "retry": {...}, "timeouts": {...},
//    "cache": {...} (router/cache/README.md),
//    "max_body_bytes", "forward_authorization", "drain_timeout_ms"}
// Keys inside the sections are the field names above. Values are applied over `base`, so
// flags can be layered on top of a file (or a file on top of defaults).
StatusOr<RouteConfig> RouteConfigFromJson(const nlohmann::json& tree, RouteConfig base = {});
// Reads and parses a config file: *.json as JSON, anything else (*.yaml, *.yml) as YAML
// (base/yaml/); errors name the file.
StatusOr<RouteConfig> LoadRouteConfigFile(const std::string& path, RouteConfig base = {});
// Checks the whole (pools named by backends exist, at least one backend, ...).
Status ValidateRouteConfig(const RouteConfig& config);

// "URL[,pool=NAME][,weight=W]" (the --backend flag).
StatusOr<BackendConfig> ParseBackendSpec(std::string_view spec);
// "NAME[,policy=P][,models=a|b]" (the --pool flag) into config->pools.
Status ApplyPoolSpec(std::string_view spec, RouteConfig* config);

}  // namespace surge::router
