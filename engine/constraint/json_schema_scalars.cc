// The leaves of a JSON schema: strings (lengths, patterns, formats), integers with bounds
// and numbers.
#include <cmath>
#include <string>

#include "engine/constraint/json_schema_internal.h"
#include "engine/constraint/regex_compiler.h"

namespace surge {
namespace {

// Formats as regexes over the string's content, each a regular subset of the format whose
// every match is valid (dates never have a day the month lacks; Feb 29 is left out).
const std::map<std::string, std::string>& FormatPatterns() {
  static const std::string kDate =
      "[0-9]{4}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)";
  static const std::string kTime =
      "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";
  static const std::string kLabel = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
  static const std::string kOctet = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  static const std::map<std::string, std::string> k = {
      {"date", kDate},
      {"time", kTime},
      {"date-time", kDate + "T" + kTime},
      {"uuid", "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"},
      {"email", "[A-Za-z0-9_%+-]{1,64}(\\.[A-Za-z0-9_%+-]{1,64}){0,4}@" + kLabel + "(\\." + kLabel + "){1,4}"},
      {"ipv4", "(" + kOctet + "\\.){3}" + kOctet},
      {"hostname", kLabel + "(\\." + kLabel + "){0,8}"},
  };
  return k;
}

uint64_t Pow10(int n) {
  uint64_t v = 1;
  while (n-- > 0) v *= 10;
  return v;
}

// Same-length decimal strings lo..hi (lo <= hi).
ExprId FixedLength(Grammar* g, const std::string& lo, const std::string& hi) {
  if (lo.empty()) return g->Empty();
  auto digit = [&](char a, char b) { return g->Bytes(ByteSet::Range(a, b)); };
  const std::string lo_rest = lo.substr(1), hi_rest = hi.substr(1);
  if (lo[0] == hi[0]) return g->Seq({g->Byte(lo[0]), FixedLength(g, lo_rest, hi_rest)});
  const std::string nines(lo_rest.size(), '9'), zeros(lo_rest.size(), '0');
  ExprId any_rest = g->Repeat(digit('0', '9'), static_cast<int32_t>(lo_rest.size()),
                              static_cast<int32_t>(lo_rest.size()));
  std::vector<ExprId> alts;
  char first_full = lo[0], last_full = hi[0];
  if (lo_rest != zeros) {
    alts.push_back(g->Seq({g->Byte(lo[0]), FixedLength(g, lo_rest, nines)}));
    ++first_full;
  }
  if (hi_rest != nines) --last_full;
  if (first_full <= last_full) alts.push_back(g->Seq({digit(first_full, last_full), any_rest}));
  if (hi_rest != nines) alts.push_back(g->Seq({g->Byte(hi[0]), FixedLength(g, zeros, hi_rest)}));
  return g->Alt(std::move(alts));
}

// Decimal a..b without leading zeros.
ExprId NonNegativeRange(Grammar* g, uint64_t a, uint64_t b) {
  std::vector<ExprId> alts;
  for (int digits = 1; digits <= kMaxIntegerDigits; ++digits) {
    uint64_t lo = std::max(a, digits == 1 ? 0 : Pow10(digits - 1));
    uint64_t hi = std::min(b, Pow10(digits) - 1);
    if (lo > hi) continue;
    alts.push_back(FixedLength(g, std::to_string(lo), std::to_string(hi)));
  }
  return g->Alt(std::move(alts));
}

uint64_t Magnitude(int64_t v) { return v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : v; }

}  // namespace

ExprId IntegerRange(Grammar* g, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  const uint64_t kMax = Pow10(kMaxIntegerDigits) - 1;
  std::vector<ExprId> alts;
  if (!lo || *lo < 0) {  // negative part: -(1 .. |lo|)
    uint64_t far = lo ? Magnitude(*lo) : kMax;
    uint64_t near = (hi && *hi < 0) ? Magnitude(*hi) : 1;
    if (near <= far) alts.push_back(g->Seq({g->Byte('-'), NonNegativeRange(g, near, std::min(far, kMax))}));
  }
  if (!hi || *hi >= 0) {
    uint64_t a = (lo && *lo > 0) ? static_cast<uint64_t>(*lo) : 0;
    uint64_t b = hi ? static_cast<uint64_t>(*hi) : kMax;
    if (a <= b) alts.push_back(NonNegativeRange(g, a, std::min(b, kMax)));
  }
  return g->Alt(std::move(alts));
}

StatusOr<ExprId> SchemaCompiler::CompileString(const SchemaJson& schema, const std::string& path) {
  ASSIGN_OR_RETURN(int32_t min, Count(schema, "minLength", 0, path));
  ASSIGN_OR_RETURN(int32_t max, Count(schema, "maxLength", kUnbounded, path));
  if (max != kUnbounded && max < min) return Error("'maxLength' is below 'minLength'", path);
  const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
  if (schema.contains("pattern") && schema.contains("format")) {
    return Error("keyword 'pattern' with 'format' is not supported", path);
  }
  std::optional<ExprId> content;
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string()) return Error("'pattern' must be a string", path);
    if (lengths) return Error("keyword 'pattern' with 'minLength'/'maxLength' is not supported", path);
    StatusOr<ExprId> e = CompileRegex(schema["pattern"].get<std::string>(), limits_, &g_, &json_);
    if (!e.ok()) return Error("in 'pattern': " + e.status().message(), path);
    content = *e;
  } else if (schema.contains("format")) {
    if (!schema["format"].is_string()) return Error("'format' must be a string", path);
    if (lengths) return Error("keyword 'format' with 'minLength'/'maxLength' is not supported", path);
    ASSIGN_OR_RETURN(content, CompileFormat(schema["format"].get<std::string>(), path));
  }
  if (!content) return json_.String(min, max);
  ExprId quote = g_.Byte('"');
  return g_.Seq({quote, *content, quote});
}

StatusOr<ExprId> SchemaCompiler::CompileFormat(const std::string& format, const std::string& path) {
  auto it = FormatPatterns().find(format);
  if (it == FormatPatterns().end()) return Error("format '" + format + "' is not supported", path);
  ConstraintLimits limits = limits_;
  limits.max_regex_bytes = 1 << 16;
  return CompileRegex(it->second, limits, &g_, &json_);
}

StatusOr<ExprId> SchemaCompiler::CompileInteger(const SchemaJson& schema, const std::string& path) {
  std::optional<int64_t> lo, hi;
  constexpr double kLimit = 1e18;
  for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (!schema.contains(key)) continue;
    const SchemaJson& v = schema[key];
    if (v.is_boolean()) return Error(std::string("boolean '") + key + "' (draft 4) is not supported", path);
    if (!v.is_number()) return Error(std::string("'") + key + "' must be a number", path);
    double x = v.get<double>();
    if (std::fabs(x) > kLimit) return Error(std::string("'") + key + "' beyond +-1e18 is not supported", path);
    const std::string k = key;
    if (k == "minimum") lo = std::max(lo.value_or(INT64_MIN), static_cast<int64_t>(std::ceil(x)));
    if (k == "exclusiveMinimum") lo = std::max(lo.value_or(INT64_MIN), static_cast<int64_t>(std::floor(x)) + 1);
    if (k == "maximum") hi = std::min(hi.value_or(INT64_MAX), static_cast<int64_t>(std::floor(x)));
    if (k == "exclusiveMaximum") hi = std::min(hi.value_or(INT64_MAX), static_cast<int64_t>(std::ceil(x)) - 1);
  }
  if (!lo && !hi) return json_.Integer();
  if (lo && hi && *lo > *hi) return Error("the integer range is empty", path);
  return IntegerRange(&g_, lo, hi);
}

StatusOr<ExprId> SchemaCompiler::CompileNumber(const SchemaJson& schema, const std::string& path) {
  for (const char* key : {"maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (schema.contains(key)) {
      return Error(std::string("keyword '") + key + "' is not supported for type 'number'", path);
    }
  }
  if (!schema.contains("minimum")) return json_.Number();
  if (!schema["minimum"].is_number() || schema["minimum"].get<double>() != 0.0) {
    return Error("keyword 'minimum' is supported for type 'number' only as 0", path);
  }
  return json_.NonNegativeNumber();
}

}  // namespace surge
