// ServerContext: what every route of the OpenAI server shares — the engine client, the
// prompt builder, metrics, the worker threads, the options, and the requests in flight
// (so that shutdown can wait for them or cancel them).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/error.h"
#include "api/request_body.h"
#include "engine/constraint/tokenizer_vocabulary.h"
#include "engine/engine_client.h"
#include "net/cors.h"
#include "net/http_server.h"
#include "net/response_writer.h"
#include "obs/alarms/alarm_runner.h"
#include "obs/otlp_encoder.h"
#include "obs/span_exporter.h"
#include "obs/tracer.h"
#include "server/constraint_cache.h"
#include "server/kv_event_stream.h"
#include "server/prompt_builder.h"
#include "server/reasoning_parser.h"
#include "server/response_store.h"
#include "server/server_metrics.h"
#include "server/tool_call_parser.h"
#include "base/task_runner.h"

namespace surge {

// A request in flight that shutdown waits for, then cancels: a Generation (completions,
// chat) or an Embedding (server/in_flight_request.h).
class InFlightRequest;

// Tracing of API requests (--otlp-endpoint): off while the endpoint is "".
struct TracingOptions {
  std::string otlp_endpoint;  // "http://host:4318/v1/traces"
  obs::OtlpProtocol protocol = obs::OtlpProtocol::kHttpProtobuf;
  double sample_ratio = 1.0;  // of new traces; a client's traceparent decides for its own
  std::string service_name = "surge";
};

// What the ecosystem's routers read of a worker (sgl-router, vllm-router, the llm-d
// endpoint picker): GET /server_info and /model_info (server/worker_routes.cc).
struct WorkerInfo {
  std::string model_path;
  std::string tokenizer_path;
  std::string model_type;           // config.json's: "llama", "qwen2"
  std::string weight_dtype;         // "f32", "bf16", "int8", "int4"
  std::string kv_cache_dtype;       // "f32", "bf16", "f16", "int8", "int4"
  int64_t max_num_seqs = 0;
  int64_t max_num_batched_tokens = 0;
  int64_t max_total_tokens = 0;     // the KV cache's capacity: blocks x block size
  int64_t block_size = 0;
  // GET /get_load's shape: SGLang's list of per-rank loads, which sgl-router (0.3) sums the
  // num_tokens of, or one object whose `load` vllm-router (0.1) reads (--get-load-format).
  bool get_load_as_object = false;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;              // 0: an ephemeral port (tests)
  std::string served_model_name;     // the one model id this server answers to
  std::string chat_template;         // Jinja source; "" uses the tokenizer's own
  int64_t max_model_len = 0;         // the model's context (max_position_embeddings)
  size_t max_body_bytes = 8 << 20;   // larger request bodies get 413
  api::RequestLimits request_limits;  // depth and counts inside a body: past them, 400
  int num_workers = 2;               // threads for parsing, templates, tokens and JSON
  size_t max_stored_responses = 1000;  // the Responses API's store (--max-stored-responses)
  // Chat answers split into reasoning_content and content (--reasoning-parser).
  ReasoningParserKind reasoning_parser = ReasoningParserKind::kNone;
  // Tool calls parsed out of chat answers when a request gives tools and tool_choice auto
  // (--tool-call-parser); kNone: such answers stay text.
  ToolCallParserKind tool_call_parser = ToolCallParserKind::kNone;
  net::CorsOptions cors{};           // browser origins allowed to call (--allowed-origins); off by default
  // /v1/embeddings: how the engine pools final hidden states (--pooling), and their width
  // (the model's hidden_size; the most `dimensions` may ask for).
  PoolingKind pooling = PoolingKind::kLast;
  int64_t embedding_size = 0;
  bool embed_normalize = true;  // unit vectors (an encoder without a Normalize module: false)
  // A sentence encoder: completions, chat and responses answer 400, and /v1/embeddings
  // cuts an input past max_model_len to its first max_model_len - 1 tokens and its last
  // ([SEP]), as sentence-transformers truncates, instead of refusing it.
  bool encoder = false;
  TracingOptions tracing{};
  // Completions, chat and responses: the deadline of a request that gives no `timeout`,
  // and the most one may give (--request-timeout); 0: none, and any `timeout` goes.
  double request_timeout_s = 0;
  // Output constraints: the compiled-grammar cache's bound in bytes (--constraint-cache-size),
  // the most one compile may take, in seconds (--constraint-compile-timeout; a request's
  // `timeout` shortens it; 0: no deadline, the step budget alone), and the threads that
  // compile, apart from the request workers.
  int64_t constraint_cache_bytes = int64_t{256} << 20;
  double constraint_compile_timeout_s = 10;
  int constraint_compile_threads = 2;
  // --alarm-rules: evaluated in-process on this server's own metrics, shown at GET /alarms.
  std::optional<obs::AlarmConfig> alarm_rules{};
  // --api-key: every route but /health, /ping (and /metrics unless api_key_for_metrics)
  // wants `Authorization: Bearer <one of these>`, else 401; empty: open.
  std::vector<std::string> api_keys{};
  bool api_key_for_metrics = false;
  // --metrics-compat vllm: /metrics also carries vLLM's families (vllm:..., model_name).
  bool vllm_metrics = false;
  WorkerInfo worker_info{};
};

class ServerContext {
 public:
  ServerContext(EngineClient& engine, PromptBuilder prompts, ServerOptions options)
      : engine(engine),
        prompts(std::move(prompts)),
        options(std::move(options)),
        token_bytes(TokenBytesOf(this->prompts.tokenizer())),
        constraints(ConstraintCacheOptions{256, this->options.constraint_cache_bytes}),
        responses(this->options.max_stored_responses),
        runner(this->options.num_workers),
        compile_runner(this->options.constraint_compile_threads) {}

  // Replies and counts the reply in the metrics.
  void Reply(net::ResponseWriter& writer, std::string_view endpoint, int http_status, std::string json);
  // The OpenAI error object; a 429 also says when to come back (Retry-After).
  void ReplyError(net::ResponseWriter& writer, std::string_view endpoint, const api::ApiError& error);
  // Token `id`'s own bytes (for logprobs' `bytes`); a special token's: its name.
  std::string TokenBytes(int32_t id) const;
  // Seconds a refused client should wait: the queue's depth over the batch that drains it.
  int RetryAfterSeconds() const;

  // The requests in flight, for shutdown.
  uint64_t Register(std::shared_ptr<InFlightRequest> request);
  void Unregister(uint64_t id);
  std::vector<std::shared_ptr<InFlightRequest>> InFlight() const;
  // True once nothing is in flight; false when `timeout` passes first.
  bool WaitUntilIdle(std::chrono::milliseconds timeout);

  EngineClient& engine;
  const PromptBuilder prompts;
  const ServerOptions options;
  // [vocab_size] each token's own bytes ("" for special tokens), for logprobs' `bytes`.
  const std::vector<std::string> token_bytes;
  ServerMetrics metrics;
  ConstraintCache constraints;         // compiled response_format / guided_* grammars
  ResponseStore responses;             // /v1/responses kept for GET and previous_response_id
  TaskRunner runner;                   // stopped by the server before the context goes
  TaskRunner compile_runner;           // output constraints' compiles (server/constraint_compile.h)
  KvEventStreams kv_event_streams;     // GET /kv_events, ended at shutdown
  std::atomic<bool> draining{false};   // shutting down: /health 503, new generations 503
  // Set by OpenAiServer::Create before serving when options.tracing is on; null otherwise.
  std::unique_ptr<obs::SpanExporter> span_exporter;
  std::unique_ptr<obs::Tracer> tracer;  // borrows span_exporter
  // The listening server, for /metrics' open connections; set by OpenAiServer before it
  // serves (null in a context without one).
  const net::HttpServer* http_server = nullptr;
  std::unique_ptr<obs::AlarmRunner> alarms;  // options.alarm_rules only; scrapes `metrics`

 private:
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::unordered_map<uint64_t, std::shared_ptr<InFlightRequest>> in_flight_;  // guarded by mu_
  uint64_t next_id_ = 1;                                                  // guarded by mu_
};

}  // namespace surge
