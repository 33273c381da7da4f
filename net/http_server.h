// HttpServer: an asynchronous HTTP/1.1 server on one event-loop thread, holding thousands
// of keep-alive connections, with streaming (chunked / SSE) responses fed from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "net/cors.h"
#include "net/http_types.h"
#include "net/response_writer.h"

namespace surge::net {

class HttpClient;

namespace internal {
class ServerCore;
}  // namespace internal

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // an IPv4 or IPv6 literal ("::1", "0.0.0.0") or a name
  uint16_t port = 0;               // 0: an ephemeral port; port() tells which
  size_t max_header_bytes = 16 << 10;   // request line + fields; past it: 431 and close
  size_t max_body_bytes = 8 << 20;      // past it: 413 and close, before reading the body
  size_t max_write_buffer_bytes = 4 << 20;  // unsent streamed bytes per response; past it: close
  int64_t idle_timeout_ms = 60'000;     // keep-alive connection without a request
  int64_t header_timeout_ms = 10'000;   // first byte to end of header (slowloris)
  int64_t body_timeout_ms = 60'000;     // end of header to end of body
  int64_t write_timeout_ms = 60'000;    // one write to a client that does not read
  int max_connections = 20'000;         // past it, new connections are closed at once
  // Off by default. On: every response (errors, 404s and streams included) carries the
  // CORS fields for its Origin, and OPTIONS on any path is answered as a preflight.
  CorsOptions cors{};
};

// A handler answers through the writer, now or later, from any thread. Handlers run on
// the io thread, which serves every connection: they must not block (no waiting on the
// engine, no disk or network I/O) — hand the work to another thread and return.
using Handler = std::function<void(HttpRequest request, std::shared_ptr<ResponseWriter> writer)>;

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Exact path match, or a prefix when `path` ends in "/*" ("/v1/models/*" takes
  // "/v1/models/a/b" but not "/v1/models/"; the handler reads request.path). The exact
  // match wins, then the longest prefix. Register before Start. An unknown path answers
  // 404, a known path with another method 405 (both with a JSON error body); with CORS on,
  // OPTIONS never reaches a handler: the server answers it as a preflight.
  // `max_body_bytes` > 0: this route's body limit in place of the server's (a file upload
  // may be larger than any API request).
  void Route(std::string method, std::string path, Handler handler, size_t max_body_bytes = 0);

  // Binds, listens and starts the io thread; returns once connections are accepted.
  // UNAVAILABLE when the address is taken, INVALID_ARGUMENT when it does not resolve.
  Status Start();
  uint16_t port() const { return port_; }

  // Graceful shutdown, part one: stop accepting, close idle keep-alive connections, and
  // close the others once their current response is done. Thread-safe, returns at once.
  void Drain();
  // Waits until no connection is open; false on timeout.
  bool WaitUntilIdle(std::chrono::milliseconds timeout);
  // Closes every connection (in-flight responses see disconnected()) and joins the io
  // thread. Idempotent. Not from a handler. Writers may outlive the server; their
  // calls then do nothing.
  void Stop();

  int64_t num_accepted_connections() const;
  int64_t num_open_connections() const;
  int64_t num_requests() const;

 private:
  friend class HttpClient;  // HttpClient(options, server) runs on core_'s loop
  std::shared_ptr<internal::ServerCore> core_;
  std::thread io_thread_;
  uint16_t port_ = 0;
};

}  // namespace surge::net
