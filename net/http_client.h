// HttpClient: an asynchronous HTTP/1.1 client on one io thread — many concurrent requests,
// keep-alive reuse per host, streamed response bodies with arrival times — for the load
// generator, the gateway and tests. Plain http:// only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"
#include "net/http_types.h"

namespace surge::net {

namespace internal {
class ClientCore;
class ServerCore;
}  // namespace internal

using SteadyTime = std::chrono::steady_clock::time_point;

struct HttpClientOptions {
  int64_t connect_timeout_ms = 5'000;
  size_t max_idle_connections_per_host = 1024;  // kept-alive connections waiting for reuse
  size_t max_response_header_bytes = 64 << 10;
  size_t max_buffered_body_bytes = 256 << 20;  // a body collected into HttpResponse::body
};

struct ClientRequest {
  std::string method = "GET";
  std::string url{};  // "http://127.0.0.1:8000/v1/completions", "http://[::1]:8000/health"
  HttpHeaders headers{};
  std::string body{};
  int64_t timeout_ms = 60'000;       // the whole exchange; 0: none
  int64_t read_timeout_ms = 30'000;  // longest wait for the next bytes; 0: none
  // Longest wait from the request's start on a connection to the first response byte (a
  // backend that accepts and never answers, or a long prefill); 0: read_timeout_ms.
  int64_t first_byte_timeout_ms = 0;
};

// Names one request sent by an HttpClient, for Cancel. 0 is never a valid id.
enum class RequestId : uint64_t {};

struct ClientTimings {
  SteadyTime start;      // Send() was called
  SteadyTime connected;  // a connection was ready (a reused one: at once)
  SteadyTime head;       // the response head was parsed
  SteadyTime done;       // the body ended or the request failed
  bool reused_connection = false;
};

struct ClientResult {
  // OK when a complete response arrived, whatever its HTTP status. Otherwise:
  // INVALID_ARGUMENT (bad URL), UNAVAILABLE (resolve or connect failed, connection closed
  // before any response byte), DATA_LOSS (connection lost mid-response, malformed
  // response), DEADLINE_EXCEEDED (a timeout), RESOURCE_EXHAUSTED (body over the limit),
  // CANCELLED (on_data returned false, or the client shut down).
  Status status;
  HttpResponse response;  // status 0 when no head arrived; body empty when streamed
  ClientTimings timings;
};

// Callbacks run on the client's io thread (its own, or its server's), which serves every
// request: they must not block. (When the client is already shutting down, on_done runs in Send's caller.)
struct ClientCallbacks {
  // The response head: status and headers, body empty. Optional.
  std::function<void(const HttpResponse& head)> on_head;
  // Body bytes as they arrive (chunked framing removed) with their arrival time: one call
  // per read from the socket, so event boundaries are not preserved (use SseParser).
  // Return false to abort: the connection is closed and on_done gets CANCELLED.
  // Unset: the body is collected into ClientResult::response.body.
  std::function<bool(std::string_view data, SteadyTime arrival)> on_data;
  // Exactly once, last.
  std::function<void(ClientResult result)> on_done;
};

class HttpServer;

class HttpClient {
 public:
  // On an io thread of its own.
  explicit HttpClient(HttpClientOptions options = {});
  // On `server`'s io thread, which then also runs every callback: a proxy whose handlers
  // send from that thread and whose callbacks write to that thread's connections saves
  // two thread crossings each way. Requests sent before the server starts wait for it;
  // the server's Stop ends the requests still in flight (CANCELLED). Destroy the client
  // before the server, never from its io thread, and not while another thread stops it.
  HttpClient(HttpClientOptions options, HttpServer& server);
  // Requests still in flight end with CANCELLED; then the io thread is joined.
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a request. Thread-safe. The id lets another thread Cancel it.
  RequestId Send(ClientRequest request, ClientCallbacks callbacks);
  // Ends the request at once, if it is still in flight: its connection is closed (never
  // reused) and on_done gets CANCELLED. A proxy calls it when its own client went away.
  // Thread-safe, returns at once; an id that already finished is ignored.
  void Cancel(RequestId id);
  // Blocking convenience over Send: the response, or the Status of the failure.
  // Must not be called from a callback (it would wait on its own thread).
  StatusOr<HttpResponse> Fetch(ClientRequest request);

  // Connections opened so far (not reused ones): lets tests check keep-alive reuse.
  int64_t num_connections_opened() const;

 private:
  std::shared_ptr<internal::ClientCore> core_;
  std::thread io_thread_;                           // own loop only
  std::shared_ptr<internal::ServerCore> server_core_;  // on a server's loop only
};

// One blocking request with a client of its own (a thread per call): for tests and tools.
StatusOr<HttpResponse> Fetch(std::string_view method, std::string_view url, std::string body = {},
                             HttpHeaders headers = {});

}  // namespace surge::net
