// CORS (the Fetch standard's cross-origin protocol) for browser apps: which origins may
// call the server, the headers every response carries for them, and preflight answers.
// Free of Asio/Beast; HttpServer applies it to every response, errors and streams included.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/http_types.h"

namespace surge::net {

// Off by default: no origin listed and any_origin false means no CORS header is ever sent,
// and OPTIONS is routed like any other method.
struct CorsOptions {
  bool any_origin = false;           // "*": every origin, answered with Allow-Origin: *
  std::vector<std::string> origins;  // serialized origins, "https://app.example.com:8443"
  int max_age_s = 600;               // how long a browser may cache a preflight answer

  bool enabled() const { return any_origin || !origins.empty(); }
};

// Parses a flag value: "*", or comma-separated origins "scheme://host[:port]" (http or
// https, no path, no userinfo; a default port is dropped, scheme and host lowercased, as a
// browser serializes its Origin header). INVALID_ARGUMENT names the offending entry.
StatusOr<CorsOptions> ParseAllowedOrigins(std::string_view list);

// True when `origin` (an Origin header's value) may read responses.
bool IsOriginAllowed(const CorsOptions& options, std::string_view origin);

// The CORS fields for any response to a request with `request_headers`: nothing when CORS
// is off; else Vary: Origin (the answer depends on it, which shared caches must know), and
// for an allowed Origin also Access-Control-Allow-Origin and -Expose-Headers.
HttpHeaders CorsResponseHeaders(const CorsOptions& options, const HttpHeaders& request_headers);

// The answer to an OPTIONS request while CORS is on, less the fields CorsResponseHeaders
// adds. An allowed origin (or no Origin at all: a plain OPTIONS) gets 204 with the methods
// the path serves (`methods`, "GET, POST"); a disallowed origin gets 403, with no CORS
// field, so the browser blocks the call and the refusal is visible in access logs.
struct CorsPreflight {
  int status = 204;
  HttpHeaders headers;
};
CorsPreflight AnswerCorsPreflight(const CorsOptions& options, const HttpHeaders& request_headers,
                                  std::string_view methods);

}  // namespace surge::net
