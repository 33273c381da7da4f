// The test-side JSON Schema validator and random schema generator (constraint_test_util.h).
#include <regex>

#include "base/utf8.h"
#include "engine/constraint/constraint_test_util.h"

namespace surge::testing {
namespace {

bool Fail(std::string* why, const std::string& what) {
  if (why != nullptr) *why = what;
  return false;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

bool ValidDate(const std::string& s) {
  std::smatch m;
  if (!std::regex_match(s, m, std::regex("(\\d{4})-(\\d{2})-(\\d{2})"))) return false;
  int y = std::stoi(m[1]), mo = std::stoi(m[2]), d = std::stoi(m[3]);
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= kDays[mo - 1] + (mo == 2 && IsLeap(y) ? 1 : 0);
}

bool ValidTime(const std::string& s) {
  std::smatch m;
  static const std::regex re("(\\d{2}):(\\d{2}):(\\d{2})(\\.\\d+)?(Z|[+-](\\d{2}):(\\d{2}))");
  if (!std::regex_match(s, m, re)) return false;
  if (std::stoi(m[1]) > 23 || std::stoi(m[2]) > 59 || std::stoi(m[3]) > 59) return false;
  return !m[6].matched || (std::stoi(m[6]) <= 23 && std::stoi(m[7]) <= 59);
}

bool ValidFormat(const std::string& format, const std::string& s) {
  if (format == "date") return ValidDate(s);
  if (format == "time") return ValidTime(s);
  if (format == "date-time") {
    size_t t = s.find('T');
    return t != std::string::npos && ValidDate(s.substr(0, t)) && ValidTime(s.substr(t + 1));
  }
  if (format == "uuid") return std::regex_match(s, std::regex("[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"));
  if (format == "email") {
    size_t at = s.find('@');
    return at != std::string::npos && at > 0 && s.find('.', at) != std::string::npos && s.back() != '.';
  }
  if (format == "ipv4") {
    std::smatch m;
    if (!std::regex_match(s, m, std::regex("(\\d+)\\.(\\d+)\\.(\\d+)\\.(\\d+)"))) return false;
    for (int i = 1; i <= 4; ++i) {
      if (m[i].length() > 3 || std::stoi(m[i]) > 255 || (m[i].length() > 1 && m[i].str()[0] == '0')) return false;
    }
    return true;
  }
  return true;
}

int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (size_t pos = 0; pos < s.size();) { NextCodePoint(s, &pos); ++n; }
  return n;
}

bool TypeMatches(const std::string& type, const Json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

bool ValidateObject(const Json& root, const Json& s, const Json& v, std::string* why) {
  for (const Json& name : s.value("required", Json::array())) {
    if (!v.contains(name.get<std::string>())) return Fail(why, "missing " + name.dump());
  }
  const Json props = s.value("properties", Json::object());
  for (const auto& [key, value] : v.items()) {
    if (props.contains(key)) {
      if (!ValidateJson(root, props[key], value, why)) return false;
    } else if (s.contains("additionalProperties")) {
      if (!ValidateJson(root, s["additionalProperties"], value, why)) return Fail(why, "extra " + key);
    }
  }
  return true;
}

bool ValidateScalar(const Json& s, const Json& v, std::string* why) {
  if (v.is_string()) {
    const std::string str = v.get<std::string>();
    int64_t n = CodePoints(str);
    if (s.contains("minLength") && n < s["minLength"].get<int64_t>()) return Fail(why, "short");
    if (s.contains("maxLength") && n > s["maxLength"].get<int64_t>()) return Fail(why, "long");
    if (s.contains("pattern") && !std::regex_match(str, std::regex(s["pattern"].get<std::string>()))) return Fail(why, "pattern");
    if (s.contains("format") && !ValidFormat(s["format"], str)) return Fail(why, "format");
  }
  if (v.is_number()) {
    double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return Fail(why, "minimum");
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return Fail(why, "maximum");
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return Fail(why, "exclusiveMinimum");
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return Fail(why, "exclusiveMaximum");
  }
  return true;
}

}  // namespace

bool ValidateJson(const Json& root, const Json& s, const Json& v, std::string* why) {
  if (s.is_boolean()) return s.get<bool>() || Fail(why, "false schema");
  if (s.contains("$ref")) {
    return ValidateJson(root, root.at(Json::json_pointer(s["$ref"].get<std::string>().substr(1))), v, why);
  }
  if (s.contains("const")) return v == s["const"] || Fail(why, "const");
  if (s.contains("enum")) {
    for (const Json& e : s["enum"]) if (e == v) return true;
    return Fail(why, "enum");
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key)) continue;
    for (const Json& alt : s[key]) if (ValidateJson(root, alt, v, nullptr)) return true;
    return Fail(why, key);
  }
  if (s.contains("type")) {
    Json types = s["type"].is_array() ? s["type"] : Json::array({s["type"]});
    bool any = false;
    for (const Json& t : types) any |= TypeMatches(t.get<std::string>(), v);
    if (!any) return Fail(why, "type " + s["type"].dump() + " vs " + v.dump());
  }
  if (v.is_object()) return ValidateObject(root, s, v, why);
  if (v.is_array()) {
    if (s.contains("minItems") && static_cast<int64_t>(v.size()) < s["minItems"].get<int64_t>()) return Fail(why, "minItems");
    if (s.contains("maxItems") && static_cast<int64_t>(v.size()) > s["maxItems"].get<int64_t>()) return Fail(why, "maxItems");
    for (const Json& item : v) {
      if (s.contains("items") && !ValidateJson(root, s["items"], item, why)) return false;
    }
    return true;
  }
  return ValidateScalar(s, v, why);
}

namespace {

int Pick(std::mt19937_64& rng, int n) { return static_cast<int>(rng() % n); }

Json RandomString(std::mt19937_64& rng) {
  Json s = {{"type", "string"}};
  switch (Pick(rng, 6)) {
    case 0: s["minLength"] = Pick(rng, 3); s["maxLength"] = 3 + Pick(rng, 6); break;
    case 1: {
      static const char* kFormats[] = {"date", "time", "date-time", "uuid", "email", "ipv4"};
      s["format"] = kFormats[Pick(rng, 6)];
      break;
    }
    case 2: {
      static const char* kPatterns[] = {"[a-z]{2,5}", "\\d{3}-\\d{4}", "(ab|cd)+x?", "[A-Z][a-z]*", "x[0-9a-f]{2}\\.y"};
      s["pattern"] = kPatterns[Pick(rng, 5)];
      break;
    }
    case 3: s["enum"] = Json::array({"red", "green", "a \"quoted\" one", "tab\there"}); break;
    default: if (Pick(rng, 2)) s["maxLength"] = 12; break;
  }
  return s;
}

Json RandomLeaf(std::mt19937_64& rng) {
  switch (Pick(rng, 8)) {
    case 0: case 1: return RandomString(rng);
    case 2: {
      Json s = {{"type", "integer"}};
      if (Pick(rng, 2)) s["minimum"] = Pick(rng, 200) - 100;
      if (Pick(rng, 2)) s["maximum"] = 100 + Pick(rng, 2000);
      if (Pick(rng, 4) == 0) s["exclusiveMinimum"] = -3;
      return s;
    }
    case 3: return Pick(rng, 2) ? Json{{"type", "number"}} : Json{{"type", "number"}, {"minimum", 0}};
    case 4: return {{"type", "boolean"}};
    case 5: return {{"type", Json::array({"string", "null"})}, {"maxLength", 8}};
    case 6: return {{"const", Json{{"k", Json::array({1, "x"})}}}};
    default: return {{"enum", Json::array({1, 2.5, "three", nullptr, true})}};
  }
}

}  // namespace

Json RandomSchema(std::mt19937_64& rng, int depth) {
  int kind = depth <= 0 ? 9 : Pick(rng, 10);
  if (kind < 4) {
    Json s = {{"type", "object"}, {"properties", Json::object()}, {"required", Json::array()}};
    int n = Pick(rng, 6);
    for (int i = 0; i < n; ++i) {
      std::string name = "p" + std::to_string(i) + (Pick(rng, 5) == 0 ? " \"q\"" : "");
      s["properties"][name] = RandomSchema(rng, depth - 1);
      if (Pick(rng, 2)) s["required"].push_back(name);
    }
    s["additionalProperties"] = Pick(rng, 6) == 0 ? Json{{"type", "integer"}} : Json(false);
    return s;
  }
  if (kind < 6) {
    Json s = {{"type", "array"}, {"items", RandomSchema(rng, depth - 1)}};
    if (Pick(rng, 2)) s["minItems"] = Pick(rng, 3);
    if (Pick(rng, 2)) s["maxItems"] = s.value("minItems", 0) + Pick(rng, 4);
    return s;
  }
  if (kind == 6) return {{"anyOf", Json::array({RandomSchema(rng, depth - 1), {{"type", "null"}}})}};
  if (kind == 7) return Json::object();  // any value
  return RandomLeaf(rng);
}

}  // namespace surge::testing
