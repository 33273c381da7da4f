// Filters over strings and numbers, plus the table of every filter.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/filters_internal.h"
#include "tokenizer/jinja/json_convert.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

using internal::ArgError;
using internal::ArgOr;
using internal::BoolArg;
using internal::IntArg;
using internal::StringArg;

StatusOr<Value> FilterString(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  return Value::String(std::move(s));
}

StatusOr<Value> FilterSafe(const Value& v, const CallArgs& args, const Limits& limits) { return v; }

// Case filters take str(value), as Jinja's soft_str does.
template <std::string (*Fn)(std::string_view)>
StatusOr<Value> CaseFilter(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  return Value::String(Fn(s));
}

StatusOr<Value> FilterTrim(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  ASSIGN_OR_RETURN(std::optional<std::string> chars, StringArg(args, 0, "chars", "trim"));
  return Value::String(text::Strip(s, chars ? &*chars : nullptr, true, true));
}

StatusOr<Value> FilterReplace(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  bool found = false;
  return CallMethod(Value::String(std::move(s)), "replace", args, limits, &found);
}

StatusOr<Value> FilterEscape(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  RETURN_IF_ERROR(internal::CheckStringSize(out.size(), limits));
  return Value::String(std::move(out));
}

StatusOr<Value> FilterWordCount(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  return Value::Int(static_cast<int64_t>(text::Split(s, nullptr, -1).size()));
}

// Python's str.center(width): odd padding puts the extra space on the left when width is odd.
StatusOr<Value> FilterCenter(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  ASSIGN_OR_RETURN(int64_t width, IntArg(args, 0, "width", 80, "center"));
  int64_t length = static_cast<int64_t>(text::CodePointCount(s));
  if (width <= length) return Value::String(std::move(s));
  RETURN_IF_ERROR(internal::CheckStringSize(s.size() + static_cast<size_t>(width - length), limits));
  int64_t margin = width - length;
  int64_t left = margin / 2 + (margin & width & 1);
  return Value::String(std::string(left, ' ') + s + std::string(margin - left, ' '));
}

// Jinja's indent(width=4, first=False, blank=False); width may be a string.
StatusOr<Value> FilterIndent(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string s, ToStr(v, limits));
  Value width = ArgOr(args, 0, "width", Value::Int(4));
  ASSIGN_OR_RETURN(bool first, BoolArg(args, 1, "first", false, "indent"));
  ASSIGN_OR_RETURN(bool blank, BoolArg(args, 2, "blank", false, "indent"));
  std::string pad;
  if (width.is_string()) {
    pad = width.AsString();
  } else if (width.is_int() && width.AsInt() >= 0 && width.AsInt() < 1024) {
    pad.assign(width.AsInt(), ' ');
  } else {
    return ArgError("indent", "width must be a small integer or a string");
  }
  bool found = false;
  ASSIGN_OR_RETURN(Value lines_value, CallMethod(Value::String(s + "\n"), "splitlines", CallArgs(), limits, &found));
  const Array& lines = lines_value.AsArray();
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i].AsString();
    if (i > 0) out.push_back('\n');
    if ((i > 0 || first) && (blank || !line.empty())) out += pad;
    out += line;
    RETURN_IF_ERROR(internal::CheckStringSize(out.size(), limits));
  }
  if (first && lines.empty()) out = pad;
  return Value::String(std::move(out));
}

// Python int(text, base) without the exotic forms: sign, digits, underscores between digits.
std::optional<int64_t> ParseInt(const std::string& raw, int base) {
  std::string s = text::Strip(raw, nullptr, true, true);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (base == 16 && s.compare(i, 2, "0x") == 0) i += 2;
  if (base == 8 && s.compare(i, 2, "0o") == 0) i += 2;
  if (base == 2 && s.compare(i, 2, "0b") == 0) i += 2;
  if (i >= s.size()) return std::nullopt;
  int64_t value = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_' && i + 1 < s.size() && s[i + 1] != '_') continue;
    int digit = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'z') ? c - 'a' + 10 : (c >= 'A' && c <= 'Z') ? c - 'A' + 10 : 99;
    if (digit >= base) return std::nullopt;
    if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, digit, &value)) {
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

std::optional<double> ParseFloat(const std::string& raw) {
  std::string s = text::Strip(raw, nullptr, true, true);
  if (s.empty() || s.find_first_of("xX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return value;
}

StatusOr<Value> FilterInt(const Value& v, const CallArgs& args, const Limits& limits) {
  Value fallback = ArgOr(args, 0, "default", Value::Int(0));
  ASSIGN_OR_RETURN(int64_t base, IntArg(args, 1, "base", 10, "int"));
  if (base < 2 || base > 36) return ArgError("int", "base must be between 2 and 36");
  if (v.is_int()) return v;
  if (v.is_bool()) return Value::Int(v.AsBool());
  if (v.is_float()) {
    double d = v.AsFloat();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value::Int(static_cast<int64_t>(d));  // truncates toward zero, like int()
  }
  if (!v.is_string()) return fallback;
  if (std::optional<int64_t> i = ParseInt(v.AsString(), static_cast<int>(base))) return Value::Int(*i);
  std::optional<double> d = ParseFloat(v.AsString());
  if (!d || !std::isfinite(*d) || std::fabs(*d) >= 9.2e18) return fallback;
  return Value::Int(static_cast<int64_t>(*d));
}

StatusOr<Value> FilterFloat(const Value& v, const CallArgs& args, const Limits& limits) {
  Value fallback = ArgOr(args, 0, "default", Value::Float(0.0));
  if (v.is_number() || v.is_bool()) return Value::Float(v.AsNumber());
  if (!v.is_string()) return fallback;
  std::optional<double> d = ParseFloat(v.AsString());
  return d ? Value::Float(*d) : fallback;
}

StatusOr<Value> FilterAbs(const Value& v, const CallArgs& args, const Limits& limits) {
  if (v.is_float()) return Value::Float(std::fabs(v.AsFloat()));
  if (v.is_bool()) return Value::Int(v.AsBool());
  if (!v.is_int()) return ArgError("abs", "bad operand type '" + std::string(v.TypeName()) + "'");
  if (v.AsInt() == INT64_MIN) return ArgError("abs", "integer overflow");
  return Value::Int(v.AsInt() < 0 ? -v.AsInt() : v.AsInt());
}

// round(precision=0, method="common"): Python's round (half to even) or ceil/floor.
StatusOr<Value> FilterRound(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(int64_t precision, IntArg(args, 0, "precision", 0, "round"));
  ASSIGN_OR_RETURN(std::optional<std::string> method, StringArg(args, 1, "method", "round"));
  std::string how = method.value_or("common");
  if (how != "common" && how != "ceil" && how != "floor") {
    return ArgError("round", "method must be common, ceil or floor");
  }
  if (!v.is_number() && !v.is_bool()) return ArgError("round", "expected a number");
  if (how == "common" && !v.is_float()) return Value::Int(v.is_int() ? v.AsInt() : v.AsBool());
  double value = v.AsNumber();
  if (how == "common" && std::isfinite(value) && std::fabs(value) >= 1e15 && precision >= 0) {
    return Value::Float(value);  // already integral at every non-negative precision
  }
  if (how == "common" && precision >= 0 && precision <= 300 && std::isfinite(value)) {
    // printf rounds the exact binary value half-to-even, as Python's round() does.
    char buf[400];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), value);
    return Value::Float(std::strtod(buf, nullptr));
  }
  double scale = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(precision, -308, 308)));
  double scaled = value * scale;
  double rounded = how == "ceil" ? std::ceil(scaled) : how == "floor" ? std::floor(scaled) : std::nearbyint(scaled);
  return Value::Float(rounded / scale);
}

StatusOr<Value> FilterDefault(const Value& v, const CallArgs& args, const Limits& limits) {
  Value fallback = ArgOr(args, 0, "default_value", Value::String(""));
  ASSIGN_OR_RETURN(bool boolean, BoolArg(args, 1, "boolean", false, "default"));
  if (v.is_undefined() || (boolean && !v.Truthy())) return fallback;
  return v;
}

StatusOr<Value> FilterAttr(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::optional<std::string> name, StringArg(args, 0, "name", "attr"));
  if (!name) return ArgError("attr", "needs an attribute name");
  return GetAttr(v, *name, limits);
}

// tojson as transformers defines it: json.dumps(x, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False); no HTML escaping.
StatusOr<Value> FilterToJson(const Value& v, const CallArgs& args, const Limits& limits) {
  JsonOptions options;
  ASSIGN_OR_RETURN(options.ensure_ascii, BoolArg(args, 0, "ensure_ascii", false, "tojson"));
  Value indent = ArgOr(args, 1, "indent", Value::None());
  if (indent.is_int()) {
    options.pretty = true;
    options.indent.assign(std::clamp<int64_t>(indent.AsInt(), 0, 64), ' ');
  } else if (indent.is_string()) {
    options.pretty = true;
    options.indent = indent.AsString();
  } else if (!indent.is_none() && !indent.is_undefined()) {
    return ArgError("tojson", "indent must be an integer or a string");
  }
  if (options.pretty) options.item_separator = ",";
  Value separators = ArgOr(args, 2, "separators", Value::None());
  if (separators.is_array()) {
    const Array& pair = separators.AsArray();
    if (pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
      return ArgError("tojson", "separators must be a pair of strings");
    }
    options.item_separator = pair[0].AsString();
    options.key_separator = pair[1].AsString();
  } else if (!separators.is_none() && !separators.is_undefined()) {
    return ArgError("tojson", "separators must be a pair of strings");
  }
  ASSIGN_OR_RETURN(options.sort_keys, BoolArg(args, 3, "sort_keys", false, "tojson"));
  ASSIGN_OR_RETURN(std::string json, ToJson(v, options, limits));
  return Value::String(std::move(json));
}

StatusOr<Value> FilterFormat(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(std::string format, ToStr(v, limits));
  ASSIGN_OR_RETURN(std::string out, internal::PercentFormat(format, args, limits));
  return Value::String(std::move(out));
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", FilterAbs},
    {"attr", FilterAttr},
    {"capitalize", CaseFilter<text::Capitalize>},
    {"center", FilterCenter},
    {"count", internal::FilterLength},
    {"d", FilterDefault},
    {"default", FilterDefault},
    {"dictsort", internal::FilterDictSort},
    {"e", FilterEscape},
    {"escape", FilterEscape},
    {"first", internal::FilterFirst},
    {"float", FilterFloat},
    {"forceescape", FilterEscape},
    {"format", FilterFormat},
    {"indent", FilterIndent},
    {"int", FilterInt},
    {"items", internal::FilterItems},
    {"join", internal::FilterJoin},
    {"keys", internal::FilterKeys},
    {"last", internal::FilterLast},
    {"length", internal::FilterLength},
    {"list", internal::FilterList},
    {"lower", CaseFilter<text::Lower>},
    {"map", internal::FilterMap},
    {"max", internal::FilterMax},
    {"min", internal::FilterMin},
    {"reject", internal::FilterReject},
    {"rejectattr", internal::FilterRejectAttr},
    {"replace", FilterReplace},
    {"reverse", internal::FilterReverse},
    {"round", FilterRound},
    {"safe", FilterSafe},
    {"select", internal::FilterSelect},
    {"selectattr", internal::FilterSelectAttr},
    {"sort", internal::FilterSort},
    {"string", FilterString},
    {"sum", internal::FilterSum},
    {"title", CaseFilter<text::JinjaTitle>},
    {"tojson", FilterToJson},
    {"trim", FilterTrim},
    {"unique", internal::FilterUnique},
    {"upper", CaseFilter<text::Upper>},
    {"values", internal::FilterValues},
    {"wordcount", FilterWordCount},
};

}  // namespace

FilterFn FindFilter(std::string_view name) {
  for (const FilterEntry& entry : kFilters) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

}  // namespace surge::jinja
