// The state of one response shared between its ResponseWriter (any thread) and its
// ServerConnection (io thread). Internal to net/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "net/http_types.h"

namespace surge::net::internal {

// What the request allows, fixed when it is dispatched.
struct ResponseContext {
  bool head_request = false;  // HEAD: the head only, never a body
  bool http10 = false;        // HTTP/1.0 client: no chunked encoding, close at the end
  bool keep_alive = false;    // the request allows the connection to stay open
  size_t max_write_buffer_bytes = 0;
  HttpHeaders extra_headers;  // added to the head of whatever answers (CORS)
};

struct ResponseState {
  enum class Phase { kNone, kStreaming, kDone };

  explicit ResponseState(ResponseContext c) : context(c) {}

  const ResponseContext context;
  std::mutex mu;
  // Guarded by mu.
  Phase phase = Phase::kNone;
  std::string pending;        // framed bytes the connection has not taken yet
  bool flush_posted = false;  // a flush is on its way to the io thread
  bool ended = false;         // the response's last bytes are in `pending` (or taken)
  bool keep_alive = false;    // as announced in the response head
  HttpHeaders added_headers;  // ResponseWriter::AddHeader: put into whichever head goes out
  int status = 0;             // the status sent; 0 before the head

  // Readable without the lock, for the fast "is it over?" checks.
  std::atomic<bool> closed{false};        // no more bytes accepted
  std::atomic<bool> disconnected{false};  // closed before being completely written
  std::atomic<size_t> unsent_bytes{0};    // handed over by the writer, not yet on the socket
};

}  // namespace surge::net::internal
