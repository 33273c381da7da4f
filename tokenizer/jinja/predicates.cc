// Jinja tests (`x is defined`, `n is divisibleby 3`, `x is equalto y`), named predicates
// here so they are not confused with unit tests.
#include <cmath>
#include <string_view>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

using internal::ArgError;

StatusOr<const Value*> OneArg(const CallArgs& args, std::string_view test) {
  if (args.positional.size() != 1) return ArgError(test, "test takes exactly one argument");
  return &args.positional[0];
}

StatusOr<bool> Parity(const Value& v, bool odd) {
  if (v.is_int() || v.is_bool()) {
    int64_t i = v.is_int() ? v.AsInt() : v.AsBool();
    return ((i % 2) != 0) == odd;
  }
  if (v.is_float()) return (std::fmod(std::fabs(v.AsFloat()), 2.0) == 1.0) == odd;
  return ArgError(odd ? "odd" : "even", "expected a number, got " + std::string(v.TypeName()));
}

StatusOr<bool> CompareTest(const Value& v, const CallArgs& args, std::string_view name) {
  ASSIGN_OR_RETURN(const Value* other, OneArg(args, name));
  if (name == "eq" || name == "equalto" || name == "==") return Equals(v, *other);
  if (name == "ne" || name == "!=") return !Equals(v, *other);
  ASSIGN_OR_RETURN(int c, Compare(v, *other));
  if (name == "lt" || name == "lessthan" || name == "<") return c < 0;
  if (name == "le" || name == "<=") return c <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return c > 0;
  return c >= 0;  // ge, >=
}

bool CaseTest(const Value& v, bool lower) {
  if (!v.is_string()) return false;
  bool any_cased = false;
  const std::string& s = v.AsString();
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = text::NextCodePoint(s, &pos);
    if (!text::IsCased(cp)) continue;
    any_cased = true;
    if ((lower ? text::ToLower(cp) : text::ToUpper(cp)) != cp) return false;
  }
  return any_cased;
}

// One dispatcher keeps the table of names short; each branch is one Python test.
#define SURGE_JINJA_TEST(fn_name, expr)                                  \
  StatusOr<bool> fn_name(const Value& v, const CallArgs& args) { return expr; }

SURGE_JINJA_TEST(TestDefined, !v.is_undefined())
SURGE_JINJA_TEST(TestUndefined, v.is_undefined())
SURGE_JINJA_TEST(TestNone, v.is_none())
SURGE_JINJA_TEST(TestBoolean, v.is_bool())
SURGE_JINJA_TEST(TestTrue, v.is_bool() && v.AsBool())
SURGE_JINJA_TEST(TestFalse, v.is_bool() && !v.AsBool())
SURGE_JINJA_TEST(TestString, v.is_string())
SURGE_JINJA_TEST(TestNumber, v.is_number() || v.is_bool())
SURGE_JINJA_TEST(TestInteger, v.is_int())
SURGE_JINJA_TEST(TestFloat, v.is_float())
SURGE_JINJA_TEST(TestMapping, v.is_object())
SURGE_JINJA_TEST(TestIterable, v.is_array() || v.is_string() || v.is_object() || v.is_undefined())
SURGE_JINJA_TEST(TestSequence, v.is_array() || v.is_string() || v.is_object())
SURGE_JINJA_TEST(TestCallable, v.is_function())
SURGE_JINJA_TEST(TestEscaped, false)
SURGE_JINJA_TEST(TestLower, CaseTest(v, true))
SURGE_JINJA_TEST(TestUpper, CaseTest(v, false))
SURGE_JINJA_TEST(TestOdd, Parity(v, true))
SURGE_JINJA_TEST(TestEven, Parity(v, false))
SURGE_JINJA_TEST(TestFilter, v.is_string() && FindFilter(v.AsString()) != nullptr)
SURGE_JINJA_TEST(TestTest, v.is_string() && FindTest(v.AsString()) != nullptr)
#undef SURGE_JINJA_TEST

StatusOr<bool> TestEq(const Value& v, const CallArgs& args) { return CompareTest(v, args, "eq"); }
StatusOr<bool> TestNe(const Value& v, const CallArgs& args) { return CompareTest(v, args, "ne"); }
StatusOr<bool> TestLt(const Value& v, const CallArgs& args) { return CompareTest(v, args, "lt"); }
StatusOr<bool> TestLe(const Value& v, const CallArgs& args) { return CompareTest(v, args, "le"); }
StatusOr<bool> TestGt(const Value& v, const CallArgs& args) { return CompareTest(v, args, "gt"); }
StatusOr<bool> TestGe(const Value& v, const CallArgs& args) { return CompareTest(v, args, "ge"); }

StatusOr<bool> TestIn(const Value& v, const CallArgs& args) {
  ASSIGN_OR_RETURN(const Value* seq, OneArg(args, "in"));
  return internal::Contains(*seq, v);
}

StatusOr<bool> TestSameAs(const Value& v, const CallArgs& args) {
  ASSIGN_OR_RETURN(const Value* other, OneArg(args, "sameas"));
  if (v.kind() != other->kind()) return false;
  if (v.depth() > 0 || v.is_namespace() || v.is_function() || v.is_string()) return v.SameObject(*other);
  return Equals(v, *other);  // None, booleans, numbers: Python interns the ones templates use
}

StatusOr<bool> TestDivisibleBy(const Value& v, const CallArgs& args) {
  ASSIGN_OR_RETURN(const Value* d, OneArg(args, "divisibleby"));
  if (d->is_int() && (v.is_int() || v.is_bool())) {
    if (d->AsInt() == 0) return ArgError("divisibleby", "division by zero");
    return (v.is_int() ? v.AsInt() : v.AsBool()) % d->AsInt() == 0;
  }
  if ((d->is_number() || d->is_bool()) && (v.is_number() || v.is_bool())) {
    if (d->AsNumber() == 0) return ArgError("divisibleby", "division by zero");
    return std::fmod(v.AsNumber(), d->AsNumber()) == 0;
  }
  return ArgError("divisibleby", "expected numbers");
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
  bool takes_argument;
};

constexpr TestEntry kTests[] = {
    {"defined", TestDefined, false},     {"undefined", TestUndefined, false},
    {"none", TestNone, false},           {"boolean", TestBoolean, false},
    {"true", TestTrue, false},           {"false", TestFalse, false},
    {"string", TestString, false},       {"number", TestNumber, false},
    {"integer", TestInteger, false},     {"float", TestFloat, false},
    {"mapping", TestMapping, false},     {"iterable", TestIterable, false},
    {"sequence", TestSequence, false},   {"callable", TestCallable, false},
    {"escaped", TestEscaped, false},     {"lower", TestLower, false},
    {"upper", TestUpper, false},         {"odd", TestOdd, false},
    {"even", TestEven, false},           {"filter", TestFilter, false},
    {"test", TestTest, false},           {"eq", TestEq, true},
    {"equalto", TestEq, true},           {"==", TestEq, true},
    {"ne", TestNe, true},                {"!=", TestNe, true},
    {"lt", TestLt, true},                {"lessthan", TestLt, true},
    {"<", TestLt, true},                 {"le", TestLe, true},
    {"<=", TestLe, true},                {"gt", TestGt, true},
    {"greaterthan", TestGt, true},       {">", TestGt, true},
    {"ge", TestGe, true},                {">=", TestGe, true},
    {"in", TestIn, true},                {"sameas", TestSameAs, true},
    {"divisibleby", TestDivisibleBy, true},
};

}  // namespace

TestFn FindTest(std::string_view name) {
  for (const TestEntry& entry : kTests) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

bool TestTakesArgument(std::string_view name) {
  for (const TestEntry& entry : kTests) {
    if (entry.name == name) return entry.takes_argument;
  }
  return false;
}

}  // namespace surge::jinja
