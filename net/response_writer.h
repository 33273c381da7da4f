// ResponseWriter: the thread-safe handle through which a handler answers one HTTP request,
// either whole (Send) or as a stream of chunks (StartStream / Write / End).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "net/http_types.h"

namespace surge::net {

namespace internal {
class ServerConnection;
struct ResponseState;
}  // namespace internal

// Every method may be called from any thread; the bytes are handed to the connection's
// io thread, which writes them in order. Calls from several threads at once are safe but
// their order is theirs to arrange. Dropping the last reference without finishing the
// response answers 500 (nothing sent yet) or cuts the stream off (the client then sees
// an incomplete body, never a falsely complete one).
class ResponseWriter {
 public:
  // Made by the server for each request.
  ResponseWriter(std::shared_ptr<internal::ServerConnection> connection,
                 std::shared_ptr<internal::ResponseState> state);
  ~ResponseWriter();
  ResponseWriter(const ResponseWriter&) = delete;
  ResponseWriter& operator=(const ResponseWriter&) = delete;

  // A complete response. Content-Length, Connection, Date and Server are added.
  void Send(int status, HttpHeaders headers, std::string body);
  // Send with Content-Type: application/json.
  void SendJson(int status, std::string json);
  // Send with the server's JSON error body (ErrorJson).
  void SendError(int status, std::string_view message);

  // Starts a streamed response (chunked transfer encoding; for an HTTP/1.0 client the
  // body runs to connection close). For SSE pass SseHeaders().
  void StartStream(int status, HttpHeaders headers);
  // Appends one chunk. False once the response is closed: the client went away, its
  // unsent backlog passed the limit (max_write_buffer_bytes), or End was called.
  bool Write(std::string_view data);
  // Ends the stream; the connection then serves the next request (keep-alive) or closes.
  void End();

  // A header for the head of whichever response goes out (Send, StartStream, an error):
  // lets the code that sees the request (tracing's traceparent) label its answer
  // without owning it. Ignored once the head is out.
  void AddHeader(std::string name, std::string value);
  // The status of the head sent; 0 before it.
  int status() const;

  // True once no more bytes will be accepted: after Send or End, or when the client left.
  bool closed() const;
  // True when the client went away (or the server stopped) before the response was
  // completely written: the work behind it can be cancelled.
  bool disconnected() const;
  // `callback` runs once, on the io thread, when the response is over: fully written,
  // or the client disconnected. Registered after that point it still runs (posted; and
  // in the caller's thread once the server has stopped).
  void OnClose(std::function<void()> callback);

 private:
  void Hand(std::string bytes, bool last, bool counted);

  std::shared_ptr<internal::ServerConnection> connection_;
  std::shared_ptr<internal::ResponseState> state_;
};

}  // namespace surge::net
