// FieldReader: typed reads of a JSON request object's fields that keep the first error,
// naming the parameter, so that a parser reads every field and checks once at the end.
#pragma once

#include <cstdint>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/error.h"

namespace surge::api {

// Request bodies keep their key order: chat templates render tools and messages with
// |tojson, and Python (transformers, vLLM) preserves the order clients sent.
using Json = nlohmann::ordered_json;

// "a string", "an integer", "an object", ... for error messages.
std::string JsonTypeName(const Json& value);

// Integral JSON numbers; floats with no fractional part count too (2.0 is 2), as the
// lax JSON validators behind the OpenAI servers accept them.
std::optional<int64_t> AsInteger(const Json& value);

// Fields OpenAI documents as metadata: accepted, and without effect on the output.
inline constexpr std::array<std::string_view, 3> kMetadataFields = {"user", "metadata", "store"};

class FieldReader {
 public:
  explicit FieldReader(const Json& object) : object_(object) {}

  // The field, or nullptr when it is absent or null (OpenAI clients send null for "unset").
  // Every name looked up counts as read (see RefuseUnread).
  const Json* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  // Each leaves *out unchanged when the field is absent or null and returns whether it
  // read a value; a value of the wrong type records an error (and returns false).
  bool Bool(std::string_view name, bool* out);
  bool Int(std::string_view name, int64_t* out);
  bool Number(std::string_view name, double* out);
  bool String(std::string_view name, std::string* out);
  // Int, then a range check: "n must be in [1, 128], got 0".
  bool IntInRange(std::string_view name, int64_t min, int64_t max, int64_t* out);
  bool IntInRange(std::string_view name, int32_t min, int32_t max, int32_t* out);
  // Int, then a lower bound: "max_tokens must be >= 1, got 0".
  bool IntAtLeast(std::string_view name, int64_t min, int64_t* out);

  // A bool of which only `supported` is served (what this server always does, e.g. a peer's
  // default that its router writes into every body): any other value is refused, naming
  // the field and `why`.
  void BoolOnly(std::string_view name, bool supported, std::string_view why);
  // Records an InvalidArgument error on `name` unless `ok` (or an error is already kept).
  void Require(bool ok, std::string_view name, std::string message);
  void Fail(ApiError error);
  // Nothing accepted and silently ignored: records an error naming the first field of the
  // object that no read looked at, unless it is null or one of `ignored`. Call last.
  void RefuseUnread(std::span<const std::string_view> ignored = kMetadataFields);

  bool failed() const { return error_.has_value(); }
  const ApiError& error() const { return *error_; }

 private:
  bool TypeError(std::string_view name, const Json& value, const char* expected);

  const Json& object_;
  std::optional<ApiError> error_;
  mutable std::vector<std::string> read_;  // names looked up; a request has a few dozen at most
};

}  // namespace surge::api
