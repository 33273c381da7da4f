// ApiError and ApiResult: how OpenAI-protocol errors carry the parameter at fault, and the
// one mapping from a Status to an HTTP status and OpenAI's error body.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/check.h"
#include "base/status.h"

namespace surge::api {

struct ApiError {
  Status status;      // the kind (InvalidArgument, NotFound, ...) and the message
  std::string param;  // the request field at fault ("max_tokens", "messages"); "" when none
  std::string code;   // OpenAI's machine-readable code ("model_not_found"); "" when none
};

// An InvalidArgument error that names `param`.
ApiError InvalidParam(std::string param, std::string message);

// A value, or the ApiError that explains why there is none.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : data_(std::move(value)) {}        // NOLINT: implicit by design
  ApiResult(ApiError error) : data_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const ApiError& error() const {
    CHECK(!ok()) << "ApiResult holds a value";
    return std::get<ApiError>(data_);
  }
  T& value() & { CHECK(ok()) << error().status.ToString(); return std::get<T>(data_); }
  const T& value() const& { CHECK(ok()) << error().status.ToString(); return std::get<T>(data_); }
  T&& value() && { CHECK(ok()) << error().status.ToString(); return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, ApiError> data_;
};

// InvalidArgument/OutOfRange 400, NotFound 404, ResourceExhausted 429, Unavailable 503,
// DeadlineExceeded 504 (type "timeout_error": the request's `timeout` passed), everything
// else 500.
int HttpStatusFor(StatusCode code);

// What an error response carries: the HTTP status and OpenAI's error object,
// {"error": {"message", "type", "param", "code"}} (param and code null when unset).
struct ErrorReply {
  int http_status = 500;
  std::string body;
};
ErrorReply MakeErrorReply(const ApiError& error);
ErrorReply MakeErrorReply(const Status& status);

// The error object for an HTTP status chosen by the caller (413 and the like, which no
// Status names).
std::string ErrorBody(int http_status, std::string_view message, std::string_view param = {},
                      std::string_view code = {});

}  // namespace surge::api
