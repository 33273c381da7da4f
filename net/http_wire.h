// HTTP/1.1 wire formatting shared by server and client: response and request heads,
// chunk framing, the Date header. Internal to net/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "net/http_types.h"
#include "net/url.h"

namespace surge::net::internal {

enum class BodyFraming {
  kContentLength,  // Content-Length: n
  kChunked,        // Transfer-Encoding: chunked
  kUntilClose,     // HTTP/1.0 stream: the body ends when the connection closes
};

// Status line and header block, ending with the blank line. The caller's headers are
// sanitized (names must be tokens; CR/LF in values become spaces) and the fields that
// decide framing (Content-Length, Transfer-Encoding, Connection) are ours alone. Fields of
// `extra` follow, each unless `headers` has it already (Vary, a list, is always added).
std::string FormatResponseHead(int status, const HttpHeaders& headers, BodyFraming framing,
                               size_t content_length, bool keep_alive, const HttpHeaders& extra = {});

// Appends one chunk of a chunked body: "<hex size>\r\n<data>\r\n". `data` must not be empty.
void AppendChunk(std::string* out, std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// Request line and headers for the client, with Host and Content-Length filled in.
std::string FormatRequestHead(std::string_view method, const Url& url, const HttpHeaders& headers,
                              size_t body_bytes);

// The current time as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), cached per second.
std::string HttpDate();

// True when `name` is a valid header field name (an RFC 9110 token).
bool IsToken(std::string_view name);

}  // namespace surge::net::internal
