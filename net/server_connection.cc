#include "net/server_connection.h"

#include <boost/asio/write.hpp>

#include "base/logging.h"
#include "base/phase_profile.h"
#include "net/cors.h"
#include "net/http_wire.h"
#include "net/response_writer.h"
#include "net/server_core.h"

namespace surge::net::internal {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Pipelined bytes held while a response is in progress; past it we stop reading (and so
// stop noticing disconnects) until the response is done.
constexpr size_t kMaxBufferedInputBytes = 64 << 10;
// How long a closing connection keeps discarding input so that the client can read our
// final response before our close turns into a reset.
constexpr int64_t kLingerMs = 2000;
// Output buffers above this size are released rather than kept for the next response.
constexpr size_t kMaxRetainedOutputBytes = 64 << 10;

std::string FormatRemote(const asio::ip::tcp::endpoint& endpoint) {
  std::string address = endpoint.address().to_string();
  if (endpoint.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(endpoint.port());
}

// An exception from user code must not unwind through the io loop, which serves everyone.
void RunCallback(const std::function<void()>& callback) {
  try {
    callback();
  } catch (const std::exception& e) {
    LOG(ERROR) << "OnClose callback threw: " << e.what();
  }
}

}  // namespace

ServerConnection::ServerConnection(std::shared_ptr<ServerCore> core, asio::ip::tcp::socket socket,
                                   uint64_t id)
    : core_(std::move(core)),
      socket_(std::move(socket)),
      id_(id),
      read_deadline_(socket_.get_executor()),
      write_deadline_(socket_.get_executor()),
      reader_({core_->options().max_header_bytes, core_->options().max_body_bytes,
               [core = core_.get()](std::string_view method, std::string_view path) {
                 return core->MaxBodyBytes(method, path);
               }}) {
  error_code ec;
  asio::ip::tcp::endpoint endpoint = socket_.remote_endpoint(ec);
  remote_ = ec ? "unknown" : FormatRemote(endpoint);
}

void ServerConnection::Start() {
  error_code ec;
  // Streamed tokens are small writes; Nagle would hold each one back for an ACK.
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  BeginRequest();
  StartRead();
}

void ServerConnection::BeginRequest() {
  state_ = State::kReading;
  reader_.Reset();
  request_started_ = !input_.empty();
  if (input_.empty() && input_.capacity() > kMaxRetainedOutputBytes) std::string().swap(input_);
  ArmReadDeadline(request_started_ ? core_->options().header_timeout_ms
                                   : core_->options().idle_timeout_ms);
}

void ServerConnection::StartRead() {
  if (reading_ || state_ == State::kClosed) return;
  if (state_ != State::kLingering && input_.size() >= kMaxBufferedInputBytes) return;
  reading_ = true;
  socket_.async_read_some(asio::buffer(read_chunk_),
                          [self = shared_from_this()](const error_code& ec, size_t num_bytes) {
                            self->OnRead(ec, num_bytes);
                          });
}

void ServerConnection::OnRead(const error_code& ec, size_t num_bytes) {
  PhaseSpan span(Phase::kHttpIo);
  reading_ = false;
  if (state_ == State::kClosed) return;
  if (ec) {
    // EOF or reset: between requests a normal close; during a response the client left.
    Close();
    return;
  }
  if (state_ != State::kLingering) {
    input_.append(read_chunk_.data(), num_bytes);
    if (state_ == State::kReading) Pump();
  }
  StartRead();
}

void ServerConnection::Pump() {
  while (state_ == State::kReading && !input_.empty()) {
    if (!request_started_) {
      request_started_ = true;
      ArmReadDeadline(core_->options().header_timeout_ms);
    }
    ReadResult result = reader_.Feed(input_);
    switch (result.event) {
      case ReadEvent::kNeedMore:
        return;
      case ReadEvent::kHeaderAccepted:
        if (result.expects_continue) {
          QueueOutput("HTTP/1.1 100 Continue\r\n\r\n", /*from_writer=*/false);
        }
        ArmReadDeadline(core_->options().body_timeout_ms);
        break;  // the body may already be in input_
      case ReadEvent::kRejected:
        Reject(result.status, result.message);
        return;
      case ReadEvent::kComplete:
        Dispatch(std::move(result.request));
        return;
    }
  }
}

// Answers a request we will not dispatch, then closes: after a framing error we cannot
// tell where the next request would start.
void ServerConnection::Reject(int status, const std::string& message) {
  read_deadline_.Disarm();
  state_ = State::kResponding;
  response_.reset();
  keep_alive_ = false;
  response_ended_ = true;
  std::string body = ErrorJson(status, message);
  QueueOutput(FormatResponseHead(status, {{"Content-Type", "application/json"}},
                                 BodyFraming::kContentLength, body.size(), /*keep_alive=*/false) +
                  body,
              /*from_writer=*/false);
}

void ServerConnection::Dispatch(ParsedRequest parsed) {
  read_deadline_.Disarm();
  ResponseContext context;
  context.head_request = parsed.head_request;
  context.http10 = parsed.http10;
  context.keep_alive = parsed.keep_alive && !parsed.http10;
  context.max_write_buffer_bytes = core_->options().max_write_buffer_bytes;
  context.extra_headers = CorsResponseHeaders(core_->options().cors, parsed.request.headers);
  response_ = std::make_shared<ResponseState>(context);
  keep_alive_ = context.keep_alive;
  response_ended_ = false;
  state_ = State::kResponding;
  core_->num_requests.fetch_add(1, std::memory_order_relaxed);
  auto writer = std::make_shared<ResponseWriter>(shared_from_this(), response_);
  parsed.request.remote = remote_;
  core_->HandleRequest(std::move(parsed.request), std::move(writer));
}

void ServerConnection::Flush(const std::shared_ptr<ResponseState>& state) {
  PhaseSpan span(Phase::kHttpIo);
  std::string bytes;
  bool ended = false;
  bool keep_alive = false;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    bytes.swap(state->pending);
    state->flush_posted = false;
    ended = state->ended;
    keep_alive = state->keep_alive;
  }
  // A flush for an earlier response, or after we closed, has nowhere to go.
  if (state != response_ || state_ != State::kResponding || response_ended_) return;
  if (ended) {
    response_ended_ = true;
    keep_alive_ = keep_alive_ && keep_alive;
  }
  QueueOutput(bytes, /*from_writer=*/true);
  MaybeFinishResponse();
}

// The writer was dropped before the response ended.
void ServerConnection::Abandon(const std::shared_ptr<ResponseState>& state) {
  if (state != response_ || state_ != State::kResponding || response_ended_) return;
  Flush(state);  // bytes written before the drop still go out
  if (state != response_ || state_ != State::kResponding || response_ended_) return;
  bool started = false;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    started = state->phase != ResponseState::Phase::kNone;
  }
  response_ended_ = true;
  if (started) {
    keep_alive_ = false;  // cut the stream off: the client sees it incomplete
  } else {
    LOG(WARNING) << "handler dropped the response to " << remote_ << " without answering";
    std::string body = ErrorJson(500, "the server dropped the request");
    QueueOutput(FormatResponseHead(500, {{"Content-Type", "application/json"}},
                                   BodyFraming::kContentLength, body.size(), keep_alive_,
                                   state->context.extra_headers) +
                    body,
                /*from_writer=*/false);
  }
  MaybeFinishResponse();
}

void ServerConnection::QueueOutput(std::string_view bytes, bool from_writer) {
  output_.append(bytes);
  if (from_writer) queued_writer_bytes_ += bytes.size();
  WriteQueued();
}

void ServerConnection::WriteQueued() {
  if (writing_ || output_.empty() || state_ == State::kClosed) return;
  writing_ = true;
  output_writing_.swap(output_);
  output_.clear();
  writing_writer_bytes_ = queued_writer_bytes_;
  queued_writer_bytes_ = 0;
  write_deadline_.Arm(core_->options().write_timeout_ms, [self = shared_from_this()] {
    LOG(INFO) << "closing " << self->remote_ << ": write timed out";
    self->Close();
  });
  asio::async_write(socket_, asio::buffer(output_writing_),
                    [self = shared_from_this()](const error_code& ec, size_t) { self->OnWritten(ec); });
}

void ServerConnection::OnWritten(const error_code& ec) {
  PhaseSpan span(Phase::kHttpIo);
  writing_ = false;
  write_deadline_.Disarm();
  if (state_ == State::kClosed) return;
  if (ec) {
    Close();
    return;
  }
  if (response_) response_->unsent_bytes.fetch_sub(writing_writer_bytes_);
  writing_writer_bytes_ = 0;
  output_writing_.clear();
  if (output_writing_.capacity() > kMaxRetainedOutputBytes) std::string().swap(output_writing_);
  WriteQueued();
  MaybeFinishResponse();
}

void ServerConnection::MaybeFinishResponse() {
  if (state_ == State::kResponding && response_ended_ && !writing_ && output_.empty()) {
    FinishResponse();
  }
}

void ServerConnection::FinishResponse() {
  if (response_) response_->closed.store(true);
  response_.reset();
  FireOnClose();
  if (state_ != State::kResponding) return;  // a callback closed us
  if (!keep_alive_ || core_->draining.load()) {
    Linger();
    return;
  }
  BeginRequest();
  Pump();  // a pipelined request may be waiting
  StartRead();
}

// Half-closes and discards input for a while: closing a socket with unread input makes
// the kernel send a reset, which can destroy the response we just sent before the
// client reads it (a 413 while the client is still sending its body, say).
void ServerConnection::Linger() {
  state_ = State::kLingering;
  input_.clear();
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  ArmReadDeadline(kLingerMs);
  StartRead();
}

void ServerConnection::Close() {
  if (state_ == State::kClosed) return;
  bool cut_off = state_ == State::kResponding;
  state_ = State::kClosed;
  read_deadline_.Disarm();
  write_deadline_.Disarm();
  error_code ec;
  socket_.close(ec);
  if (response_) {
    if (cut_off) response_->disconnected.store(true);
    response_->closed.store(true);
    response_.reset();
  }
  FireOnClose();
  core_->Unregister(id_);
}

void ServerConnection::CloseIfIdle() {
  if (state_ == State::kReading && !request_started_ && !writing_) Close();
}

void ServerConnection::FireOnClose() {
  std::vector<std::function<void()>> callbacks;
  callbacks.swap(on_close_);
  for (std::function<void()>& callback : callbacks) RunCallback(callback);
}

void ServerConnection::ArmReadDeadline(int64_t timeout_ms) {
  read_deadline_.Arm(timeout_ms, [self = shared_from_this()] {
    if (self->state_ != State::kLingering && self->request_started_) {
      LOG(INFO) << "closing " << self->remote_ << ": request not received in time";
    }
    self->Close();
  });
}

bool ServerConnection::draining() const { return core_->draining.load(); }

bool ServerConnection::Post(std::function<void()> task) { return core_->Post(std::move(task)); }

void ServerConnection::PostFlush(std::shared_ptr<ResponseState> state) {
  Post([self = shared_from_this(), state = std::move(state)] { self->Flush(state); });
}

void ServerConnection::PostAbandon(std::shared_ptr<ResponseState> state) {
  Post([self = shared_from_this(), state = std::move(state)] { self->Abandon(state); });
}

void ServerConnection::PostAbort(std::shared_ptr<ResponseState> state) {
  Post([self = shared_from_this(), state = std::move(state)] {
    if (state != self->response_) return;
    LOG(INFO) << "closing " << self->remote_ << ": client reads too slowly for its stream";
    self->Close();
  });
}

void ServerConnection::PostOnClose(std::shared_ptr<ResponseState> state,
                                   std::function<void()> callback) {
  // The callback is shared so that it can still run here if the server has stopped.
  auto shared_callback = std::make_shared<std::function<void()>>(std::move(callback));
  bool posted = Post([self = shared_from_this(), state = std::move(state), shared_callback] {
    if (state == self->response_ && self->state_ != State::kClosed) {
      self->on_close_.push_back(std::move(*shared_callback));
    } else {
      RunCallback(*shared_callback);  // the response is already over
    }
  });
  if (!posted) RunCallback(*shared_callback);  // stopped: no io thread will ever run it
}

}  // namespace surge::net::internal
