// Methods of strings, dicts and lists callable from templates: s.strip(), d.get(k), ...
// Only the non-mutating ones: transformers renders in Jinja's immutable sandbox.
#include <charconv>
#include <string>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

using internal::ArgError;

constexpr std::string_view kStringMethods[] = {
    "strip", "lstrip", "rstrip", "split", "startswith", "endswith", "upper", "lower", "title",
    "capitalize", "replace", "join", "format", "find", "count", "isdigit", "isalpha", "isalnum",
    "isspace", "islower", "isupper", "splitlines"};
constexpr std::string_view kDictMethods[] = {"get", "items", "keys", "values"};
constexpr std::string_view kListMethods[] = {"index", "count"};

template <size_t N>
bool InList(const std::string_view (&list)[N], std::string_view name) {
  for (std::string_view m : list) {
    if (m == name) return true;
  }
  return false;
}

// Python str.startswith / endswith, with a string or a tuple of strings.
StatusOr<Value> AffixTest(const std::string& s, const CallArgs& args, bool prefix) {
  const char* name = prefix ? "startswith" : "endswith";
  if (args.positional.empty()) return ArgError(name, "takes at least 1 argument");
  const Value& arg = args.positional[0];
  Array candidates = arg.is_array() ? arg.AsArray() : Array{arg};
  for (const Value& c : candidates) {
    if (!c.is_string()) return ArgError(name, "argument must be str or a tuple of str");
    const std::string& a = c.AsString();
    bool match = a.size() <= s.size() &&
                 (prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0);
    if (match) return Value::Bool(true);
  }
  return Value::Bool(false);
}

StatusOr<Value> SplitMethod(const std::string& s, const CallArgs& args) {
  ASSIGN_OR_RETURN(std::optional<std::string> sep, internal::StringArg(args, 0, "sep", "split"));
  ASSIGN_OR_RETURN(int64_t maxsplit, internal::IntArg(args, 1, "maxsplit", -1, "split"));
  if (sep && sep->empty()) return ArgError("split", "empty separator");
  Array parts;
  for (std::string& part : text::Split(s, sep ? &*sep : nullptr, maxsplit)) {
    parts.push_back(Value::String(std::move(part)));
  }
  return Value::MakeArray(std::move(parts));
}

StatusOr<Value> ReplaceMethod(const std::string& s, const CallArgs& args, const Limits& limits) {
  if (args.positional.size() < 2 || !args.positional[0].is_string() || !args.positional[1].is_string()) {
    return ArgError("replace", "takes two string arguments");
  }
  const std::string& old_text = args.positional[0].AsString();
  const std::string& new_text = args.positional[1].AsString();
  ASSIGN_OR_RETURN(int64_t count, internal::IntArg(args, 2, "count", -1, "replace"));
  std::vector<size_t> cuts;  // byte offsets where `old_text` is replaced
  if (old_text.empty()) {
    cuts = text::CodePointOffsets(s);  // Python inserts between every character and at both ends
  } else {
    for (size_t p = s.find(old_text); p != std::string::npos; p = s.find(old_text, p + old_text.size())) {
      cuts.push_back(p);
    }
  }
  if (count >= 0 && cuts.size() > static_cast<size_t>(count)) cuts.resize(count);
  RETURN_IF_ERROR(internal::CheckStringSize(s.size() + cuts.size() * new_text.size(), limits));
  std::string out;
  size_t last = 0;
  for (size_t cut : cuts) {
    out.append(s, last, cut - last);
    out.append(new_text);
    last = cut + old_text.size();
  }
  out.append(s, last, std::string::npos);
  return Value::String(std::move(out));
}

StatusOr<Value> JoinMethod(const std::string& sep, const CallArgs& args, const Limits& limits) {
  if (args.positional.size() != 1) return ArgError("join", "takes exactly one argument");
  ASSIGN_OR_RETURN(Array items, internal::Iterate(args.positional[0], "join"));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return ArgError("join", "sequence item " + std::to_string(i) + ": expected str instance, " +
                                  std::string(items[i].TypeName()) + " found");
    }
    if (i > 0) out += sep;
    out += items[i].AsString();
    RETURN_IF_ERROR(internal::CheckStringSize(out.size(), limits));
  }
  return Value::String(std::move(out));
}

// Python str.format with {}, {0} and {name} fields (no format specs) and {{ }} escapes.
StatusOr<Value> FormatMethod(const std::string& s, const CallArgs& args, const Limits& limits) {
  std::string out;
  size_t next_auto = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == '}') return ArgError("format", "single '}' encountered in format string");
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    size_t close = s.find('}', i);
    if (close == std::string::npos) return ArgError("format", "single '{' encountered in format string");
    std::string field = s.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!") != std::string::npos) return ArgError("format", "format specs are not supported");
    const Value* value = nullptr;
    if (field.empty()) {
      value = next_auto < args.positional.size() ? &args.positional[next_auto++] : nullptr;
    } else if (field.find_first_not_of("0123456789") == std::string::npos) {
      size_t index = 0;
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), index);
      value = ec == std::errc() && index < args.positional.size() ? &args.positional[index] : nullptr;
    } else {
      value = args.Keyword(field);
    }
    if (value == nullptr) return ArgError("format", "no argument for field '{" + field + "}'");
    RETURN_IF_ERROR(AppendStr(*value, limits, &out));
    RETURN_IF_ERROR(internal::CheckStringSize(out.size(), limits));
    i = close;
  }
  return Value::String(std::move(out));
}

StatusOr<Value> FindOrCount(const std::string& s, const CallArgs& args, bool find) {
  const char* name = find ? "find" : "count";
  if (args.positional.empty() || !args.positional[0].is_string()) return ArgError(name, "takes a string argument");
  const std::string& sub = args.positional[0].AsString();
  if (find) {
    size_t p = s.find(sub);
    return Value::Int(p == std::string::npos ? -1 : static_cast<int64_t>(text::CodePointCount(s.substr(0, p))));
  }
  if (sub.empty()) return Value::Int(static_cast<int64_t>(text::CodePointCount(s)) + 1);
  int64_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
  return Value::Int(n);
}

// isdigit/isalpha/isalnum/isspace/islower/isupper (ASCII letters and digits; Unicode spaces).
Value CharClassTest(const std::string& s, std::string_view name) {
  bool any_cased = false;
  bool all = !s.empty();
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = text::NextCodePoint(s, &pos);
    bool digit = cp >= '0' && cp <= '9';
    bool alpha = text::IsCased(cp);
    if (name == "isdigit") all = all && digit;
    if (name == "isalpha") all = all && alpha;
    if (name == "isalnum") all = all && (alpha || digit);
    if (name == "isspace") all = all && text::IsSpace(cp);
    if (name == "islower" && alpha) all = all && text::ToLower(cp) == cp;
    if (name == "isupper" && alpha) all = all && text::ToUpper(cp) == cp;
    any_cased = any_cased || alpha;
  }
  if (name == "islower" || name == "isupper") return Value::Bool(any_cased && all);
  return Value::Bool(all);
}

StatusOr<Value> SplitLines(const std::string& s) {
  Array lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n' && s[i] != '\r') continue;
    lines.push_back(Value::String(s.substr(start, i - start)));
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < s.size()) lines.push_back(Value::String(s.substr(start)));
  return Value::MakeArray(std::move(lines));
}

StatusOr<Value> StringMethod(const std::string& s, std::string_view name, const CallArgs& args,
                             const Limits& limits) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    ASSIGN_OR_RETURN(std::optional<std::string> chars, internal::StringArg(args, 0, "chars", name));
    return Value::String(text::Strip(s, chars ? &*chars : nullptr, name != "rstrip", name != "lstrip"));
  }
  if (name == "split") return SplitMethod(s, args);
  if (name == "startswith" || name == "endswith") return AffixTest(s, args, name == "startswith");
  if (name == "upper") return Value::String(text::Upper(s));
  if (name == "lower") return Value::String(text::Lower(s));
  if (name == "title") return Value::String(text::PyTitle(s));
  if (name == "capitalize") return Value::String(text::Capitalize(s));
  if (name == "replace") return ReplaceMethod(s, args, limits);
  if (name == "join") return JoinMethod(s, args, limits);
  if (name == "format") return FormatMethod(s, args, limits);
  if (name == "find" || name == "count") return FindOrCount(s, args, name == "find");
  if (name == "splitlines") return SplitLines(s);
  return CharClassTest(s, name);
}

StatusOr<Value> DictMethod(const Object& object, std::string_view name, const CallArgs& args) {
  if (name == "get") {
    if (args.positional.empty()) return ArgError("get", "takes at least 1 argument");
    const Value& key = args.positional[0];
    const Value* v = key.is_string() ? object.Find(key.AsString()) : nullptr;
    if (v != nullptr) return *v;
    return args.positional.size() > 1 ? args.positional[1] : Value::None();
  }
  Array out;
  out.reserve(object.size());
  for (const auto& [key, value] : object.entries()) {
    if (name == "keys") {
      out.push_back(Value::String(key));
    } else if (name == "values") {
      out.push_back(value);
    } else {
      out.push_back(Value::MakeArray({Value::String(key), value}, /*is_tuple=*/true));
    }
  }
  return Value::MakeArray(std::move(out));
}

StatusOr<Value> ListMethod(const Array& items, std::string_view name, const CallArgs& args) {
  if (args.positional.size() != 1) return ArgError(name, "takes exactly one argument");
  int64_t count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!Equals(items[i], args.positional[0])) continue;
    if (name == "index") return Value::Int(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") return ArgError("index", "value is not in list");
  return Value::Int(count);
}

}  // namespace

bool HasMethod(const Value& self, std::string_view name) {
  if (self.is_string()) return InList(kStringMethods, name);
  if (self.is_object()) return InList(kDictMethods, name);
  if (self.is_array()) return InList(kListMethods, name);
  return false;
}

StatusOr<Value> CallMethod(const Value& self, std::string_view name, const CallArgs& args,
                           const Limits& limits, bool* found) {
  *found = HasMethod(self, name);
  if (!*found) return Value();
  if (self.is_string()) return StringMethod(self.AsString(), name, args, limits);
  if (self.is_object()) return DictMethod(self.AsObject(), name, args);
  return ListMethod(self.AsArray(), name, args);
}

}  // namespace surge::jinja
