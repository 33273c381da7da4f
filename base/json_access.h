// Typed, bounded access to JSON that comes from outside the process (batch lines, queue
// messages, engine answers, Kubernetes answers, kubeconfigs, configs): parse with the depth
// checked first, read fields and convert numbers with range checks, dump invalid UTF-8 in
// replace mode -- every failure a Status naming what was wrong, never an exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/json_depth.h"
#include "base/status.h"

namespace surge::json {

using Json = nlohmann::ordered_json;

// Outside JSON bigger than this is refused unless the caller passes its own bound.
inline constexpr size_t kDefaultMaxBytes = 64u << 20;

// `text` parsed after its nesting depth was checked against `max_depth` (so no recursive
// copy, dump or destructor of the result can run out of stack) and its size against
// `max_bytes`. `what` names the document in the error ("kv_config", "queue message body").
StatusOr<Json> Parse(std::string_view text, std::string_view what, int max_depth = kMaxFileJsonDepth,
                     size_t max_bytes = kDefaultMaxBytes);

// Compact text of `value`; invalid UTF-8 inside strings becomes U+FFFD instead of throwing.
std::string Dump(const Json& value, int indent = -1);
// The same for the unordered nlohmann::json (the Batch API's objects).
std::string Dump(const nlohmann::json& value, int indent = -1);

// "a string", "an integer", "an object", ... for error messages.
std::string TypeName(const Json& value);

// A JSON number as an integer in [min, max]: integers, and floats with no fraction part;
// NaN, infinities, fractions and values out of range are errors (never a UB cast).
StatusOr<int64_t> ToInt64(const Json& value, int64_t min = std::numeric_limits<int64_t>::min(),
                          int64_t max = std::numeric_limits<int64_t>::max());
// A finite JSON number in [min, max].
StatusOr<double> ToDouble(const Json& value, double min = -std::numeric_limits<double>::max(),
                          double max = std::numeric_limits<double>::max());

// Reads the fields of one object and keeps the first error, naming `what` and the key:
// "kv_config: block_size must be an integer in [1, 4096], got 1e300". Each optional read
// leaves *out unchanged when the key is absent or null; a Required* read also fails then.
// A reader over a value that is not an object fails at once.
class ObjectReader {
 public:
  ObjectReader(const Json& value, std::string what);

  // The field, or nullptr when absent or null (and on a non-object).
  const Json* Find(std::string_view key) const;

  ObjectReader& Bool(std::string_view key, bool* out);
  ObjectReader& String(std::string_view key, std::string* out);
  ObjectReader& Int(std::string_view key, int64_t min, int64_t max, int64_t* out);
  ObjectReader& Int(std::string_view key, int32_t min, int32_t max, int32_t* out);
  ObjectReader& Double(std::string_view key, double min, double max, double* out);
  // An object or array member, borrowed from the reader's value (nullptr when absent).
  ObjectReader& Object(std::string_view key, const Json** out);
  ObjectReader& Array(std::string_view key, const Json** out);

  ObjectReader& RequiredString(std::string_view key, std::string* out);
  ObjectReader& RequiredInt(std::string_view key, int64_t min, int64_t max, int64_t* out);
  ObjectReader& RequiredObject(std::string_view key, const Json** out);
  ObjectReader& RequiredArray(std::string_view key, const Json** out);

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  // The field to read, or nullptr (absent, null, or an error is already kept).
  const Json* Field(std::string_view key, bool required);
  void Fail(std::string_view key, std::string message);

  const Json& value_;
  std::string what_;
  Status status_;
};

}  // namespace surge::json
