// OpenAiServer: the OpenAI-compatible HTTP front of one engine — /v1/completions,
// /v1/chat/completions (streaming and not), /v1/models, /tokenize, /detokenize, /health
// and /metrics — with graceful shutdown.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "engine/engine_client.h"
#include "net/http_server.h"
#include "server/server_context.h"
#include "tokenizer/tokenizer.h"

namespace surge {

class OpenAiServer {
 public:
  // `engine` and `tokenizer` are borrowed and must outlive the server. Errors: a chat
  // template that does not parse, options out of range.
  static StatusOr<std::unique_ptr<OpenAiServer>> Create(EngineClient& engine, const Tokenizer& tokenizer,
                                                        ServerOptions options);
  ~OpenAiServer();  // Shutdown(0)
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  // Before Start: a route of another part (the Batch API) on this server, run on the io
  // thread like any net::Handler. `max_body_bytes` 0: the server's limit.
  // Behind --api-key like the server's own routes (server/api_key_auth.h).
  void AddRoute(std::string method, std::string path, net::Handler handler, size_t max_body_bytes = 0);

  // Binds and starts serving. UNAVAILABLE when the address is taken.
  Status Start();
  uint16_t port() const { return http_->port(); }

  // Graceful shutdown: /health turns 503, no new connections, in-flight generations run
  // to their end for up to `drain_timeout`, then the rest are cancelled; returns once the
  // last response is written (or abandoned) and every thread is joined. Idempotent.
  void Shutdown(std::chrono::milliseconds drain_timeout);

  // The registry /metrics shows: other parts on this server (the Batch API) add theirs.
  obs::Registry& metrics_registry();

  int64_t num_generations_in_flight() const { return static_cast<int64_t>(context_->InFlight().size()); }
  // What the routes share (tests reach its caches, metrics and task runners).
  ServerContext& context() { return *context_; }

 private:
  explicit OpenAiServer(std::unique_ptr<ServerContext> context);
  void AddRoutes();
  void AddWorkerRoutes();

  std::unique_ptr<ServerContext> context_;
  std::unique_ptr<net::HttpServer> http_;
  bool shut_down_ = false;
};

}  // namespace surge
