// RequestReader: the server's HTTP/1.1 request parser, fed bytes rather than a socket, so
// that the connection, the tests and the fuzz targets all run the same code. Internal.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "net/http_types.h"

namespace surge::net::internal {

struct RequestReaderOptions {
  size_t max_header_bytes = 16 << 10;  // request line + fields; past it: 431
  size_t max_body_bytes = 8 << 20;     // Content-Length or chunked total; past it: 413
  // A route's own limit (method, path without query) in place of max_body_bytes; unset: none.
  std::function<size_t(std::string_view method, std::string_view path)> max_body_bytes_for;
};

// A complete request, with the facts the connection needs to frame its response.
struct ParsedRequest {
  HttpRequest request;       // `remote` is left empty: the reader never sees the peer
  bool head_request = false;  // HEAD
  bool http10 = false;        // HTTP/1.0 (or older)
  bool keep_alive = false;    // what the request asks for (Connection, version default)
};

enum class ReadEvent {
  kNeedMore,        // every input byte is consumed or waits for more
  kHeaderAccepted,  // header parsed and within limits; a body follows: feed it
  kRejected,        // stop reading; answer `status` and close (framing is lost)
  kComplete,        // `request` is ready; unconsumed input belongs to the next request
};

struct ReadResult {
  ReadEvent event = ReadEvent::kNeedMore;
  bool expects_continue = false;  // kHeaderAccepted: the client waits for "100 Continue"
  int status = 0;                 // kRejected: 400, 413 or 431
  std::string message;            // kRejected: for the error body
  ParsedRequest request;          // kComplete
};

// One request at a time: after kComplete call Reset() before feeding the next one; after
// kRejected the reader stays rejected until Reset(). An oversized Content-Length is
// refused as soon as the header is in, before any body byte is read.
class RequestReader {
 public:
  explicit RequestReader(RequestReaderOptions options);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Forgets the request in progress and starts a fresh one.
  void Reset();

  // Parses from the front of `input`, erasing what it consumed, and stops at the first
  // event. kNeedMore for empty input; kHeaderAccepted at most once per request.
  ReadResult Feed(std::string& input);

 private:
  struct Impl;  // Beast's parser stays out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace surge::net::internal
