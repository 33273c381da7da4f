#include "api/error.h"

#include <nlohmann/json.hpp>

namespace surge::api {
namespace {

// OpenAI's error types: clients switch on them, so they follow the HTTP status.
const char* ErrorType(int http_status) {
  if (http_status == 429) return "rate_limit_exceeded";
  if (http_status == 503) return "service_unavailable";
  if (http_status == 504) return "timeout_error";  // the request's own deadline passed
  if (http_status >= 500) return "server_error";
  return "invalid_request_error";
}

nlohmann::json NullIfEmpty(std::string_view text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(text));
}

}  // namespace

ApiError InvalidParam(std::string param, std::string message) {
  return ApiError{InvalidArgumentError(std::move(message)), std::move(param), ""};
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string ErrorBody(int http_status, std::string_view message, std::string_view param,
                      std::string_view code) {
  nlohmann::ordered_json error = {{"message", std::string(message)},
                                  {"type", ErrorType(http_status)},
                                  {"param", NullIfEmpty(param)},
                                  {"code", NullIfEmpty(code)}};
  nlohmann::ordered_json body = {{"error", std::move(error)}};
  // Messages may quote client bytes; never throw on them.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ErrorReply MakeErrorReply(const ApiError& error) {
  const int http_status = HttpStatusFor(error.status.code());
  return {http_status, ErrorBody(http_status, error.status.message(), error.param, error.code)};
}

ErrorReply MakeErrorReply(const Status& status) { return MakeErrorReply(ApiError{status, "", ""}); }

}  // namespace surge::api
