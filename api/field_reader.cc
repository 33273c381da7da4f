#include "api/field_reader.h"

#include <algorithm>
#include <cmath>

#include "base/json_access.h"

namespace surge::api {

std::string JsonTypeName(const Json& value) { return json::TypeName(value); }

std::optional<int64_t> AsInteger(const Json& value) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX) return std::nullopt;
    return value.get<int64_t>();
  }
  if (!value.is_number_float()) return std::nullopt;
  const double number = value.get<double>();
  // 2^63 is the first double past int64's range.
  if (!std::isfinite(number) || std::trunc(number) != number || std::fabs(number) >= 0x1p63) {
    return std::nullopt;
  }
  return static_cast<int64_t>(number);
}

const Json* FieldReader::Find(std::string_view name) const {
  if (std::find(read_.begin(), read_.end(), name) == read_.end()) read_.emplace_back(name);
  auto it = object_.find(std::string(name));
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool FieldReader::TypeError(std::string_view name, const Json& value,
                            const char* expected) {
  Require(false, name,
          std::string(name) + " must be " + expected + ", got " + JsonTypeName(value));
  return false;
}

bool FieldReader::Bool(std::string_view name, bool* out) {
  const Json* value = Find(name);
  if (value == nullptr) return false;
  if (!value->is_boolean()) return TypeError(name, *value, "a boolean");
  *out = value->get<bool>();
  return true;
}

bool FieldReader::Int(std::string_view name, int64_t* out) {
  const Json* value = Find(name);
  if (value == nullptr) return false;
  std::optional<int64_t> number = AsInteger(*value);
  if (!number) return TypeError(name, *value, "an integer");
  *out = *number;
  return true;
}

bool FieldReader::Number(std::string_view name, double* out) {
  const Json* value = Find(name);
  if (value == nullptr) return false;
  if (!value->is_number()) return TypeError(name, *value, "a number");
  *out = value->get<double>();
  return true;
}

bool FieldReader::String(std::string_view name, std::string* out) {
  const Json* value = Find(name);
  if (value == nullptr) return false;
  if (!value->is_string()) return TypeError(name, *value, "a string");
  *out = value->get<std::string>();
  return true;
}

bool FieldReader::IntInRange(std::string_view name, int64_t min, int64_t max, int64_t* out) {
  int64_t value = 0;
  if (!Int(name, &value)) return false;
  if (value < min || value > max) {
    Require(false, name,
            std::string(name) + " must be in [" + std::to_string(min) + ", " +
                std::to_string(max) + "], got " + std::to_string(value));
    return false;
  }
  *out = value;
  return true;
}

bool FieldReader::IntAtLeast(std::string_view name, int64_t min, int64_t* out) {
  int64_t value = 0;
  if (!Int(name, &value)) return false;
  if (value < min) {
    Require(false, name, std::string(name) + " must be >= " + std::to_string(min) + ", got " + std::to_string(value));
    return false;
  }
  *out = value;
  return true;
}

bool FieldReader::IntInRange(std::string_view name, int32_t min, int32_t max, int32_t* out) {
  int64_t value = 0;
  if (!IntInRange(name, int64_t{min}, int64_t{max}, &value)) return false;
  *out = static_cast<int32_t>(value);
  return true;
}

void FieldReader::BoolOnly(std::string_view name, bool supported, std::string_view why) {
  bool value = supported;
  if (!Bool(name, &value)) return;
  Require(value == supported, name,
          std::string(name) + " must be " + (supported ? "true" : "false") + " here (" + std::string(why) + ")");
}

void FieldReader::Require(bool ok, std::string_view name, std::string message) {
  if (ok || error_) return;
  error_ = InvalidParam(std::string(name), std::move(message));
}

void FieldReader::Fail(ApiError error) {
  if (!error_) error_ = std::move(error);
}

void FieldReader::RefuseUnread(std::span<const std::string_view> ignored) {
  if (!object_.is_object()) return;
  for (const auto& [name, value] : object_.items()) {
    if (value.is_null() || std::find(read_.begin(), read_.end(), name) != read_.end()) continue;
    if (std::find(ignored.begin(), ignored.end(), name) != ignored.end()) continue;
    return Require(false, name, name + " is not a supported field");
  }
}

}  // namespace surge::api
