#include "net/stream_fetch.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <chrono>
#include <limits>
#include <optional>

#include "net/url.h"

namespace surge::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// The client speaks one request per connection: a Kubernetes client's calls are few (a
// list, a long watch, a scale now and then), so pooling would buy nothing.
struct Target {
  bool https = false;
  Url url;
};

bool HasExplicitPort(std::string_view url) {
  std::string_view rest = url.substr(url.find("://") + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  size_t bracket = authority.rfind(']');
  size_t colon = authority.rfind(':');
  return colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket);
}

StatusOr<Target> ParseTarget(std::string_view url) {
  Target target;
  std::string plain(url);
  if (url.starts_with("https://")) {
    target.https = true;
    plain = "http://" + std::string(url.substr(8));
  }
  ASSIGN_OR_RETURN(target.url, ParseUrl(plain));
  if (target.https && !HasExplicitPort(plain)) target.url.port = 443;
  return target;
}

Status ConfigureContext(const TlsOptions& tls, ssl::context* context) {
  error_code ec;
  if (!tls.ca_pem.empty()) {
    context->add_certificate_authority(asio::buffer(tls.ca_pem), ec);
  } else {
    context->set_default_verify_paths(ec);
  }
  if (ec) return InvalidArgumentError("CA certificates: " + ec.message());
  if (tls.client_cert_pem.empty() != tls.client_key_pem.empty()) {
    return InvalidArgumentError("a client certificate needs its key, and a key its certificate");
  }
  if (!tls.client_cert_pem.empty()) {
    context->use_certificate_chain(asio::buffer(tls.client_cert_pem), ec);
    if (ec) return InvalidArgumentError("client certificate: " + ec.message());
    context->use_private_key(asio::buffer(tls.client_key_pem), ssl::context::pem, ec);
    if (ec) return InvalidArgumentError("client key: " + ec.message());
  }
  context->set_verify_mode(tls.verify_peer ? ssl::verify_peer : ssl::verify_none);
  return OkStatus();
}

// One exchange on the caller's thread: a private io_context runs the coroutine in short
// slices so that the cancel flag and the total deadline are looked at between them.
class Exchange {
 public:
  Exchange(Target target, const StreamRequest& request, const StreamCallbacks& callbacks)
      : target_(std::move(target)), request_(request), callbacks_(callbacks) {}

  StatusOr<HttpResponse> Run(const TlsOptions& tls, const std::atomic<bool>* cancel);

 private:
  beast::tcp_stream& Lowest() { return secure_ ? beast::get_lowest_layer(*secure_) : *plain_; }
  void ArmRead() {
    if (request_.read_timeout_ms > 0) {
      Lowest().expires_after(std::chrono::milliseconds(request_.read_timeout_ms));
    } else {
      Lowest().expires_never();
    }
  }
  Status Failure(std::string_view stage, const error_code& ec, StatusCode code) const;
  asio::awaitable<Status> Connect();
  template <typename Stream>
  asio::awaitable<Status> Talk(Stream& stream);
  template <typename Stream>
  asio::awaitable<Status> ReadBody(Stream& stream, http::response_parser<http::buffer_body>& parser,
                                   beast::flat_buffer& buffer);
  Status Deliver(std::string_view data);

  asio::io_context io_;
  std::optional<ssl::context> context_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure_;
  Target target_;
  const StreamRequest& request_;
  const StreamCallbacks& callbacks_;
  HttpResponse response_;
  std::optional<Status> aborted_;  // why the loop closed the socket: cancel or deadline
};

Status Exchange::Failure(std::string_view stage, const error_code& ec, StatusCode code) const {
  if (aborted_) return *aborted_;
  std::string where = std::string(stage) + " " + target_.url.HostPort() + ": ";
  if (ec == beast::error::timeout) {
    return Status(StatusCode::kDeadlineExceeded,
                  where + "no bytes for " + std::to_string(request_.read_timeout_ms) + " ms");
  }
  return Status(code, where + ec.message());
}

asio::awaitable<Status> Exchange::Connect() {
  error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  asio::ip::tcp::resolver resolver(io_);
  auto endpoints = co_await resolver.async_resolve(target_.url.host, std::to_string(target_.url.port), token);
  if (ec) co_return Failure("resolve", ec, StatusCode::kUnavailable);
  ArmRead();
  co_await Lowest().async_connect(endpoints, token);
  if (ec) co_return Failure("connect to", ec, StatusCode::kUnavailable);
  if (!secure_) co_return OkStatus();
  error_code not_ip;
  asio::ip::make_address(target_.url.host, not_ip);
  if (not_ip) SSL_set_tlsext_host_name(secure_->native_handle(), target_.url.host.c_str());
  secure_->set_verify_callback(ssl::host_name_verification(target_.url.host));
  co_await secure_->async_handshake(ssl::stream_base::client, token);
  if (ec) co_return Failure("TLS handshake with", ec, StatusCode::kUnavailable);
  co_return OkStatus();
}

template <typename Stream>
asio::awaitable<Status> Exchange::Talk(Stream& stream) {
  error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  http::request<http::string_body> message;
  message.method_string(request_.method);
  message.target(target_.url.target);
  message.version(11);
  message.set(http::field::host, target_.url.HostPort());
  message.set(http::field::connection, "close");
  for (const auto& [name, value] : request_.headers) message.set(name, value);
  message.body() = request_.body;
  if (!request_.body.empty() || request_.method != "GET") message.prepare_payload();
  co_await http::async_write(stream, message, token);
  if (ec) co_return Failure("send to", ec, StatusCode::kUnavailable);

  http::response_parser<http::buffer_body> parser;
  parser.header_limit(64 << 10);
  parser.body_limit(std::numeric_limits<uint64_t>::max());  // collected bodies: max_body_bytes
  beast::flat_buffer buffer;
  ArmRead();
  co_await http::async_read_header(stream, buffer, parser, token);
  if (ec) co_return Failure("response head from", ec, StatusCode::kUnavailable);
  response_.status = parser.get().result_int();
  for (const auto& field : parser.get()) {
    response_.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  if (callbacks_.on_head) callbacks_.on_head(response_);
  co_return co_await ReadBody(stream, parser, buffer);
}

template <typename Stream>
asio::awaitable<Status> Exchange::ReadBody(Stream& stream, http::response_parser<http::buffer_body>& parser,
                                           beast::flat_buffer& buffer) {
  error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  std::array<char, 16384> chunk;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    ArmRead();
    co_await http::async_read_some(stream, buffer, parser, token);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) co_return Failure("response body from", ec, StatusCode::kDataLoss);
    size_t num_bytes = chunk.size() - parser.get().body().size;
    if (num_bytes == 0) continue;
    Status delivered = Deliver(std::string_view(chunk.data(), num_bytes));
    if (!delivered.ok()) co_return delivered;
  }
  co_return OkStatus();
}

Status Exchange::Deliver(std::string_view data) {
  if (callbacks_.on_data) {
    if (!callbacks_.on_data(data)) return Status(StatusCode::kCancelled, "on_data stopped the response");
    return OkStatus();
  }
  if (response_.body.size() + data.size() > request_.max_body_bytes) {
    return ResourceExhaustedError("response body over " + std::to_string(request_.max_body_bytes) + " bytes");
  }
  response_.body.append(data);
  return OkStatus();
}

StatusOr<HttpResponse> Exchange::Run(const TlsOptions& tls, const std::atomic<bool>* cancel) {
  if (target_.https) {
    context_.emplace(ssl::context::tls_client);
    RETURN_IF_ERROR(ConfigureContext(tls, &*context_));
    secure_.emplace(io_, *context_);
  } else {
    plain_.emplace(io_);
  }
  std::optional<Status> result;
  auto body = [this]() -> asio::awaitable<Status> {
    Status connected = co_await Connect();
    if (!connected.ok()) co_return connected;
    if (secure_) co_return co_await Talk(*secure_);
    co_return co_await Talk(*plain_);
  };
  asio::co_spawn(io_, body(), [&result](std::exception_ptr error, Status status) {
    result = error ? InternalError("exception in an HTTP callback") : std::move(status);
  });
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(request_.timeout_ms);
  while (!result) {
    io_.run_for(std::chrono::milliseconds(20));
    if (result || aborted_) continue;
    if (cancel != nullptr && cancel->load()) {
      aborted_ = Status(StatusCode::kCancelled, "cancelled");
    } else if (request_.timeout_ms > 0 && Clock::now() >= deadline) {
      aborted_ = Status(StatusCode::kDeadlineExceeded, "exchange with " + target_.url.HostPort() + " took over " +
                                                           std::to_string(request_.timeout_ms) + " ms");
    }
    if (aborted_) Lowest().close();  // pending operations complete with operation_aborted
  }
  if (!result->ok()) return *result;
  return std::move(response_);
}

}  // namespace

StatusOr<HttpResponse> StreamFetch(const StreamRequest& request, const TlsOptions& tls,
                                   const StreamCallbacks& callbacks, const std::atomic<bool>* cancel) {
  ASSIGN_OR_RETURN(Target target, ParseTarget(request.url));
  Exchange exchange(std::move(target), request, callbacks);
  return exchange.Run(tls, cancel);
}

}  // namespace surge::net
