// ConfigReader: typed, error-accumulating access to one JSON object of config.json,
// shared by the parsers of the dense and DeepSeek fields (model/config*.cc only).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/config.h"

namespace surge::config_internal {

using Json = nlohmann::json;

// Dimensions and token ids feed int32 arithmetic downstream (token ids are int32).
inline constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

inline std::string JsonTypeName(const Json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "float";
  return value.type_name();
}

// Typed access to one JSON object. The first error wins and is kept in a Status shared by
// the readers of nested objects, so the parser reads as a flat list of fields instead of
// one early return per key. Errors start with the file path and name the key.
class ConfigReader {
 public:
  ConfigReader(const Json& object, const std::string& path, Status* status,
               std::string prefix = "")
      : object_(object), path_(path), status_(status), prefix_(std::move(prefix)) {}

  bool ok() const { return status_->ok(); }
  void Fail(StatusCode code, const std::string& message) {
    if (status_->ok()) *status_ = Status(code, path_ + ": " + message);
  }
  // HF treats an explicit null like an absent key for optional fields ("use the default").
  bool Has(const std::string& key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  bool IsNull(const std::string& key) const {
    auto it = object_.find(key);
    return it != object_.end() && it->is_null();
  }
  const Json& At(const std::string& key) const { return object_.at(key); }
  std::string Name(const std::string& key) const { return "'" + prefix_ + key + "'"; }
  bool Require(const std::string& key) {
    if (Has(key)) return true;
    Fail(StatusCode::kInvalidArgument, "missing key " + Name(key));
    return false;
  }
  void WrongType(const std::string& key, const std::string& expected, const Json& value) {
    Fail(StatusCode::kInvalidArgument,
         "key " + Name(key) + " must be " + expected + ", got " + JsonTypeName(value));
  }

  // Optional getters leave *out untouched when the key is absent or null.
  void Int(const std::string& key, int64_t* out, int64_t min = 1, int64_t max = kMaxDim) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_number_integer()) return WrongType(key, "an integer", value);
    // An unsigned value above the int64 range is above `max` too.
    bool too_big = value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(max);
    int64_t v = too_big ? max : value.get<int64_t>();
    if (too_big || v < min || v > max) {
      return Fail(StatusCode::kInvalidArgument,
                  "key " + Name(key) + " must be in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "], got " + value.dump());
    }
    *out = v;
  }
  // A finite number > 0.
  void Positive(const std::string& key, double* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_number()) return WrongType(key, "a number", value);
    double v = value.get<double>();
    if (!std::isfinite(v) || v <= 0) {
      return Fail(StatusCode::kInvalidArgument,
                  "key " + Name(key) + " must be > 0, got " + value.dump());
    }
    *out = v;
  }
  // Any finite number (YaRN's mscale may be 0 or negative in principle).
  void Finite(const std::string& key, double* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_number()) return WrongType(key, "a number", value);
    if (!std::isfinite(value.get<double>())) {
      return Fail(StatusCode::kInvalidArgument, "key " + Name(key) + " must be finite");
    }
    *out = value.get<double>();
  }
  void Bool(const std::string& key, bool* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_boolean()) return WrongType(key, "a boolean", value);
    *out = value.get<bool>();
  }
  void String(const std::string& key, std::string* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_string()) return WrongType(key, "a string", value);
    *out = value.get<std::string>();
  }

 private:
  const Json& object_;
  const std::string& path_;
  Status* status_;
  std::string prefix_;
};

// config_deepseek.cc: the DeepSeek V2/V3 fields (MLA, MoE, MTP) of the root object,
// YaRN rope_scaling, and quantization_config (all architectures).
void ReadDeepseekFields(ConfigReader& reader, ModelConfig* config);
void ReadYarnRopeScaling(ConfigReader& reader, RopeScaling* rope);
void ReadQuantizationConfig(ConfigReader& outer, const std::string& path, Status* status,
                            ModelConfig* config);
// Cross-field checks: what DeepSeek's published semantics cannot run.
Status ValidateDeepseek(const ModelConfig& config, const std::string& path);

}  // namespace surge::config_internal
