// StreamFetch: one blocking HTTP/1.1 exchange over https:// (OpenSSL: a PEM CA bundle, an
// optional client certificate) or http://, its body streamed to a callback and cancellable
// from another thread: what the Kubernetes API client's list, watch and scale calls need.
// HttpClient (http_client.h) stays the plain-http, many-requests client of the gateway.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/http_types.h"

namespace surge::net {

struct TlsOptions {
  std::string ca_pem{};           // trusted CA certificates; empty: the system's default paths
  std::string client_cert_pem{};  // optional client certificate chain (mutual TLS) ...
  std::string client_key_pem{};   // ... and its private key
  bool verify_peer = true;      // false only for tests and `insecure-skip-tls-verify`
};

struct StreamRequest {
  std::string method = "GET";
  std::string url{};  // "https://10.0.0.1:6443/api/v1/...", "http://127.0.0.1:8001/..."
  HttpHeaders headers{};
  std::string body{};
  int64_t timeout_ms = 30'000;       // the whole exchange; 0: none (a watch)
  int64_t read_timeout_ms = 30'000;  // longest wait for the next bytes; 0: none
  size_t max_body_bytes = 64 << 20;  // a collected body (no on_data)
};

struct StreamCallbacks {
  // The response head (status, headers; body empty), before any body byte. Optional.
  std::function<void(const HttpResponse& head)> on_head{};
  // Body bytes as they arrive (chunked framing removed). Return false to stop: the call
  // then returns CANCELLED. Unset: the body is collected into the returned response.
  std::function<bool(std::string_view data)> on_data{};
};

// Connects, (for https) verifies the server's certificate chain against `tls.ca_pem` and its
// name or IP address against the URL's host, sends the request (Connection: close), reads
// the response. OK with the response whatever its HTTP status; otherwise INVALID_ARGUMENT
// (bad URL or PEM), UNAVAILABLE (connect or TLS handshake failed: the message says which),
// DATA_LOSS (connection lost mid-response), DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED (body over
// max_body_bytes), CANCELLED (`*cancel` became true, or on_data returned false).
StatusOr<HttpResponse> StreamFetch(const StreamRequest& request, const TlsOptions& tls,
                                   const StreamCallbacks& callbacks = {},
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace surge::net
