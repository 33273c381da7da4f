#include "apps/serve_flags.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/generation_params.h"
#include "api/request_body.h"
#include "apps/alarm_rules_file.h"
#include "apps/batch_flags.h"
#include "apps/byte_size.h"
#include "apps/hf_cache.h"
#include "apps/speculative_flags.h"
#include "apps/vllm_flags.h"
#include "apps/weight_flags.h"
#include "base/flags.h"
#include "net/url.h"
#include "obs/otlp_encoder.h"

namespace surge {
namespace {

struct ServeFlags {
  std::string model;
  std::string host = "127.0.0.1";
  int64_t port = 8000;
  std::string served_model_name;
  std::string tokenizer;
  std::string chat_template;
  int64_t block_size = 16;
  std::string kv_cache_memory;
  std::string kv_cache_dtype = "auto";
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 2048;
  int64_t max_prefill_tokens_with_decodes = 256;
  int64_t max_waiting = 1024;
  std::string max_body_size = "8MiB";
  int64_t max_json_depth = api::kDefaultMaxJsonDepth;
  int64_t max_stored_responses = 1000;
  std::string constraint_cache_size = "256MiB";
  double constraint_compile_timeout = 10;
  double drain_timeout = 30;
  double request_timeout = 0;
  int64_t threads = 0;
  WeightFlags weights;
  bool no_prefix_caching = false;
  double prefix_cache_ttl = 0;
  std::string scheduling_policy = "fcfs";
  double priority_aging = 1.0;
  std::string reasoning_parser;
  std::string get_load_format = "sgl-router";
  std::string tool_call_parser;
  std::string allowed_origins;
  bool allowed_origins_given = false;  // so that an empty value is refused, not taken as "off"
  std::string pooling;
  std::string otlp_endpoint;
  std::string otlp_protocol = "http/protobuf";
  double trace_sample_ratio = 1.0;
  std::string otlp_service_name = "surge";
  std::string alarm_rules;
  BatchFlags batch;
  SpeculativeFlags speculative;
  VllmFlags vllm;  // vLLM's names (apps/vllm_flags.h)
  bool help = false;
};

void Register(FlagParser& parser, ServeFlags& f) {
  parser.AddString("model", &f.model,
                   "model directory or .gguf file, or give it as the first argument (default: SmolLM2-135M-Instruct, "
                   "scripts/setup.sh installs it)");
  parser.AddString("host", &f.host, "address to listen on (default 127.0.0.1)");
  parser.AddInt("port", &f.port, "port to listen on; 0 picks a free one (default 8000)");
  parser.AddString("served-model-name", &f.served_model_name, "model id in the API (default: the directory's name)");
  parser.AddString("tokenizer", &f.tokenizer, "Hugging Face tokenizer directory (default: the model's; needed for a .gguf for now)");
  parser.AddString("chat-template", &f.chat_template, "Jinja chat template file, overriding the model's");
  parser.AddInt("block-size", &f.block_size, "tokens per KV cache block (default 16)");
  parser.AddString("kv-cache-memory", &f.kv_cache_memory,
                   "KV cache size: bytes (2GiB, 512MiB) or a fraction of free memory (0.2); default: "
                   "max-num-seqs full contexts, at most 0.2 of free memory");
  parser.AddString("kv-cache-dtype", &f.kv_cache_dtype,
                   "KV cache format: auto (= f16) | f32 | bf16 | f16 | int8 | int4 (default auto)");
  parser.AddInt("max-num-seqs", &f.max_num_seqs, "sequences in one batch (default 256)");
  parser.AddInt("max-num-batched-tokens", &f.max_num_batched_tokens, "tokens in one forward pass (default 2048)");
  parser.AddInt("max-prefill-tokens-with-decodes", &f.max_prefill_tokens_with_decodes,
                "while sequences decode, prompt tokens one step may take, so a long prompt prefills in slices "
                "and the others' inter-token latency stays near one such step (a token at position p counts "
                "1 + p / C, C the context where its attention costs what its linear layers do); 0: the whole token budget "
                "(default 256: a 1.6K-token prompt arriving among decodes stalled them 2.4 s with the whole "
                "budget, 0.40 s in slices of 256, on the 110M model here; docs/BENCH.md)");
  parser.AddInt("max-waiting", &f.max_waiting, "queued requests before 429 (default 1024)");
  parser.AddString("max-body-size", &f.max_body_size, "largest request body; larger gets 413 (default 8MiB)");
  parser.AddInt("max-json-depth", &f.max_json_depth,
                "deepest nesting of JSON arrays/objects in a request body; deeper gets 400 (default " +
                    std::to_string(api::kDefaultMaxJsonDepth) + ")");
  parser.AddInt("max-stored-responses", &f.max_stored_responses,
                "Responses API answers kept in memory for GET /v1/responses/{id} and previous_response_id, "
                "least recently used dropped first (default 1000)");
  parser.AddString("constraint-cache-size", &f.constraint_cache_size,
                   "bytes of compiled output-constraint grammars (response_format, guided_*, tool_choice) kept for "
                   "reuse, least recently used dropped first; failures are kept too (default 256MiB)");
  parser.AddDouble("constraint-compile-timeout", &f.constraint_compile_timeout,
                   "seconds one output constraint may take to compile (on its own threads) before the request gets "
                   "400; a request's `timeout` shortens it; 0: none, the step budget alone (default 10)");
  parser.AddDouble("drain-timeout", &f.drain_timeout, "seconds to let requests finish on SIGTERM (default 30)");
  parser.AddDouble("request-timeout", &f.request_timeout,
                   "seconds a completion, chat or responses request may take before it is ended with 504 "
                   "(timeout_error), its KV freed: the default of a body's `timeout` and the most one may ask "
                   "(default 0: none)");
  parser.AddInt("threads", &f.threads, "model threads (default: all cores)");
  RegisterWeightFlags(parser, f.weights);
  parser.AddBool("no-prefix-caching", &f.no_prefix_caching,
                 "turn off automatic prefix caching (reuse of the KV of repeated prompt prefixes)");
  parser.AddDouble("prefix-cache-ttl", &f.prefix_cache_ttl,
                   "seconds after which cached KV blocks that no request uses are released (default 0: never)");
  parser.AddString("scheduling-policy", &f.scheduling_policy,
                   "fcfs (default) | priority: admit by request priority with aging, preempt the least urgent");
  parser.AddDouble("priority-aging", &f.priority_aging,
                   "under --scheduling-policy priority, seconds of waiting worth one priority level (default 1)");
  parser.AddString("get-load-format", &f.get_load_format,
                   "GET /get_load's shape: sgl-router (default: SGLang's list of per-rank loads, whose num_tokens "
                   "sgl-router sums) | vllm-router (one object, whose load vllm-router reads); docs/GATEWAYS.md");
  parser.AddString("reasoning-parser", &f.reasoning_parser,
                   std::string("split chat answers into reasoning_content (the <think> part) and content: ") +
                       kReasoningParserNames + " (default: none)");
  parser.AddString("tool-call-parser", &f.tool_call_parser,
                   std::string("parse tool calls out of chat answers when a request gives tools: ") +
                       kToolCallParserNames +
                       " (default: from the model's model_type: deepseek -> deepseek_v3, qwen2/qwen3 -> hermes, "
                       "llama -> llama3_json, else none)");
  parser.AddString("allowed-origins", &f.allowed_origins,
                   "browser origins allowed to call the API (CORS): '*' or a comma-separated list of "
                   "scheme://host[:port] (default: none, no CORS headers)");
  parser.AddString("pooling", &f.pooling,
                   "how /v1/embeddings pools the final hidden states (after the final norm) before L2 "
                   "normalization: last (the last token's, as Qwen3-Embedding) | mean (over all tokens) | cls (the "
                   "first token's); default: last for a decoder, a BERT encoder's own (1_Pooling/config.json, else mean)");
  parser.AddString("otlp-endpoint", &f.otlp_endpoint,
                   "trace API requests and export the spans as OTLP/HTTP to this URL, "
                   "http://host:4318/v1/traces (default: tracing off)");
  parser.AddString("otlp-protocol", &f.otlp_protocol, "http/protobuf (default) | http/json");
  parser.AddDouble("trace-sample-ratio", &f.trace_sample_ratio,
                   "fraction of new traces recorded, in [0, 1]; a client's traceparent decides for its own "
                   "(default 1)");
  parser.AddString("otlp-service-name", &f.otlp_service_name, "service.name of the exported spans (default surge)");
  parser.AddString("alarm-rules", &f.alarm_rules,
                   "alarm rules file (YAML or JSON; obs/README.md): evaluated on this server's own metrics, "
                   "actions log and webhook, state at GET /alarms (e.g. deploy/alarms/engine_rules.yaml)");
  RegisterBatchFlags(parser, f.batch);
  RegisterSpeculativeFlags(parser, f.speculative);
  RegisterVllmFlags(parser, f.vllm);
  parser.AddBool("help", &f.help, "show this help");
}

// scale_up and restart_instance need an autoscaler and workers: the router's.
Status ApplyAlarmRules(const std::string& path, ServerOptions* server) {
  if (path.empty()) return OkStatus();
  StatusOr<obs::AlarmConfig> rules = LoadAlarmRulesFile(path);
  if (!rules.ok()) return rules.status().WithContext("--alarm-rules");
  for (const obs::AlarmRule& rule : rules->rules) {
    const obs::AlarmAction::Type type = rule.action.type;
    if (type == obs::AlarmAction::Type::kScaleUp || type == obs::AlarmAction::Type::kRestartInstance) {
      return InvalidArgumentError("--alarm-rules: rule " + rule.name + ": action " + std::string(obs::ActionTypeName(type)) +
                                  " is surge route's (an autoscaler, spawned workers); surge serve can log or webhook");
    }
  }
  server->alarm_rules = *std::move(rules);
  return OkStatus();
}

// "" leaves it off.
Status ApplyReasoningParser(const std::string& name, ServerOptions* server) {
  if (name.empty()) return OkStatus();
  StatusOr<ReasoningParserKind> kind = ParseReasoningParserName(name);
  if (!kind.ok()) return InvalidArgumentError("--reasoning-parser: " + kind.status().message());
  server->reasoning_parser = *kind;
  return OkStatus();
}

// "" leaves the choice to the model.
Status ApplyToolCallParser(const std::string& name, ServeConfig* config) {
  if (name.empty()) return OkStatus();
  StatusOr<ToolCallParserKind> kind = ParseToolCallParserName(name);
  if (!kind.ok()) return InvalidArgumentError("--tool-call-parser: " + kind.status().message());
  config->tool_call_parser = *kind;
  return OkStatus();
}

// Not given: CORS stays off.
Status ApplyAllowedOrigins(const ServeFlags& f, ServerOptions* server) {
  if (!f.allowed_origins_given) return OkStatus();
  const std::string& list = f.allowed_origins;
  StatusOr<net::CorsOptions> cors = net::ParseAllowedOrigins(list);
  if (!cors.ok()) return InvalidArgumentError("--allowed-origins: " + cors.status().message());
  server->cors = *std::move(cors);
  return OkStatus();
}

// --otlp-endpoint turns tracing on; the other tracing flags need it.
Status ApplyTracing(const ServeFlags& f, const FlagParser& parser, ServerOptions* server) {
  if (f.otlp_endpoint.empty()) {
    for (const char* flag : {"otlp-protocol", "trace-sample-ratio", "otlp-service-name"}) {
      if (parser.seen(flag)) return InvalidArgumentError(std::string("--") + flag + " needs --otlp-endpoint");
    }
    return OkStatus();
  }
  StatusOr<obs::OtlpProtocol> protocol = obs::ParseOtlpProtocol(f.otlp_protocol);
  if (!protocol.ok()) return InvalidArgumentError("--otlp-protocol: " + protocol.status().message());
  if (!(f.trace_sample_ratio >= 0 && f.trace_sample_ratio <= 1)) {
    return InvalidArgumentError("--trace-sample-ratio must be in [0, 1]");
  }
  if (f.otlp_service_name.empty()) return InvalidArgumentError("--otlp-service-name must not be empty");
  if (StatusOr<net::Url> url = net::ParseUrl(f.otlp_endpoint); !url.ok()) {
    return InvalidArgumentError("--otlp-endpoint: " + url.status().message());
  }
  server->tracing = {f.otlp_endpoint, *protocol, f.trace_sample_ratio, f.otlp_service_name};
  return OkStatus();
}

// Checks ranges and fills the config; errors are usage errors.
Status ToConfig(const ServeFlags& f, ServeConfig* config) {
  if (f.port < 0 || f.port > 65535) return InvalidArgumentError("--port must be in [0, 65535]");
  if (f.block_size < 1 || f.block_size > 4096) return InvalidArgumentError("--block-size must be in [1, 4096]");
  if (f.max_num_seqs < 1 || f.max_num_seqs > 1 << 20) return InvalidArgumentError("--max-num-seqs must be >= 1");
  if (f.max_num_batched_tokens < 1 || f.max_num_batched_tokens > 1 << 24) {
    return InvalidArgumentError("--max-num-batched-tokens must be >= 1");
  }
  if (f.max_waiting < 1 || f.max_waiting > 1 << 24) return InvalidArgumentError("--max-waiting must be >= 1");
  // At or above --max-num-batched-tokens it changes nothing (the budget binds first).
  if (f.max_prefill_tokens_with_decodes < 0 || f.max_prefill_tokens_with_decodes > 1 << 24) {
    return InvalidArgumentError("--max-prefill-tokens-with-decodes must be >= 0");
  }
  config->engine.max_prefill_tokens_with_decodes = static_cast<int32_t>(f.max_prefill_tokens_with_decodes);
  if (f.max_json_depth < 2 || f.max_json_depth > api::kMaxJsonDepthLimit) {
    return InvalidArgumentError("--max-json-depth must be in [2, " + std::to_string(api::kMaxJsonDepthLimit) + "]");
  }
  config->server.request_limits.max_json_depth = static_cast<int>(f.max_json_depth);
  if (f.max_stored_responses < 1 || f.max_stored_responses > 1 << 24) {
    return InvalidArgumentError("--max-stored-responses must be in [1, 16777216]");
  }
  config->server.max_stored_responses = static_cast<size_t>(f.max_stored_responses);
  if (!(f.drain_timeout >= 0 && f.drain_timeout < 1e6)) return InvalidArgumentError("--drain-timeout must be >= 0");
  if (!(f.request_timeout >= 0 && f.request_timeout <= api::kMaxTimeoutSeconds)) {
    return InvalidArgumentError("--request-timeout must be in [0, " +
                                std::to_string(static_cast<int>(api::kMaxTimeoutSeconds)) + "] seconds");
  }
  config->server.request_timeout_s = f.request_timeout;
  if (!(f.prefix_cache_ttl >= 0 && f.prefix_cache_ttl < 1e9)) return InvalidArgumentError("--prefix-cache-ttl must be >= 0");
  if (!(f.priority_aging > 0 && f.priority_aging < 1e9)) return InvalidArgumentError("--priority-aging must be > 0");
  StatusOr<SchedulingPolicyKind> policy = ParseSchedulingPolicy(f.scheduling_policy);
  if (!policy.ok()) return InvalidArgumentError("--scheduling-policy: " + policy.status().message());
  config->engine.scheduling_policy = *policy;
  RETURN_IF_ERROR(ApplyReasoningParser(f.reasoning_parser, &config->server));
  if (f.get_load_format != "sgl-router" && f.get_load_format != "vllm-router") {
    return InvalidArgumentError("--get-load-format must be sgl-router or vllm-router, got '" + f.get_load_format + "'");
  }
  config->server.worker_info.get_load_as_object = f.get_load_format == "vllm-router";
  RETURN_IF_ERROR(ApplyToolCallParser(f.tool_call_parser, config));
  RETURN_IF_ERROR(ApplyAllowedOrigins(f, &config->server));
  if (!f.pooling.empty()) {
    StatusOr<PoolingKind> pooling = ParsePoolingKind(f.pooling);
    if (!pooling.ok()) return InvalidArgumentError("--pooling: " + pooling.status().message());
    config->server.pooling = *pooling;
    config->pooling_given = true;
  }
  config->engine.enable_prefix_caching = !f.no_prefix_caching;
  config->engine.prefix_cache_ttl_s = f.prefix_cache_ttl;
  config->engine.priority_aging_s = f.priority_aging;
  config->model_dir = f.model;
  ASSIGN_OR_RETURN(config->load, ToLoadOptions(f.weights));
  config->tokenizer_dir = f.tokenizer;
  config->threads = static_cast<int>(f.threads);
  config->server.host = f.host;
  config->server.port = static_cast<uint16_t>(f.port);
  config->server.served_model_name = f.served_model_name;
  config->engine.block_size = static_cast<int32_t>(f.block_size);
  config->engine.max_num_seqs = static_cast<int32_t>(f.max_num_seqs);
  config->engine.max_num_batched_tokens = static_cast<int32_t>(f.max_num_batched_tokens);
  config->engine.max_waiting = static_cast<int32_t>(f.max_waiting);
  config->engine.kv_cache_bytes = 0;
  StatusOr<KvDType> kv_dtype = ParseKvDType(f.kv_cache_dtype);
  if (!kv_dtype.ok()) return InvalidArgumentError("--kv-cache-dtype: " + kv_dtype.status().message());
  config->engine.kv_dtype = *kv_dtype;
  ASSIGN_OR_RETURN(ByteSize body, ParseByteSize(f.max_body_size, "max-body-size", false));
  config->server.max_body_bytes = static_cast<size_t>(body.bytes);
  ASSIGN_OR_RETURN(ByteSize cache, ParseByteSize(f.constraint_cache_size, "constraint-cache-size", false));
  config->server.constraint_cache_bytes = cache.bytes;
  if (!(f.constraint_compile_timeout >= 0 && f.constraint_compile_timeout <= 3600)) {
    return InvalidArgumentError("--constraint-compile-timeout must be in [0, 3600] seconds");
  }
  config->server.constraint_compile_timeout_s = f.constraint_compile_timeout;
  if (!f.kv_cache_memory.empty()) {
    ASSIGN_OR_RETURN(ByteSize kv, ParseByteSize(f.kv_cache_memory, "kv-cache-memory", true));
    config->engine.kv_cache_bytes = kv.bytes;
    config->kv_cache_fraction = kv.fraction;
  }
  return OkStatus();
}

// A file, or (as vLLM takes it) the template itself when no such file exists and it reads
// like one.
Status ReadChatTemplate(const std::string& path, std::string* source) {
  std::ifstream file(path, std::ios::binary);
  if (!file && (path.find("{{") != std::string::npos || path.find("{%") != std::string::npos)) {
    *source = path;
    return OkStatus();
  }
  if (!file) return NotFoundError("--chat-template: cannot read " + path);
  std::ostringstream text;
  text << file.rdbuf();
  *source = text.str();
  return OkStatus();
}

// MODEL_DIR may come first, as in `vllm serve MODEL`.
std::vector<std::string> TakeModelArgument(std::vector<std::string> args, std::string* model) {
  if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
    *model = args[0];
    args.erase(args.begin());
  }
  return args;
}


// The flags (parsed) into `config`; errors are usage errors (exit 2).
Status BuildConfig(const ServeFlags& flags, const FlagParser& parser, ServeConfig* config) {
  RETURN_IF_ERROR(ApplyTracing(flags, parser, &config->server));
  RETURN_IF_ERROR(ApplyAlarmRules(flags.alarm_rules, &config->server));
  ASSIGN_OR_RETURN(config->batch, ToBatchOptions(flags.batch, parser));
  ASSIGN_OR_RETURN(config->speculative, ToSpeculativeConfig(flags.speculative, parser));
  RETURN_IF_ERROR(ToConfig(flags, config));
  return ApplyVllmFlags(flags.vllm, parser, !flags.kv_cache_memory.empty(), config);
}

// What needs files: a model id found in the Hugging Face cache (then also the served name
// by default, as vLLM), the chat template. Errors are runtime errors (exit 1).
Status ResolveFiles(const ServeFlags& flags, ServeConfig* config) {
  ASSIGN_OR_RETURN(std::string model_dir, ResolveModelPath(config->model_dir));
  if (model_dir != config->model_dir && config->server.served_model_name.empty()) {
    config->server.served_model_name = config->model_dir;
  }
  config->model_dir = model_dir;
  if (flags.chat_template.empty()) return OkStatus();
  return ReadChatTemplate(flags.chat_template, &config->server.chat_template);
}


// The positional MODEL, or --model, or the default one.
Status ChooseModel(const std::string& positional_model, const FlagParser& parser, ServeFlags* flags, int* exit_code) {
  if (!positional_model.empty()) {
    // The environment or a config file rank below the command line's positional MODEL.
    if (parser.source("model") == FlagSource::kCommandLine && flags->model != positional_model) {
      return InvalidArgumentError("two model directories given ('" + positional_model + "' and --model '" +
                                  flags->model + "')");
    }
    flags->model = positional_model;
  }
  *exit_code = 1;
  ASSIGN_OR_RETURN(flags->model, ModelOrDefault(flags->model));
  *exit_code = 2;
  return OkStatus();
}

}  // namespace

StatusOr<ServeArgs> ParseServeArgs(const std::vector<std::string>& raw_args, int* exit_code) {
  *exit_code = 2;
  ServeFlags flags;
  FlagParser parser("serve");
  Register(parser, flags);
  std::string positional_model;
  const std::vector<std::string> args = TakeModelArgument(raw_args, &positional_model);
  RETURN_IF_ERROR(parser.Parse(args));
  ServeArgs parsed;
  parsed.help = flags.help;
  parsed.usage = parser.Usage();
  if (flags.help) return parsed;
  flags.allowed_origins_given = parser.seen("allowed-origins");
  RETURN_IF_ERROR(ChooseModel(positional_model, parser, &flags, exit_code));
  RETURN_IF_ERROR(BuildConfig(flags, parser, &parsed.config));
  AdjustTargetLoad(parsed.config.speculative, &parsed.config.load);
  parsed.config.show_progress = true;
  *exit_code = 1;
  RETURN_IF_ERROR(ResolveFiles(flags, &parsed.config));
  parsed.drain_timeout_s = flags.drain_timeout;
  return parsed;
}

}  // namespace surge
