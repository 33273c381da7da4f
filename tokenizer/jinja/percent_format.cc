// Python printf-style formatting for the |format filter.
#include <cstdio>
#include <string>

#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja::internal {
namespace {

struct Spec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char conversion = 's';
};

// Pads `s` to the spec's width in code points, left-aligned with the '-' flag.
std::string Pad(std::string s, const Spec& spec) {
  size_t length = text::CodePointCount(s);
  if (spec.width < 0 || length >= static_cast<size_t>(spec.width)) return s;
  std::string fill(spec.width - length, ' ');
  return spec.flags.find('-') != std::string::npos ? s + fill : fill + s;
}

StatusOr<std::string> FormatNumber(const Value& value, const Spec& spec) {
  if (!value.is_number() && !value.is_bool()) {
    return ArgError("format", std::string("%") + spec.conversion + " format: a number is required, not " +
                                  std::string(value.TypeName()));
  }
  std::string fmt = "%" + spec.flags;
  if (spec.width >= 0) fmt += std::to_string(spec.width);
  if (spec.precision >= 0) fmt += "." + std::to_string(spec.precision);
  char buf[512];
  char c = spec.conversion;
  if (c == 'd' || c == 'i' || c == 'x' || c == 'X' || c == 'o') {
    long long i = value.is_int() ? value.AsInt() : static_cast<long long>(value.AsNumber());
    fmt += std::string("ll") + (c == 'i' ? 'd' : c);
    std::snprintf(buf, sizeof(buf), fmt.c_str(), i);
  } else {
    fmt.push_back(c);
    std::snprintf(buf, sizeof(buf), fmt.c_str(), value.AsNumber());
  }
  return std::string(buf);
}

StatusOr<std::string> FormatOne(const Value& value, const Spec& spec, const Limits& limits) {
  switch (spec.conversion) {
    case 's': {
      ASSIGN_OR_RETURN(std::string s, ToStr(value, limits));
      return Pad(std::move(s), spec);
    }
    case 'r': {
      std::string s;
      RETURN_IF_ERROR(AppendRepr(value, limits, &s));
      return Pad(std::move(s), spec);
    }
    case 'c': {
      if (value.is_string() && text::CodePointCount(value.AsString()) == 1) return Pad(value.AsString(), spec);
      if (!value.is_int() || value.AsInt() < 0 || value.AsInt() > 0x10FFFF) {
        return ArgError("format", "%c requires an int or a single character");
      }
      std::string s;
      text::AppendUtf8(&s, static_cast<char32_t>(value.AsInt()));
      return Pad(std::move(s), spec);
    }
    default: return FormatNumber(value, spec);
  }
}

// Parses one conversion after '%' at format[*i]; leaves *i on its last character.
StatusOr<Spec> ParseSpec(const std::string& format, size_t* i, std::string* key) {
  Spec spec;
  size_t p = *i;
  if (p < format.size() && format[p] == '(') {
    size_t close = format.find(')', p);
    if (close == std::string::npos) return ArgError("format", "incomplete format key");
    *key = format.substr(p + 1, close - p - 1);
    p = close + 1;
  }
  while (p < format.size() && std::string_view("-+ 0#").find(format[p]) != std::string_view::npos) {
    spec.flags.push_back(format[p++]);
  }
  auto read_number = [&]() {
    int n = 0;
    while (p < format.size() && format[p] >= '0' && format[p] <= '9' && n < 10000) n = n * 10 + (format[p++] - '0');
    return n;
  };
  if (p < format.size() && format[p] >= '0' && format[p] <= '9') spec.width = read_number();
  if (p < format.size() && format[p] == '.') {
    ++p;
    spec.precision = read_number();
  }
  if (p >= format.size()) return ArgError("format", "incomplete format");
  spec.conversion = format[p];
  if (std::string_view("sridifFeEgGxXoc").find(spec.conversion) == std::string_view::npos) {
    return ArgError("format", std::string("unsupported format character '") + spec.conversion + "'");
  }
  *i = p;
  return spec;
}

}  // namespace

StatusOr<std::string> PercentFormat(const std::string& format, const CallArgs& args, const Limits& limits) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out.push_back(format[i]);
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    ++i;
    std::string key;
    ASSIGN_OR_RETURN(Spec spec, ParseSpec(format, &i, &key));
    const Value* value = key.empty() ? (next < args.positional.size() ? &args.positional[next++] : nullptr)
                                     : args.Keyword(key);
    if (value == nullptr) return ArgError("format", "not enough arguments for format string");
    ASSIGN_OR_RETURN(std::string piece, FormatOne(*value, spec, limits));
    out += piece;
    RETURN_IF_ERROR(CheckStringSize(out.size(), limits));
  }
  return out;
}

}  // namespace surge::jinja::internal
