#include "net/request_reader.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "base/check.h"

namespace surge::net::internal {
namespace {

namespace http = boost::beast::http;
using boost::system::error_code;
using Parser = http::request_parser<http::string_body>;

std::string_view ToStd(boost::beast::string_view view) { return {view.data(), view.size()}; }

HttpRequest ToHttpRequest(http::request<http::string_body>&& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  if (question != std::string::npos) request.query = request.target.substr(question + 1);
  request.version = message.version();
  for (const auto& field : message) {
    request.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(message.body());
  return request;
}

ReadResult Rejection(int status, std::string message) {
  ReadResult result;
  result.event = ReadEvent::kRejected;
  result.status = status;
  result.message = std::move(message);
  return result;
}

}  // namespace

struct RequestReader::Impl {
  // A parse error (not need_more) as the status and message the client gets.
  ReadResult RejectMalformed(const error_code& ec) const;
  // Runs once per request, between header and body: refuses an oversized body before
  // reading it and notes "Expect: 100-continue".
  ReadResult CheckHeader();
  ReadResult Complete();
  size_t BodyLimit() const;

  RequestReaderOptions options;
  std::optional<Parser> parser;  // a fresh one per request: Beast's parsers are single-use
  bool header_checked = false;
  bool done = false;                   // kComplete was returned
  std::optional<ReadResult> rejected;  // kRejected was returned: repeated until Reset
  size_t body_limit = 0;               // this request's, known once its header is in
};

size_t RequestReader::Impl::BodyLimit() const {
  if (!options.max_body_bytes_for) return options.max_body_bytes;
  const std::string_view target = ToStd(parser->get().target());
  return options.max_body_bytes_for(ToStd(parser->get().method_string()), target.substr(0, target.find('?')));
}

ReadResult RequestReader::Impl::RejectMalformed(const error_code& ec) const {
  if (ec == http::error::header_limit) {
    return Rejection(431, "request header larger than " + std::to_string(options.max_header_bytes) +
                              " bytes");
  }
  if (ec == http::error::body_limit) {
    return Rejection(413, "request body exceeds the limit of " + std::to_string(body_limit) + " bytes");
  }
  return Rejection(400, "malformed request: " + ec.message());
}

ReadResult RequestReader::Impl::CheckHeader() {
  header_checked = true;
  body_limit = BodyLimit();
  boost::optional<uint64_t> length = parser->content_length();
  if (length && *length > body_limit) {
    return Rejection(413, "request body of " + std::to_string(*length) + " bytes exceeds the limit of " +
                              std::to_string(body_limit) + " bytes");
  }
  parser->body_limit(body_limit);  // caps chunked bodies too
  // Until now the parser stopped after the header so that the check above ran before
  // the body was sized; from here it may parse the body in the same put.
  parser->eager(true);
  ReadResult result;
  result.event = ReadEvent::kHeaderAccepted;
  auto expect = parser->get().find(http::field::expect);
  result.expects_continue =
      expect != parser->get().end() && EqualsIgnoreCase(ToStd(expect->value()), "100-continue");
  return result;
}

ReadResult RequestReader::Impl::Complete() {
  done = true;
  http::request<http::string_body> message = parser->release();
  ReadResult result;
  result.event = ReadEvent::kComplete;
  result.request.head_request = message.method() == http::verb::head;
  result.request.http10 = message.version() < 11;
  result.request.keep_alive = message.keep_alive();
  result.request.request = ToHttpRequest(std::move(message));
  return result;
}

RequestReader::RequestReader(RequestReaderOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  Reset();
}

RequestReader::~RequestReader() = default;

void RequestReader::Reset() {
  Impl& impl = *impl_;
  impl.parser.emplace();
  impl.parser->header_limit(static_cast<uint32_t>(
      std::min<size_t>(impl.options.max_header_bytes, std::numeric_limits<uint32_t>::max())));
  // Content-Length is checked in CheckHeader. (Not boost::none: Beast 1.74 compares
  // Content-Length > none, which is always true.)
  impl.parser->body_limit(std::numeric_limits<uint64_t>::max());
  impl.header_checked = false;
  impl.body_limit = impl.options.max_body_bytes;
  impl.done = false;
  impl.rejected.reset();
}

ReadResult RequestReader::Feed(std::string& input) {
  Impl& impl = *impl_;
  if (impl.rejected) return *impl.rejected;
  CHECK(!impl.done) << "RequestReader::Feed after kComplete without Reset";
  while (!input.empty()) {
    error_code ec;
    size_t used = impl.parser->put(boost::asio::buffer(input), ec);
    input.erase(0, used);
    bool need_more = ec == http::error::need_more;  // progress may still have been made
    if (ec && !need_more) return *(impl.rejected = impl.RejectMalformed(ec));
    if (impl.parser->is_header_done() && !impl.header_checked) {
      ReadResult checked = impl.CheckHeader();
      if (checked.event == ReadEvent::kRejected) return *(impl.rejected = std::move(checked));
      // A request without a body is complete with its header: nothing to continue.
      if (!impl.parser->is_done()) return checked;
    }
    if (impl.parser->is_done()) return impl.Complete();
    if (need_more || used == 0) break;
  }
  return ReadResult{};
}

}  // namespace surge::net::internal
