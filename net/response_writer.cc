#include "net/response_writer.h"

#include "net/http_wire.h"
#include "net/response_state.h"
#include "net/server_connection.h"

namespace surge::net {

using internal::BodyFraming;
using internal::ResponseState;
using Phase = ResponseState::Phase;

namespace {

// Accounts for `num_bytes` just appended to state.pending; called with state.mu held.
// Returns true when the caller must post a flush (none is on its way yet): one post
// carries every byte appended before it runs, so a fast producer costs one io-thread
// wakeup per batch, not per chunk.
bool Appended(ResponseState& state, size_t num_bytes, bool last) {
  state.unsent_bytes.fetch_add(num_bytes);
  if (last) {
    state.ended = true;
    state.phase = Phase::kDone;
    state.closed.store(true);
  }
  if (state.flush_posted) return false;
  state.flush_posted = true;
  return true;
}

bool Enqueue(ResponseState& state, std::string_view bytes, bool last) {
  state.pending.append(bytes);
  return Appended(state, bytes.size(), last);
}

}  // namespace

ResponseWriter::ResponseWriter(std::shared_ptr<internal::ServerConnection> connection,
                               std::shared_ptr<internal::ResponseState> state)
    : connection_(std::move(connection)), state_(std::move(state)) {}

ResponseWriter::~ResponseWriter() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->phase == Phase::kDone || state_->closed.load()) return;
    state_->closed.store(true);
  }
  connection_->PostAbandon(state_);
}

void ResponseWriter::Send(int status, HttpHeaders headers, std::string body) {
  const internal::ResponseContext& context = state_->context;
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->phase != Phase::kNone || state_->closed.load()) return;
    state_->keep_alive = context.keep_alive && !connection_->draining();
    state_->status = status;
    for (const auto& [name, value] : state_->added_headers) headers.Add(name, value);
    std::string bytes = internal::FormatResponseHead(status, headers, BodyFraming::kContentLength,
                                                     body.size(), state_->keep_alive, context.extra_headers);
    if (!context.head_request && status != 204 && status != 304) bytes += body;  // bodiless
    post = Enqueue(*state_, bytes, /*last=*/true);
  }
  if (post) connection_->PostFlush(state_);
}

void ResponseWriter::SendJson(int status, std::string json) {
  Send(status, {{"Content-Type", "application/json"}}, std::move(json));
}

void ResponseWriter::SendError(int status, std::string_view message) {
  SendJson(status, ErrorJson(status, message));
}

void ResponseWriter::StartStream(int status, HttpHeaders headers) {
  const internal::ResponseContext& context = state_->context;
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->phase != Phase::kNone || state_->closed.load()) return;
    state_->phase = Phase::kStreaming;
    state_->keep_alive = context.keep_alive && !connection_->draining();
    state_->status = status;
    for (const auto& [name, value] : state_->added_headers) headers.Add(name, value);
    BodyFraming framing = context.http10 ? BodyFraming::kUntilClose : BodyFraming::kChunked;
    post = Enqueue(*state_,
                   internal::FormatResponseHead(status, headers, framing, 0, state_->keep_alive,
                                                context.extra_headers),
                   /*last=*/false);
  }
  if (post) connection_->PostFlush(state_);
}

bool ResponseWriter::Write(std::string_view data) {
  if (state_->closed.load()) return false;
  if (data.empty()) return true;  // an empty chunk would end a chunked body
  const internal::ResponseContext& context = state_->context;
  bool post = false;
  bool overflow = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->phase != Phase::kStreaming || state_->closed.load()) return false;
    if (context.head_request) return true;  // HEAD: the body is never sent
    size_t unsent_bytes = state_->unsent_bytes.load();
    if (unsent_bytes > 0 && unsent_bytes + data.size() > context.max_write_buffer_bytes) {
      // The client reads slower than we produce; buffering without end would let one
      // slow reader exhaust memory. Treat it as gone so that its request is cancelled.
      overflow = true;
      state_->closed.store(true);
      state_->disconnected.store(true);
    } else if (context.http10) {
      post = Enqueue(*state_, data, /*last=*/false);
    } else {
      size_t before = state_->pending.size();
      internal::AppendChunk(&state_->pending, data);
      post = Appended(*state_, state_->pending.size() - before, /*last=*/false);
    }
  }
  if (overflow) {
    connection_->PostAbort(state_);
    return false;
  }
  if (post) connection_->PostFlush(state_);
  return true;
}

void ResponseWriter::End() {
  const internal::ResponseContext& context = state_->context;
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->phase != Phase::kStreaming || state_->closed.load()) return;
    bool chunked = !context.http10 && !context.head_request;
    post = Enqueue(*state_, chunked ? internal::kLastChunk : std::string_view(), /*last=*/true);
  }
  if (post) connection_->PostFlush(state_);
}

void ResponseWriter::AddHeader(std::string name, std::string value) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->phase == Phase::kNone) state_->added_headers.Add(std::move(name), std::move(value));
}

int ResponseWriter::status() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->status;
}

bool ResponseWriter::closed() const { return state_->closed.load(); }

bool ResponseWriter::disconnected() const { return state_->disconnected.load(); }

void ResponseWriter::OnClose(std::function<void()> callback) {
  connection_->PostOnClose(state_, std::move(callback));
}

}  // namespace surge::net
