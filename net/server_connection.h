// ServerConnection: one accepted socket; parses requests, dispatches them one at a time,
// writes responses, and notices a client that leaves mid-response. Internal to net/.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/deadline.h"
#include "net/request_reader.h"
#include "net/response_state.h"

namespace surge::net::internal {

class ServerCore;

// All methods but the Post* ones run on the io thread. One request at a time: bytes of a
// pipelined next request wait in input_ until the current response is written.
//
// A read is kept pending while a response is produced and written, so that a client who
// disconnects is seen at once (EOF or reset) and its response closed. The cost: a client
// that half-closes its side (shutdown(SHUT_WR)) after sending is treated as gone.
class ServerConnection : public std::enable_shared_from_this<ServerConnection> {
 public:
  ServerConnection(std::shared_ptr<ServerCore> core, boost::asio::ip::tcp::socket socket,
                   uint64_t id);

  void Start();
  // Abrupt close (errors, timeouts, Stop). A response in progress becomes disconnected.
  void Close();
  // Drain: closes the connection if it sits between requests.
  void CloseIfIdle();

  // Thread-safe, for ResponseWriter.
  void PostFlush(std::shared_ptr<ResponseState> state);
  void PostAbandon(std::shared_ptr<ResponseState> state);
  void PostAbort(std::shared_ptr<ResponseState> state);
  void PostOnClose(std::shared_ptr<ResponseState> state, std::function<void()> callback);
  bool draining() const;

 private:
  enum class State {
    kReading,     // parsing a request
    kResponding,  // a request was dispatched; its response is not completely written
    kLingering,   // sent a final response, shut down our side, discarding input until EOF
    kClosed,
  };

  void BeginRequest();
  void StartRead();
  void OnRead(const boost::system::error_code& ec, size_t num_bytes);
  void Pump();
  void Reject(int status, const std::string& message);
  void Dispatch(ParsedRequest parsed);
  void Flush(const std::shared_ptr<ResponseState>& state);
  void Abandon(const std::shared_ptr<ResponseState>& state);
  void QueueOutput(std::string_view bytes, bool from_writer);
  void WriteQueued();
  void OnWritten(const boost::system::error_code& ec);
  void MaybeFinishResponse();
  void FinishResponse();
  void Linger();
  void FireOnClose();
  void ArmReadDeadline(int64_t timeout_ms);
  bool Post(std::function<void()> task);

  std::shared_ptr<ServerCore> core_;
  boost::asio::ip::tcp::socket socket_;
  const uint64_t id_;
  std::string remote_;
  State state_ = State::kReading;
  Deadline read_deadline_;   // idle, header, body and linger limits
  Deadline write_deadline_;  // one write to a client that does not read

  // Input.
  std::array<char, 8192> read_chunk_;  // target of the one pending read
  bool reading_ = false;
  std::string input_;  // received, not yet parsed
  RequestReader reader_;
  bool request_started_ = false;  // a byte of the next request arrived

  // The response in progress.
  std::shared_ptr<ResponseState> response_;  // null for a Reject
  bool response_ended_ = false;              // its last bytes are queued
  bool keep_alive_ = false;
  std::vector<std::function<void()>> on_close_;

  // Output: bytes queue in output_ while output_writing_ is on the wire.
  std::string output_;
  std::string output_writing_;
  bool writing_ = false;
  size_t queued_writer_bytes_ = 0;   // bytes of output_ that came from the writer
  size_t writing_writer_bytes_ = 0;  // same, for output_writing_
};

}  // namespace surge::net::internal
