#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>

#include <limits>

#include "base/logging.h"
#include "net/client_core.h"
#include "net/http_wire.h"

namespace surge::net::internal {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using boost::system::error_code;

SteadyTime Now() { return std::chrono::steady_clock::now(); }

}  // namespace

ClientExchange::ClientExchange(std::shared_ptr<ClientCore> core, uint64_t id, Url url,
                               ClientRequest request, ClientCallbacks callbacks,
                               ClientTimings timings)
    : core_(std::move(core)),
      id_(id),
      url_(std::move(url)),
      host_port_(url_.HostPort()),
      request_(std::move(request)),
      callbacks_(std::move(callbacks)),
      total_deadline_(core_->io().get_executor()),
      read_deadline_(core_->io().get_executor()) {
  result_.timings = timings;
}

void ClientExchange::Start(bool allow_reuse) {
  total_deadline_.Arm(request_.timeout_ms, [self = shared_from_this()] {
    self->Fail(Status(StatusCode::kDeadlineExceeded,
                      "request to " + self->host_port_ + " timed out after " +
                          std::to_string(self->request_.timeout_ms) + " ms"));
  });
  if (allow_reuse) connection_ = core_->TakeIdle(host_port_);
  if (connection_) {
    result_.timings.reused_connection = true;
    result_.timings.connected = Now();
    SendRequest();
    return;
  }
  Connect();
}

void ClientExchange::Connect() {
  connection_ = std::make_unique<PooledConnection>(core_->io());
  ArmReadDeadline(core_->options().connect_timeout_ms, "connect");
  auto on_connected = [self = shared_from_this()](const error_code& ec, const tcp::endpoint&) {
    self->OnConnected(ec);
  };
  error_code ec;
  asio::ip::address address = asio::ip::make_address(url_.host, ec);
  if (!ec) {
    std::vector<tcp::endpoint> endpoints = {tcp::endpoint(address, url_.port)};
    asio::async_connect(connection_->socket, endpoints, std::move(on_connected));
    return;
  }
  resolver_.emplace(core_->io());
  resolver_->async_resolve(
      url_.host, std::to_string(url_.port),
      [self = shared_from_this(), on_connected](const error_code& ec,
                                                tcp::resolver::results_type results) {
        if (self->finished_) return;
        if (ec) {
          self->Fail(UnavailableError("resolve " + self->url_.host + ": " + ec.message()));
          return;
        }
        asio::async_connect(self->connection_->socket, results, on_connected);
      });
}

void ClientExchange::OnConnected(const error_code& ec) {
  if (finished_) return;
  if (ec) {
    Fail(UnavailableError("connect to " + host_port_ + ": " + ec.message()));
    return;
  }
  core_->num_connections_opened.fetch_add(1);
  error_code ignored;
  connection_->socket.set_option(tcp::no_delay(true), ignored);
  result_.timings.connected = Now();
  SendRequest();
}

void ClientExchange::SendRequest() {
  request_head_ = FormatRequestHead(request_.method, url_, request_.headers, request_.body.size());
  ResetParser();
  if (request_.first_byte_timeout_ms > 0) {
    ArmReadDeadline(request_.first_byte_timeout_ms, "first response byte");
  } else {
    ArmReadDeadline(request_.read_timeout_ms, "response");
  }
  std::array<asio::const_buffer, 2> buffers = {asio::buffer(request_head_),
                                               asio::buffer(request_.body)};
  asio::async_write(connection_->socket, buffers,
                    [self = shared_from_this()](const error_code& ec, size_t) {
                      self->OnSent(ec);
                    });
  // Read at once, not after the write: an early response must not wait for the upload.
  ReadMore();
}

void ClientExchange::OnSent(const error_code& ec) {
  request_sent_ = !ec;
  // A server may answer (413, say) and close before taking the whole body; the read
  // side then has the response, so only fail when nothing came back.
  if (!ec || finished_ || got_response_bytes_) return;
  if (result_.timings.reused_connection) {
    RetryOnFreshConnection();
    return;
  }
  Fail(UnavailableError("send request to " + host_port_ + ": " + ec.message()));
}

// The server closed this idle connection just as we reused it; the request never
// reached a handler, so a fresh connection is what any client does here.
void ClientExchange::RetryOnFreshConnection() {
  finished_ = true;
  error_code ignored;
  connection_->socket.close(ignored);
  total_deadline_.Disarm();
  read_deadline_.Disarm();
  core_->Unregister(id_);
  ClientTimings timings = result_.timings;
  timings.reused_connection = false;
  core_->StartExchange(id_, url_, request_, std::move(callbacks_), timings, /*allow_reuse=*/false);
}

void ClientExchange::ResetParser() {
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(core_->options().max_response_header_bytes));
  // Not boost::none: Beast 1.74 then refuses every Content-Length body (len > none).
  parser_->body_limit(std::numeric_limits<uint64_t>::max());
  parser_->eager(true);
  if (request_.method == "HEAD") parser_->skip(true);
  head_delivered_ = false;
}

void ClientExchange::ReadMore() {
  connection_->socket.async_read_some(
      asio::buffer(read_chunk_), [self = shared_from_this()](const error_code& ec, size_t n) {
        self->OnRead(ec, n);
      });
}

void ClientExchange::OnRead(const error_code& ec, size_t num_bytes) {
  if (finished_) return;
  SteadyTime arrival = Now();
  if (ec) {
    OnReadError(ec);
    return;
  }
  got_response_bytes_ = true;
  ArmReadDeadline(request_.read_timeout_ms, "response");
  input_.append(read_chunk_.data(), num_bytes);
  Parse(arrival);
  if (!finished_) ReadMore();
}

void ClientExchange::OnReadError(const error_code& ec) {
  if (ec == asio::error::eof && parser_->is_header_done()) {
    error_code eof_ec;
    parser_->put_eof(eof_ec);  // a body without length ends at EOF
    if (!eof_ec && parser_->is_done()) {
      Complete();
      return;
    }
  }
  if (!got_response_bytes_ && result_.timings.reused_connection) {
    RetryOnFreshConnection();
    return;
  }
  if (!got_response_bytes_) {
    Fail(UnavailableError(host_port_ + " closed the connection before responding: " + ec.message()));
    return;
  }
  Fail(DataLossError("connection to " + host_port_ + " lost after " +
                     std::to_string(num_body_bytes_) + " body bytes: " + ec.message()));
}

template <typename Callback>
bool ClientExchange::RunUserCallback(Callback callback) {
  // An exception must not unwind through the io loop that serves every other request.
  try {
    callback();
    return true;
  } catch (const std::exception& e) {
    Fail(InternalError(std::string("HttpClient callback threw: ") + e.what()));
    return false;
  }
}

void ClientExchange::Parse(SteadyTime arrival) {
  while (!input_.empty() && !finished_) {
    error_code ec;
    size_t used = parser_->put(asio::buffer(input_), ec);
    input_.erase(0, used);
    // need_more still leaves parsed progress (head, body bytes) to deliver first.
    bool need_more = ec == http::error::need_more;
    if (ec && !need_more) {
      Fail(DataLossError("malformed response from " + host_port_ + ": " + ec.message()));
      return;
    }
    if (parser_->is_header_done() && !head_delivered_) {
      if (parser_->get().result_int() / 100 == 1) {  // 100 Continue and the like: skip
        ResetParser();
        continue;
      }
      head_delivered_ = true;
      result_.timings.head = arrival;
      result_.response.status = static_cast<int>(parser_->get().result_int());
      for (const auto& field : parser_->get()) {
        result_.response.headers.Add(std::string(field.name_string()), std::string(field.value()));
      }
      if (callbacks_.on_head && !RunUserCallback([&] { callbacks_.on_head(result_.response); })) {
        return;
      }
    }
    if (!DeliverBody(arrival)) return;
    if (parser_->is_done()) {
      Complete();
      return;
    }
    if (need_more || used == 0) return;
  }
}

bool ClientExchange::DeliverBody(SteadyTime arrival) {
  std::string& body = parser_->get().body();
  if (body.empty()) return true;
  num_body_bytes_ += body.size();
  if (callbacks_.on_data) {
    bool keep_going = true;
    if (!RunUserCallback([&] { keep_going = callbacks_.on_data(body, arrival); })) return false;
    body.clear();
    if (!keep_going) {
      Fail(Status(StatusCode::kCancelled, "request aborted by its on_data callback"));
      return false;
    }
    return true;
  }
  if (result_.response.body.size() + body.size() > core_->options().max_buffered_body_bytes) {
    Fail(ResourceExhaustedError("response body from " + host_port_ + " exceeds " +
                                std::to_string(core_->options().max_buffered_body_bytes) + " bytes"));
    return false;
  }
  result_.response.body.append(body);
  body.clear();
  return true;
}

void ClientExchange::Complete() {
  // keep_alive() is false for a body that ran to EOF, so this covers framing too. An
  // early response (before our upload finished) leaves the connection mid-write.
  bool reusable = parser_->keep_alive() && input_.empty() && request_sent_;
  finished_ = true;
  if (reusable) {
    core_->ReturnIdle(host_port_, std::move(connection_));
  } else {
    error_code ignored;
    connection_->socket.close(ignored);
  }
  Finish();
}

void ClientExchange::Fail(Status status) {
  if (finished_) return;
  finished_ = true;
  if (resolver_) resolver_->cancel();
  if (connection_) {
    error_code ignored;
    connection_->socket.close(ignored);
  }
  result_.status = std::move(status);
  Finish();
}

void ClientExchange::Finish() {
  total_deadline_.Disarm();
  read_deadline_.Disarm();
  result_.timings.done = Now();
  core_->Unregister(id_);
  std::function<void(ClientResult)> on_done = std::move(callbacks_.on_done);
  callbacks_ = {};
  if (!on_done) return;
  try {
    on_done(std::move(result_));
  } catch (const std::exception& e) {
    LOG(ERROR) << "HttpClient on_done callback threw: " << e.what();
  }
}

void ClientExchange::ArmReadDeadline(int64_t timeout_ms, std::string what) {
  read_deadline_.Arm(timeout_ms, [self = shared_from_this(), timeout_ms, what] {
    self->Fail(Status(StatusCode::kDeadlineExceeded, "no " + what + " from " + self->host_port_ +
                                                         " within " + std::to_string(timeout_ms) +
                                                         " ms"));
  });
}

}  // namespace surge::net::internal
