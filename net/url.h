// Parsing of http:// URLs (host, port, target) for the HTTP client; no TLS.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace surge::net {

struct Url {
  std::string host;    // "127.0.0.1", "example.com" or "::1" (no brackets)
  uint16_t port = 80;
  std::string target;  // path and query: "/v1/models?x=1"; "/" when the URL has none

  // "host:port" as the Host header and connection-pool key want it ("[::1]:8080").
  std::string HostPort() const;
};

// Accepts "http://host[:port][/path][?query]" with IPv6 literals in brackets. The
// fragment is dropped. "https" is UNIMPLEMENTED; anything malformed is INVALID_ARGUMENT.
StatusOr<Url> ParseUrl(std::string_view url);

// "%2F" -> "/": the path segment as the client meant it. A '%' not followed by two hex
// digits stays as it is.
std::string PercentDecode(std::string_view text);

}  // namespace surge::net
