#include "router/forward_headers.h"

#include <random>

namespace surge::router {
namespace {

// Passed to the engine as they are. Everything else (cookies, hop-by-hop fields, Host,
// Content-Length -- the client sets its own) stays here.
constexpr std::string_view kForwarded[] = {"content-type", "accept", "traceparent", "tracestate",
                                           "x-priority",   "openai-organization", "openai-project"};

// Hop-by-hop (RFC 9110 7.6.1) or set by our own server for the response it writes.
constexpr std::string_view kNotReturned[] = {"connection", "keep-alive", "transfer-encoding", "content-length",
                                             "date",       "server",     "x-request-id",      "upgrade",
                                             "proxy-connection", "te", "trailer"};

template <size_t N>
bool IsOneOf(std::string_view name, const std::string_view (&names)[N]) {
  for (std::string_view candidate : names) {
    if (net::EqualsIgnoreCase(name, candidate)) return true;
  }
  return false;
}

}  // namespace

std::string MakeRequestId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  uint64_t bits[2] = {rng(), rng()};
  for (int i = 0; i < 32; ++i) id[i] = kHex[(bits[i / 16] >> (4 * (i % 16))) & 15];
  return id;
}

net::HttpHeaders BackendRequestHeaders(const net::HttpHeaders& client_headers, bool forward_authorization,
                                       std::string_view session_header, const std::string& request_id) {
  net::HttpHeaders headers;
  for (const auto& [name, value] : client_headers) {
    if (IsOneOf(name, kForwarded) || net::EqualsIgnoreCase(name, session_header) ||
        (forward_authorization && net::EqualsIgnoreCase(name, "authorization"))) {
      headers.Add(name, value);
    }
  }
  headers.Set("x-request-id", request_id);
  return headers;
}

net::HttpHeaders ClientResponseHeaders(const net::HttpHeaders& backend_headers, std::string_view backend_url,
                                       const std::string& request_id) {
  net::HttpHeaders headers;
  for (const auto& [name, value] : backend_headers) {
    if (!IsOneOf(name, kNotReturned)) headers.Add(name, value);
  }
  headers.Set("x-request-id", request_id);
  headers.Set("x-surge-backend", std::string(backend_url));
  return headers;
}

}  // namespace surge::router
