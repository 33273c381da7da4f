#include "apps/vllm_flags.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "base/logging.h"

namespace surge {
namespace {

// vLLM flags that cannot mean anything for this engine, and why (never silently ignored).
constexpr std::pair<const char*, const char*> kRefused[] = {
    {"swap-space", "surge preempts by recomputing; its KV cache already lives in host memory, so there is nothing "
                   "to swap to"},
    {"cpu-offload-gb", "the weights already live in host memory"},
    {"quantization", "vLLM's checkpoint formats (awq, gptq, fp8, ...) are not read; quantize at load with "
                     "--quantize int8|int4, or serve a GGUF file"},
    {"load-format", "surge reads safetensors directories and GGUF files, whichever the model path is"},
    {"download-dir", "surge never downloads: give a local directory, a .gguf file or a model id already in the "
                     "local Hugging Face cache"},
    {"revision", "surge never downloads: the local Hugging Face cache's snapshot refs/main points at is used"},
    {"distributed-executor-backend", "one process serves one model here; run several behind `surge route`"},
    {"enable-lora", "LoRA adapters are not supported"},
    {"lora-modules", "LoRA adapters are not supported"},
    {"speculative-config", "use --speculative METHOD and its flags (surge serve --help)"},
    {"ssl-keyfile", "terminate TLS in front of the engine (a proxy or an ingress)"},
    {"ssl-certfile", "terminate TLS in front of the engine (a proxy or an ingress)"},
    {"enable-log-requests", "surge logs no request contents; --otlp-endpoint traces every request instead"},
    {"kv-transfer-config", "disaggregated prefill is not supported"},
    {"hf-token", "surge never contacts the Hugging Face Hub"},
};

// One engine, one process: a parallel size of 1 is what surge does; more is refused.
Status CheckParallelSize(const char* flag, int64_t size, const char* instead) {
  if (size == 1) return OkStatus();
  return InvalidArgumentError(std::string("--") + flag + " " + std::to_string(size) +
                              " is not supported: a surge engine runs on one CPU socket (or GPU); " + instead);
}

Status ApplyLogLevel(const std::string& level) {
  LogLevel parsed = LogLevel::kInfo;
  if (level == "debug" || level == "trace") {
    parsed = LogLevel::kDebug;
  } else if (level == "warning") {
    parsed = LogLevel::kWarning;
  } else if (level == "error" || level == "critical") {
    parsed = LogLevel::kError;
  } else if (level != "info") {
    return InvalidArgumentError("--log-level must be debug, info, warning or error (vLLM's trace and critical: "
                                "debug and error), got '" + level + "'");
  }
  SetMinLogLevel(parsed);
  return OkStatus();
}

StatusOr<std::vector<std::string>> SplitKeys(const std::string& list) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string key = list.substr(start, comma - start);
    if (key.empty() || key.find_first_of(" \t") != std::string::npos) {
      return InvalidArgumentError("--api-key: keys are comma-separated, each non-empty and without spaces");
    }
    keys.push_back(key);
    start = comma + 1;
  }
  return keys;
}

Status ApplyServerFlags(const VllmFlags& f, const FlagParser& parser, ServeConfig* config) {
  if (!f.api_key.empty()) {
    ASSIGN_OR_RETURN(config->server.api_keys, SplitKeys(f.api_key));
  }
  if (f.api_key_for_metrics && f.api_key.empty()) return InvalidArgumentError("--api-key-for-metrics needs --api-key");
  config->server.api_key_for_metrics = f.api_key_for_metrics;
  if (f.metrics_compat != "vllm" && f.metrics_compat != "none") {
    return InvalidArgumentError("--metrics-compat must be vllm or none, got '" + f.metrics_compat + "'");
  }
  config->server.vllm_metrics = f.metrics_compat == "vllm";
  if (!f.max_model_len.empty()) {
    ASSIGN_OR_RETURN(config->server.max_model_len, ParseTokenCount(f.max_model_len, "max-model-len"));
  }
  if (f.generation_config != "vllm") {
    return InvalidArgumentError("--generation-config: only 'vllm' (sampling defaults from the request and OpenAI's, "
                                "never from the model's generation_config.json), got '" + f.generation_config + "'");
  }
  return parser.seen("log-level") ? ApplyLogLevel(f.log_level) : OkStatus();
}

Status ApplyEngineFlags(const VllmFlags& f, const FlagParser& parser, bool kv_cache_memory_given, ServeConfig* config) {
  RETURN_IF_ERROR(CheckParallelSize("tensor-parallel-size", f.tensor_parallel_size,
                                    "run one engine per socket behind `surge route`"));
  RETURN_IF_ERROR(CheckParallelSize("pipeline-parallel-size", f.pipeline_parallel_size,
                                    "run one engine per socket behind `surge route`"));
  RETURN_IF_ERROR(CheckParallelSize("data-parallel-size", f.data_parallel_size,
                                    "`surge route --spawn N` runs N engines behind one address"));
  if (!f.enable_chunked_prefill) {
    return InvalidArgumentError("--no-enable-chunked-prefill is not supported: surge always prefills in chunks "
                                "(--max-num-batched-tokens, --max-prefill-tokens-with-decodes bound them)");
  }
  if (parser.seen("enable-prefix-caching") && f.enable_prefix_caching && parser.seen("no-prefix-caching")) {
    return InvalidArgumentError("--enable-prefix-caching and --no-prefix-caching contradict each other");
  }
  if (!f.enable_prefix_caching) config->engine.enable_prefix_caching = false;
  if (parser.seen("seed")) config->engine.seed = static_cast<uint64_t>(f.seed);
  if (parser.seen("gpu-memory-utilization")) {
    if (kv_cache_memory_given) return InvalidArgumentError("give --gpu-memory-utilization or --kv-cache-memory, not both");
    if (!(f.gpu_memory_utilization > 0 && f.gpu_memory_utilization <= 1)) {
      return InvalidArgumentError("--gpu-memory-utilization must be in (0, 1]");
    }
    config->engine.kv_cache_bytes = 0;
    config->kv_cache_fraction = f.gpu_memory_utilization;
  }
  return OkStatus();
}

}  // namespace

StatusOr<int64_t> ParseTokenCount(const std::string& text, const std::string& flag) {
  errno = 0;
  char* end = nullptr;
  const long long number = std::strtoll(text.c_str(), &end, 10);
  int64_t scale = 1;
  const std::string suffix(end);
  if (suffix == "k") scale = 1000;
  if (suffix == "K") scale = 1024;
  if (suffix == "m") scale = 1000 * 1000;
  if (suffix == "M") scale = 1024 * 1024;
  if (text.empty() || end == text.c_str() || errno == ERANGE || (scale == 1 && !suffix.empty()) || number < 1 ||
      number > (int64_t{1} << 40) / scale) {
    return InvalidArgumentError("--" + flag + ": expected a positive token count (4096, 4k = 4000, 4K = 4096), got '" +
                                text + "'");
  }
  return number * scale;
}

void RegisterVllmFlags(FlagParser& parser, VllmFlags& f) {
  parser.AddString("max-model-len", &f.max_model_len,
                   "context length in tokens (prompt + output), at most the model's; requests past it get 400, and "
                   "the default KV cache is sized for it: 4096, 4k (4000), 4K (4096) (default: the model's)");
  parser.AddString("api-key", &f.api_key,
                   "comma-separated keys; every route but /health, /ping and /metrics then wants "
                   "'Authorization: Bearer KEY' (else 401); also VLLM_API_KEY (default: none, open)");
  parser.AddEnvironmentAlias("VLLM_API_KEY", "api-key");
  parser.AddBool("api-key-for-metrics", &f.api_key_for_metrics, "with --api-key, /metrics wants a key too");
  parser.AddBool("enable-prefix-caching", &f.enable_prefix_caching,
                 "automatic prefix caching (default on; --no-enable-prefix-caching turns it off)");
  parser.AddBool("enable-auto-tool-choice", &f.enable_auto_tool_choice,
                 "tool_choice auto parses tool calls out of answers; surge does so whenever a tool call parser is "
                 "set (default from the model), so this only checks that one is");
  parser.AddBool("enable-chunked-prefill", &f.enable_chunked_prefill, "always on in surge (off is refused)");
  parser.AddDouble("gpu-memory-utilization", &f.gpu_memory_utilization,
                   "on this CPU engine: the fraction of the memory free after loading the weights that the KV cache "
                   "takes, as --kv-cache-memory FRACTION (default: --kv-cache-memory's)");
  parser.AddInt("tensor-parallel-size", &f.tensor_parallel_size, "1 only (one engine per socket; more is refused)");
  parser.AddAlias("-tp", "tensor-parallel-size");
  parser.AddInt("pipeline-parallel-size", &f.pipeline_parallel_size, "1 only");
  parser.AddAlias("-pp", "pipeline-parallel-size");
  parser.AddInt("data-parallel-size", &f.data_parallel_size, "1 only (surge route --spawn N runs N engines)");
  parser.AddAlias("-dp", "data-parallel-size");
  parser.AddInt("seed", &f.seed, "requests without a seed sample with seed + their request id (default: random)");
  parser.AddString("log-level", &f.log_level, "debug | info (default) | warning | error");
  parser.AddAlias("uvicorn-log-level", "log-level");
  parser.AddBool("disable-log-requests", &f.disable_log_requests, "accepted: surge never logs requests");
  parser.AddBool("trust-remote-code", &f.trust_remote_code,
                 "accepted: surge runs no code from model repositories, with or without it");
  parser.AddBool("enforce-eager", &f.enforce_eager, "accepted: surge has no CUDA graphs; it always runs eagerly");
  parser.AddString("generation-config", &f.generation_config,
                   "vllm only: sampling defaults are OpenAI's, never the model's generation_config.json");
  parser.AddString("metrics-compat", &f.metrics_compat,
                   "vllm: /metrics also carries vLLM's families (vllm:num_requests_waiting, ..., labelled model_name) "
                   "for KEDA, Grafana boards and the llm-d endpoint picker written for vLLM | none (default: "
                   "they double the page, docs/VLLM_COMPAT.md)");
  for (const auto& [name, why] : kRefused) parser.AddRefused(name, why);
  parser.AddAlias("-q", "quantization");
  parser.AddAlias("otlp-traces-endpoint", "otlp-endpoint");
}

Status ApplyVllmFlags(const VllmFlags& f, const FlagParser& parser, bool kv_cache_memory_given, ServeConfig* config) {
  RETURN_IF_ERROR(ApplyServerFlags(f, parser, config));
  RETURN_IF_ERROR(ApplyEngineFlags(f, parser, kv_cache_memory_given, config));
  config->require_tool_call_parser = f.enable_auto_tool_choice;
  if (f.enable_auto_tool_choice && config->tool_call_parser == ToolCallParserKind::kNone) {
    return InvalidArgumentError("--enable-auto-tool-choice needs a tool call parser (--tool-call-parser " +
                                std::string(kToolCallParserNames) + ")");
  }
  return OkStatus();
}

}  // namespace surge
