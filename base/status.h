// Status and StatusOr<T>: how recoverable errors cross module boundaries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/check.h"

namespace surge {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,   // the caller passed something malformed (bad request, bad flag)
  kNotFound,          // a file, tensor, model or key that should exist does not
  kOutOfRange,        // an offset, index or length past its limit
  kDataLoss,          // a file is truncated or corrupt
  kUnimplemented,     // valid input we do not support (yet): unknown architecture, dtype
  kResourceExhausted, // a limit was hit: queue full, request larger than the KV pool
  kUnavailable,       // not ready, draining, connection refused
  kCancelled,
  kDeadlineExceeded,
  kInternal,          // a bug or an unexpected failure of the OS
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NOT_FOUND: tensor 'x' missing" style text for logs and CLI errors.
  std::string ToString() const;

  // Returns a copy whose message is "context: message", for adding the file or field name.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status OutOfRangeError(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// A value or the Status that explains why there is none. Never holds an OK status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    CHECK(!std::get<Status>(data_).ok()) << "StatusOr built from an OK status";
  }
  StatusOr(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { CheckOk(); return std::get<T>(data_); }
  const T& value() const& { CheckOk(); return std::get<T>(data_); }
  T&& value() && { CheckOk(); return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const { CHECK(ok()) << "StatusOr has no value: " << status().ToString(); }
  std::variant<Status, T> data_;
};

}  // namespace surge

#define SURGE_CONCAT_INNER(a, b) a##b
#define SURGE_CONCAT(a, b) SURGE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::surge::Status surge_status_ = (expr);   \
    if (!surge_status_.ok()) return surge_status_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SURGE_CONCAT(surge_statusor_, __LINE__), lhs, expr)
