#include "base/json_access.h"

#include <cmath>

namespace surge::json {

StatusOr<Json> Parse(std::string_view text, std::string_view what, int max_depth, size_t max_bytes) {
  if (text.size() > max_bytes) {
    return InvalidArgumentError(std::string(what) + ": " + std::to_string(text.size()) +
                                " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  if (!JsonDepthWithin(text, max_depth)) {
    return InvalidArgumentError(std::string(what) + ": JSON nests deeper than " + std::to_string(max_depth));
  }
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return InvalidArgumentError(std::string(what) + ": not valid JSON");
  return value;
}

std::string Dump(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string Dump(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string TypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "a value";
  }
}

namespace {

// A short rendering of a bad number for an error message.
std::string Shown(const Json& value) {
  std::string text = Dump(value);
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return text;
}

std::string IntRange(int64_t min, int64_t max) {
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

}  // namespace

StatusOr<int64_t> ToInt64(const Json& value, int64_t min, int64_t max) {
  const auto fail = [&] { return InvalidArgumentError("must be " + IntRange(min, max) + ", got " + Shown(value)); };
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (max < 0 || v > static_cast<uint64_t>(max) || static_cast<int64_t>(v) < min) return fail();
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < min || v > max) return fail();
    return v;
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    // 2^63 is exact as a double; everything below it converts without UB.
    if (!std::isfinite(v) || v != std::floor(v) || v < -9223372036854775808.0 || v >= 9223372036854775808.0) return fail();
    const auto i = static_cast<int64_t>(v);
    if (i < min || i > max) return fail();
    return i;
  }
  return InvalidArgumentError("must be " + IntRange(min, max) + ", got " + TypeName(value));
}

StatusOr<double> ToDouble(const Json& value, double min, double max) {
  if (!value.is_number()) return InvalidArgumentError("must be a number, got " + TypeName(value));
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    return InvalidArgumentError("must be a finite number in [" + Shown(Json(min)) + ", " + Shown(Json(max)) +
                                "], got " + Shown(value));
  }
  return v;
}

ObjectReader::ObjectReader(const Json& value, std::string what) : value_(value), what_(std::move(what)) {
  if (!value_.is_object()) status_ = InvalidArgumentError(what_ + ": must be an object, got " + TypeName(value_));
}

const Json* ObjectReader::Find(std::string_view key) const {
  if (!value_.is_object()) return nullptr;
  const auto it = value_.find(key);
  if (it == value_.end() || it->is_null()) return nullptr;
  return &*it;
}

void ObjectReader::Fail(std::string_view key, std::string message) {
  if (status_.ok()) status_ = InvalidArgumentError(what_ + ": " + std::string(key) + " " + message);
}

const Json* ObjectReader::Field(std::string_view key, bool required) {
  if (!status_.ok()) return nullptr;
  const Json* field = Find(key);
  if (field == nullptr && required) Fail(key, "is required");
  return field;
}

ObjectReader& ObjectReader::Bool(std::string_view key, bool* out) {
  if (const Json* f = Field(key, false)) {
    if (f->is_boolean()) *out = f->get<bool>();
    else Fail(key, "must be a boolean, got " + TypeName(*f));
  }
  return *this;
}

ObjectReader& ObjectReader::String(std::string_view key, std::string* out) {
  if (const Json* f = Field(key, false)) {
    if (f->is_string()) *out = f->get<std::string>();
    else Fail(key, "must be a string, got " + TypeName(*f));
  }
  return *this;
}

ObjectReader& ObjectReader::Int(std::string_view key, int64_t min, int64_t max, int64_t* out) {
  if (const Json* f = Field(key, false)) {
    StatusOr<int64_t> v = ToInt64(*f, min, max);
    if (v.ok()) *out = *v;
    else Fail(key, v.status().message());
  }
  return *this;
}

ObjectReader& ObjectReader::Int(std::string_view key, int32_t min, int32_t max, int32_t* out) {
  int64_t v = *out;
  Int(key, int64_t{min}, int64_t{max}, &v);
  if (ok()) *out = static_cast<int32_t>(v);
  return *this;
}

ObjectReader& ObjectReader::Double(std::string_view key, double min, double max, double* out) {
  if (const Json* f = Field(key, false)) {
    StatusOr<double> v = ToDouble(*f, min, max);
    if (v.ok()) *out = *v;
    else Fail(key, v.status().message());
  }
  return *this;
}

ObjectReader& ObjectReader::Object(std::string_view key, const Json** out) {
  if (const Json* f = Field(key, false)) {
    if (f->is_object()) *out = f;
    else Fail(key, "must be an object, got " + TypeName(*f));
  }
  return *this;
}

ObjectReader& ObjectReader::Array(std::string_view key, const Json** out) {
  if (const Json* f = Field(key, false)) {
    if (f->is_array()) *out = f;
    else Fail(key, "must be an array, got " + TypeName(*f));
  }
  return *this;
}

ObjectReader& ObjectReader::RequiredString(std::string_view key, std::string* out) {
  return Field(key, true) ? String(key, out) : *this;
}
ObjectReader& ObjectReader::RequiredInt(std::string_view key, int64_t min, int64_t max, int64_t* out) {
  return Field(key, true) ? Int(key, min, max, out) : *this;
}
ObjectReader& ObjectReader::RequiredObject(std::string_view key, const Json** out) {
  return Field(key, true) ? Object(key, out) : *this;
}
ObjectReader& ObjectReader::RequiredArray(std::string_view key, const Json** out) {
  return Field(key, true) ? Array(key, out) : *this;
}

}  // namespace surge::json
