#include "router/route_config.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <set>

#include "base/json_access.h"
#include "base/yaml/yaml_to_json.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

// Reads the fields of one JSON object by name, remembering which it took, so that
// Finish() can refuse every key nobody asked for -- by its full path.
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) status_ = InvalidArgumentError(Where() + " must be an object");
  }

  // Through json::ToInt64: an integer past int64 (or 1e300) is named as such, never wrapped.
  void Int(const char* key, int64_t* out, int64_t min_value) {
    const Json* value = Take(key);
    if (value == nullptr) return;
    StatusOr<int64_t> number = json::ToInt64(json::Json(*value));
    if (!number.ok()) return Fail(key, std::string(number.status().message()));
    if (*number < min_value) return Fail(key, "must be >= " + std::to_string(min_value));
    *out = *number;
  }
  // An integer whose absence matters (a bound that only one backend takes).
  void OptionalInt(const char* key, std::optional<int64_t>* out, int64_t min_value) {
    int64_t value = 0;
    const bool present = object_.is_object() && object_.contains(key) && !object_[key].is_null();
    Int(key, &value, min_value);
    if (present && status_.ok()) *out = value;
  }
  void Double(const char* key, double* out, double min_value, bool min_exclusive) {
    const Json* value = Take(key);
    if (value == nullptr) return;
    StatusOr<double> finite = json::ToDouble(json::Json(*value));  // NaN and infinities refused
    if (!finite.ok()) return Fail(key, std::string(finite.status().message()));
    const double number = *finite;
    if (number < min_value || (min_exclusive && number == min_value)) {
      return Fail(key, std::string("must be ") + (min_exclusive ? "> " : ">= ") + std::to_string(min_value));
    }
    *out = number;
  }
  void String(const char* key, std::string* out) {
    const Json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_string() || value->get<std::string>().empty()) return Fail(key, "must be a non-empty string");
    *out = value->get<std::string>();
  }
  void Bool(const char* key, bool* out) {
    const Json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_boolean()) return Fail(key, "must be true or false");
    *out = value->get<bool>();
  }
  void Uint(const char* key, uint64_t* out) {
    const Json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_number_unsigned()) return Fail(key, "must be a non-negative integer");
    *out = value->get<uint64_t>();
  }
  // A nested object or array handed to `parse` with its path.
  void Nested(const char* key, const std::function<Status(const Json&, const std::string&)>& parse) {
    const Json* value = Take(key);
    if (value == nullptr || !status_.ok()) return;
    Status status = parse(*value, Path(key));
    if (!status.ok()) status_ = status;
  }

  Status Finish() {
    if (!status_.ok()) return status_;
    for (const auto& [key, value] : object_.items()) {
      if (!taken_.count(key)) return InvalidArgumentError("unknown config key '" + Path(key) + "'");
    }
    return OkStatus();
  }

 private:
  const Json* Take(const char* key) {
    taken_.insert(key);
    if (!status_.ok() || !object_.is_object()) return nullptr;
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  void Fail(const char* key, const std::string& why) {
    if (status_.ok()) status_ = InvalidArgumentError("config key '" + Path(key) + "' " + why);
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  std::string Where() const { return path_.empty() ? "the config" : "config key '" + path_ + "'"; }

  const Json& object_;
  std::string path_;
  Status status_;
  std::set<std::string> taken_;
};

Status ParseBackend(const Json& tree, const std::string& path, BackendConfig* backend) {
  ObjectReader reader(tree, path);
  reader.String("url", &backend->url);
  reader.String("pool", &backend->pool);
  reader.Double("weight", &backend->weight, 0, /*min_exclusive=*/true);
  Status status = reader.Finish();
  if (status.ok() && backend->url.empty()) return InvalidArgumentError("config key '" + path + ".url' is required");
  return status;
}

Status ParseBackends(const Json& tree, const std::string& path, RouteConfig* config) {
  if (!tree.is_array()) return InvalidArgumentError("config key '" + path + "' must be an array");
  for (size_t i = 0; i < tree.size(); ++i) {
    BackendConfig backend;
    Status status = ParseBackend(tree[i], path + "[" + std::to_string(i) + "]", &backend);
    if (!status.ok()) return status;
    config->backends.push_back(std::move(backend));
  }
  return OkStatus();
}

Status ParseStrings(const Json& tree, const std::string& path, std::vector<std::string>* out) {
  if (!tree.is_array()) return InvalidArgumentError("config key '" + path + "' must be an array of strings");
  out->clear();
  for (const Json& item : tree) {
    if (!item.is_string()) return InvalidArgumentError("config key '" + path + "' must hold strings");
    out->push_back(item.get<std::string>());
  }
  return OkStatus();
}

Status ParseWorkers(const Json& tree, const std::string& path, RouteConfig* config) {
  ObjectReader reader(tree, path);
  reader.String("model", &config->model);
  reader.String("log_dir", &config->worker_log_dir);
  reader.Int("health_timeout_ms", &config->worker_health_timeout_ms, 1);
  reader.Nested("engine_args", [&](const Json& args, const std::string& args_path) {
    return ParseStrings(args, args_path, &config->engine_args);
  });
  return reader.Finish();
}

Status ParsePool(const Json& tree, const std::string& path, PoolConfig* pool) {
  ObjectReader reader(tree, path);
  reader.String("policy", &pool->policy);
  reader.Int("spawn", &pool->spawn, 0);
  reader.String("model", &pool->model);
  reader.Nested("engine_args", [&](const Json& args, const std::string& args_path) {
    return ParseStrings(args, args_path, &pool->engine_args);
  });
  reader.Nested("models", [&](const Json& models, const std::string& models_path) {
    if (!models.is_array()) return InvalidArgumentError("config key '" + models_path + "' must be an array");
    for (const Json& model : models) {
      if (!model.is_string()) return InvalidArgumentError("config key '" + models_path + "' must hold strings");
      pool->models.push_back(model.get<std::string>());
    }
    return OkStatus();
  });
  return reader.Finish();
}

Status ParseAliases(const Json& tree, const std::string& path, RouteConfig* config) {
  if (!tree.is_object()) return InvalidArgumentError("config key '" + path + "' must be an object of aliases");
  for (const auto& [name, alias_tree] : tree.items()) {
    ComplexityRule& rule = config->aliases[name];
    ObjectReader reader(alias_tree, path + "." + name);
    reader.String("small", &rule.small_pool);
    reader.String("large", &rule.large_pool);
    reader.Int("prompt_tokens_over", &rule.prompt_tokens_over, 0);
    reader.Int("max_tokens_over", &rule.max_tokens_over, 0);
    reader.Bool("reasoning", &rule.reasoning);
    reader.Bool("code", &rule.code);
    if (Status status = reader.Finish(); !status.ok()) return status;
  }
  return OkStatus();
}

Status ParsePools(const Json& tree, const std::string& path, RouteConfig* config) {
  if (!tree.is_object()) return InvalidArgumentError("config key '" + path + "' must be an object of pools");
  for (const auto& [name, pool_tree] : tree.items()) {
    Status status = ParsePool(pool_tree, path + "." + name, &config->pools[name]);
    if (!status.ok()) return status;
  }
  return OkStatus();
}

// The sections whose fields are all numbers, bools or strings: one reader each.
using SectionReader = std::function<void(ObjectReader&, RouteConfig*)>;

void ReadListen(ObjectReader& r, RouteConfig* c) {
  r.String("host", &c->host);
  r.Int("port", &c->port, 0);
}

void ReadPolicyOptions(ObjectReader& r, RouteConfig* c) {
  r.String("session_header", &c->policy_options.session_header);
  r.Double("backend_capacity", &c->policy_options.backend_capacity, 0, /*min_exclusive=*/true);
  r.Uint("seed", &c->policy_options.seed);
  r.String("tokenizer", &c->policy_options.tokenizer);
  r.String("chat_template", &c->policy_options.chat_template);
  r.String("cache_mode", &c->policy_options.cache_mode);
  r.Double("balance_abs_threshold", &c->policy_options.balance_abs_threshold, 0, false);
  r.Double("balance_rel_threshold", &c->policy_options.balance_rel_threshold, 1, false);
}

void ReadTracing(ObjectReader& r, RouteConfig* c) {
  r.String("otlp_endpoint", &c->tracing.otlp_endpoint);
  r.String("protocol", &c->tracing.protocol);
  r.Double("sample_ratio", &c->tracing.sample_ratio, 0, false);
  r.String("service_name", &c->tracing.service_name);
}

void ReadKubernetes(ObjectReader& r, RouteConfig* c) {
  r.String("target", &c->kubernetes.target);
  r.String("port_name", &c->kubernetes.port_name);
  r.String("deployment", &c->kubernetes.deployment);
}

void ReadHealth(ObjectReader& r, RouteConfig* c) {
  r.Int("interval_ms", &c->health.interval_ms, 1);
  r.Int("timeout_ms", &c->health.timeout_ms, 1);
  r.Int("unhealthy_threshold", &c->health.unhealthy_threshold, 1);
  r.Int("healthy_threshold", &c->health.healthy_threshold, 1);
}

void ReadBreaker(ObjectReader& r, RouteConfig* c) {
  r.Int("failure_threshold", &c->breaker.failure_threshold, 1);
  r.Int("cooldown_ms", &c->breaker.cooldown_ms, 1);
  r.Int("success_threshold", &c->breaker.success_threshold, 1);
}

void ReadEjection(ObjectReader& r, RouteConfig* c) {
  r.Int("window_ms", &c->ejection.window_ms, 1);
  r.Int("min_requests", &c->ejection.min_requests, 1);
  r.Double("max_error_rate", &c->ejection.max_error_rate, 0, /*min_exclusive=*/false);
  r.Int("duration_ms", &c->ejection.duration_ms, 1);
}

void ReadRetry(ObjectReader& r, RouteConfig* c) {
  r.Int("max_retries", &c->retry.max_retries, 0);
  r.Int("backoff_base_ms", &c->retry.backoff_base_ms, 0);
  r.Int("backoff_max_ms", &c->retry.backoff_max_ms, 0);
}

void ReadTimeouts(ObjectReader& r, RouteConfig* c) {
  r.Int("connect_ms", &c->timeouts.connect_ms, 1);
  r.Int("first_byte_ms", &c->timeouts.first_byte_ms, 0);
  r.Int("idle_ms", &c->timeouts.idle_ms, 0);
  r.Int("total_ms", &c->timeouts.total_ms, 0);
}

// cache.semantic.models: {"MODEL": {"threshold": 0.9}} or ["MODEL", ...] (the default threshold).
Status ParseSemanticModels(const Json& tree, const std::string& path, SemanticCacheConfig* semantic) {
  if (tree.is_array()) {
    for (const Json& name : tree) {
      if (!name.is_string() || name.get<std::string>().empty()) return InvalidArgumentError(path + " holds a non-string");
      semantic->models[name.get<std::string>()] = std::nullopt;
    }
    return OkStatus();
  }
  if (!tree.is_object()) return InvalidArgumentError(path + " must be an object {MODEL: {threshold}} or a list of models");
  for (const auto& [model, entry] : tree.items()) {
    ObjectReader reader(entry, path + "." + model);
    double threshold = -1;
    reader.Double("threshold", &threshold, 0, /*min_exclusive=*/true);
    if (Status status = reader.Finish(); !status.ok()) return status;
    semantic->models[model] = threshold > 0 ? std::optional<double>(threshold) : std::nullopt;
  }
  return OkStatus();
}

Status ParseSemantic(const Json& tree, const std::string& path, SemanticCacheConfig* semantic) {
  ObjectReader r(tree, path);
  r.Bool("all", &semantic->all);
  r.String("embeddings_url", &semantic->embeddings_url);
  r.String("embeddings_model", &semantic->embeddings_model);
  r.String("embeddings_spawn", &semantic->embeddings_spawn);
  r.Int("embeddings_timeout_ms", &semantic->embeddings_timeout_ms, 1);
  r.Double("threshold", &semantic->threshold, 0, /*min_exclusive=*/true);
  r.Bool("guard", &semantic->guard);
  r.Int("max_entries", &semantic->max_entries, 1);
  r.Nested("models", [semantic](const Json& t, const std::string& p) { return ParseSemanticModels(t, p, semantic); });
  return r.Finish();
}

void ReadCache(ObjectReader& r, RouteConfig* c) {
  r.String("backend", &c->cache.backend);
  r.Int("ttl_s", &c->cache.ttl_s, 1);
  r.Int("max_entry_bytes", &c->cache.max_entry_bytes, 1);
  r.OptionalInt("max_bytes", &c->cache.max_bytes, 1);
  r.OptionalInt("max_entries", &c->cache.max_entries, 1);
  r.OptionalInt("redis_pool", &c->cache.redis_pool, 1);
  r.OptionalInt("redis_timeout_ms", &c->cache.redis_timeout_ms, 1);
  r.Nested("semantic", [c](const Json& t, const std::string& p) { return ParseSemantic(t, p, &c->cache.semantic); });
}

void ReadSections(ObjectReader& top, RouteConfig* c) {
  const std::pair<const char*, SectionReader> sections[] = {
      {"listen", ReadListen}, {"policy_options", ReadPolicyOptions}, {"health", ReadHealth},
      {"breaker", ReadBreaker}, {"ejection", ReadEjection},           {"retry", ReadRetry},
      {"timeouts", ReadTimeouts},      {"tracing", ReadTracing},         {"kubernetes", ReadKubernetes},
      {"cache", ReadCache}};
  for (const auto& [name, read] : sections) {
    top.Nested(name, [c, read = read](const Json& tree, const std::string& path) {
      ObjectReader reader(tree, path);
      read(reader, c);
      return reader.Finish();
    });
  }
}

}  // namespace

StatusOr<RouteConfig> RouteConfigFromJson(const Json& tree, RouteConfig base) {
  RouteConfig config = std::move(base);
  ObjectReader top(tree, "");
  ReadSections(top, &config);
  top.Nested("backends", [&](const Json& t, const std::string& p) { return ParseBackends(t, p, &config); });
  top.Nested("pools", [&](const Json& t, const std::string& p) { return ParsePools(t, p, &config); });
  top.Nested("workers", [&](const Json& t, const std::string& p) { return ParseWorkers(t, p, &config); });
  top.Nested("tiers", [&](const Json& t, const std::string& p) {
    if (!config.tiers) config.tiers.emplace();
    return ParseTiersConfig(t, p, &*config.tiers);
  });
  top.String("api_keys", &config.api_keys_file);
  top.Nested("aliases", [&](const Json& t, const std::string& p) { return ParseAliases(t, p, &config); });
  top.Int("max_body_bytes", &config.max_body_bytes, 1);
  top.Bool("forward_authorization", &config.forward_authorization);
  top.Int("drain_timeout_ms", &config.drain_timeout_ms, 0);
  Status status = top.Finish();
  if (!status.ok()) return status;
  config.pools.try_emplace(kDefaultPool);
  return config;
}

StatusOr<RouteConfig> LoadRouteConfigFile(const std::string& path, RouteConfig base) {
  StatusOr<Json> tree = LoadConfigFile(path);  // *.json, else YAML
  if (!tree.ok()) return tree.status();
  StatusOr<RouteConfig> config = RouteConfigFromJson(*tree, std::move(base));
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

Status ValidateRouteConfig(const RouteConfig& config) {
  if (config.port > 65535) return InvalidArgumentError("port " + std::to_string(config.port) + " is out of range");
  for (const BackendConfig& backend : config.backends) {
    if (!config.pools.count(backend.pool)) {
      return InvalidArgumentError("backend " + backend.url + " names pool '" + backend.pool +
                                  "', which is not declared (--pool NAME or config key 'pools')");
    }
  }
  for (const auto& [name, rule] : config.aliases) {
    for (const std::string* pool : {&rule.small_pool, &rule.large_pool}) {
      if (!config.pools.count(*pool)) {
        return InvalidArgumentError("alias '" + name + "' routes to pool '" + *pool +
                                    "', which is not declared (config keys 'aliases." + name + ".small/large')");
      }
    }
  }
  if (config.tracing.sample_ratio > 1) return InvalidArgumentError("config key 'tracing.sample_ratio' must be in [0, 1]");
  bool any_spawn = false;
  for (const auto& [name, pool] : config.pools) {
    if (pool.spawn > 256) return InvalidArgumentError("pool '" + name + "': spawn must be at most 256");
    if (pool.spawn > 0 && pool.model.empty() && config.model.empty()) {
      return InvalidArgumentError("pool '" + name + "' spawns workers but names no model (--model PATH)");
    }
    any_spawn = any_spawn || pool.spawn > 0;
  }
  if (config.backends.empty() && !any_spawn && config.kubernetes.target.empty()) {
    return InvalidArgumentError(
        "no backends: give --backend URL, --spawn N --model PATH, --kubernetes NS/SELECTOR or config key 'backends'");
  }
  if (config.cache.redis_pool > 64) return InvalidArgumentError("config key 'cache.redis_pool' must be at most 64");
  const SemanticCacheConfig& semantic = config.cache.semantic;
  if (!config.cache.on() && (semantic.on() || semantic.all || !semantic.models.empty())) {
    return InvalidArgumentError("the semantic cache (config section 'cache.semantic', --semantic, --embeddings-url) "
                                "needs a response cache backend: --cache memory | redis://...");
  }
  if (!semantic.embeddings_spawn.empty() && !semantic.embeddings_url.empty()) {
    return InvalidArgumentError("give the semantic cache's encoder as --embeddings-url or --embeddings-spawn "
                                "(config keys 'cache.semantic.embeddings_url' / 'embeddings_spawn'), not both");
  }
  if (config.retry.backoff_max_ms < config.retry.backoff_base_ms) {
    return InvalidArgumentError("config key 'retry.backoff_max_ms' must be >= retry.backoff_base_ms");
  }
  return OkStatus();
}

namespace {

// Splits "head,k=v,k=v" and hands each k=v to `apply`.
Status ForEachOption(std::string_view spec, std::string* head,
                     const std::function<Status(std::string_view, std::string_view)>& apply) {
  size_t comma = spec.find(',');
  *head = std::string(spec.substr(0, comma));
  while (comma != std::string_view::npos) {
    spec.remove_prefix(comma + 1);
    comma = spec.find(',');
    std::string_view option = spec.substr(0, comma);
    size_t equals = option.find('=');
    if (equals == std::string_view::npos) return InvalidArgumentError("'" + std::string(option) + "' is not key=value");
    Status status = apply(option.substr(0, equals), option.substr(equals + 1));
    if (!status.ok()) return status;
  }
  return OkStatus();
}

}  // namespace

StatusOr<BackendConfig> ParseBackendSpec(std::string_view spec) {
  BackendConfig backend;
  Status status = ForEachOption(spec, &backend.url, [&](std::string_view key, std::string_view value) {
    if (key == "pool" && !value.empty()) {
      backend.pool = std::string(value);
    } else if (key == "weight") {
      char* end = nullptr;
      const std::string text(value);
      backend.weight = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(backend.weight > 0)) {
        return InvalidArgumentError("weight '" + text + "' must be a number > 0");
      }
    } else {
      return InvalidArgumentError("unknown option '" + std::string(key) + "' (known: pool, weight)");
    }
    return OkStatus();
  });
  if (!status.ok()) return status.WithContext("--backend " + std::string(spec));
  if (backend.url.empty()) return InvalidArgumentError("--backend needs a URL");
  return backend;
}

Status ApplyPoolSpec(std::string_view spec, RouteConfig* config) {
  std::string name;
  PoolConfig pool;
  std::string normalized(spec);  // "NAME:spawn=2,policy=p" reads as "NAME,spawn=2,policy=p"
  if (size_t colon = normalized.find(':'); colon != std::string::npos && colon < normalized.find(',')) {
    normalized[colon] = ',';
  }
  Status status = ForEachOption(normalized, &name, [&](std::string_view key, std::string_view value) {
    if (key == "policy" && !value.empty()) {
      pool.policy = std::string(value);
    } else if (key == "spawn") {
      const std::string text(value);
      char* end = nullptr;
      pool.spawn = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || pool.spawn < 0 || pool.spawn > 256) {
        return InvalidArgumentError("spawn '" + text + "' must be an integer in [0, 256]");
      }
    } else if (key == "model" && !value.empty()) {
      pool.model = std::string(value);
    } else if (key == "models" && !value.empty()) {
      std::string_view rest = value;
      while (!rest.empty()) {
        size_t bar = rest.find('|');
        pool.models.emplace_back(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
      }
    } else {
      return InvalidArgumentError("unknown option '" + std::string(key) + "' (known: policy, models, spawn, model)");
    }
    return OkStatus();
  });
  if (!status.ok()) return status.WithContext("--pool " + std::string(spec));
  if (name.empty()) return InvalidArgumentError("--pool needs a name");
  config->pools[name] = std::move(pool);
  return OkStatus();
}

}  // namespace surge::router
