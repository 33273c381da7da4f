// Errors come back as a Status with a clear message; limits stop runaway templates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tokenizer/jinja/jinja_test_util.h"

namespace surge::jinja {
namespace {

using ::testing::HasSubstr;
using testing::Render;
using testing::RenderError;

TEST(JinjaErrorTest, SyntaxErrorsNameLineAndColumn) {
  EXPECT_THAT(RenderError("line one\n{% for x in y %}\nbody"),
              HasSubstr("unclosed 'for' block: reached end of template"));
  EXPECT_THAT(RenderError("a\nb {% if x %}"), HasSubstr("unclosed 'if' block"));
  EXPECT_THAT(RenderError("{{ 1 + }}"), HasSubstr("line 1, column 8"));
  EXPECT_THAT(RenderError("{{ 'unterminated }}"), HasSubstr("unterminated string literal"));
  EXPECT_THAT(RenderError("{% endif %}"), HasSubstr("unexpected '{% endif %}'"));
  EXPECT_THAT(RenderError("{% for x in y %}{% endif %}{% endfor %}"), HasSubstr("unexpected '{% endif %}' inside 'for'"));
  EXPECT_THAT(RenderError("{% frobnicate %}"), HasSubstr("unknown statement 'frobnicate'"));
  EXPECT_THAT(RenderError("{% break %}"), HasSubstr("'break' outside of a for loop"));
  EXPECT_THAT(RenderError("{# no end"), HasSubstr("missing end of comment tag"));
  EXPECT_THAT(RenderError("{{ x $ y }}"), HasSubstr("unexpected character '$'"));
  EXPECT_THAT(RenderError("{% macro m(a=1, b) %}{% endmacro %}"), HasSubstr("parameter without a default"));
}

TEST(JinjaErrorTest, UnknownFiltersAndTestsFailWhenUsed) {
  EXPECT_THAT(RenderError("a\n  {{ x | nosuchfilter }}"), HasSubstr("line 2, column 10: no filter named 'nosuchfilter'"));
  EXPECT_THAT(RenderError("{% if x is nosuchtest %}{% endif %}"), HasSubstr("no test named 'nosuchtest'"));
  EXPECT_EQ(Render("{% if false %}{{ x | nosuchfilter }}{% endif %}ok"), "ok");  // as Jinja 3 in conditionals
}

TEST(JinjaErrorTest, RaiseExceptionMessageIsVerbatim) {
  EXPECT_EQ(RenderError("{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"),
            "Conversation roles must alternate user/assistant/user/assistant/...");
  auto parsed = Template::Parse("{% if bad %}{{ raise_exception('nope') }}{% endif %}ok");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Render(nlohmann::ordered_json{{"bad", false}}).value(), "ok");
  auto failed = parsed->Render(nlohmann::ordered_json{{"bad", true}});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "nope");
}

TEST(JinjaErrorTest, TypeErrorsAreStatuses) {
  EXPECT_THAT(RenderError("\n{{ 'a' + 1 }}"), HasSubstr("line 2, column 4: unsupported operand type(s) for +: 'str' and 'int'"));
  EXPECT_THAT(RenderError("{{ x + 'a' }}", R"({"x": null})"), HasSubstr("'NoneType' and 'str'"));
  EXPECT_THAT(RenderError("{{ 1 / 0 }}"), HasSubstr("division by zero"));
  EXPECT_THAT(RenderError("{{ 1 < 'a' }}"), HasSubstr("cannot compare int with str"));
  EXPECT_THAT(RenderError("{% for x in 5 %}{% endfor %}"), HasSubstr("'int' object is not iterable"));
  EXPECT_THAT(RenderError("{{ 'x' in none }}"), HasSubstr("'NoneType' is not iterable"));
  EXPECT_THAT(RenderError("{{ nosuchfunction() }}"), HasSubstr("'nosuchfunction' is undefined"));
  EXPECT_THAT(RenderError("{{ 'abc'.nomethod() }}"), HasSubstr("'str' object has no attribute 'nomethod'"));
  EXPECT_THAT(RenderError("{% set x.a = 1 %}", R"({"x": {}})"), HasSubstr("non-namespace"));
  EXPECT_THAT(RenderError("{% set a, b = [1] %}"), HasSubstr("expected 2 values to unpack, got 1"));
  EXPECT_THAT(RenderError("{{ none | length }}"), HasSubstr("has no len()"));
  EXPECT_THAT(RenderError("{{ [1] | selectattr('x', 'nosuchtest') | list }}"), HasSubstr("no test named"));
  EXPECT_THAT(RenderError("{{ 9223372036854775807 + 1 }}"), HasSubstr("integer overflow"));
  EXPECT_THAT(RenderError("{{ 'a'.split('') }}"), HasSubstr("empty separator"));
}

TEST(JinjaErrorTest, RecursionIsBounded) {
  EXPECT_THAT(RenderError("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
              HasSubstr("macro calls nested deeper than 64"));
  // Deep nesting inside one expression is refused by the parser, before it can hurt.
  std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_THAT(RenderError(deep), HasSubstr("nested too deeply"));
  std::string nots = "{{ " + std::string(0, ' ');
  for (int i = 0; i < 3000; ++i) nots += "not ";
  EXPECT_THAT(RenderError(nots + "x }}"), HasSubstr("nested too deeply"));
  std::string ifs;
  for (int i = 0; i < 1000; ++i) ifs += "{% if true %}";
  EXPECT_THAT(RenderError(ifs), HasSubstr("nested too deeply"));
}

TEST(JinjaErrorTest, OutputAndWorkAreBounded) {
  Limits small;
  small.max_string_bytes = 1000;
  small.max_steps = 10000;
  small.max_items = 5000;
  EXPECT_THAT(RenderError("{% for i in range(2000) %}xx{% endfor %}", "{}", small), HasSubstr("rendered output longer"));
  EXPECT_THAT(RenderError("{{ 'x' * 5000 }}", "{}", small), HasSubstr("exceeds the limit"));
  EXPECT_THAT(RenderError("{% set ns = namespace(s='ab') %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}"
                          "{% endfor %}",
                          "{}", small),
              HasSubstr("exceeds the limit"));
  EXPECT_THAT(RenderError("{% for i in range(200) %}{% for j in range(200) %}{% endfor %}{% endfor %}", "{}", small),
              HasSubstr("loop iterations"));
  EXPECT_THAT(RenderError("{{ range(100000) | length }}", "{}", small), HasSubstr("range() of more than 5000"));
  EXPECT_THAT(RenderError("{{ 'ab'.replace('', 'xxxxxxxxxx' * 90) }}", "{}", small), HasSubstr("exceeds the limit"));
  // Default limits: a nested loop of 10^12 iterations stops quickly.
  EXPECT_THAT(RenderError("{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}"),
              HasSubstr("loop iterations"));
}

TEST(JinjaErrorTest, NestingOfValuesIsBounded) {
  EXPECT_THAT(RenderError("{% set ns = namespace(v=[]) %}{% for i in range(1000) %}{% set ns.v = [ns.v] %}"
                          "{% endfor %}"),
              HasSubstr("nested deeper than"));
  EXPECT_THAT(RenderError("{% set ns = namespace() %}{% set ns.self = ns %}"), HasSubstr("cannot hold a namespace"));
  std::string deep_json = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_THAT(RenderError("{{ x }}", "{\"x\": " + deep_json + "}"), HasSubstr("nested deeper than"));
}

}  // namespace
}  // namespace surge::jinja
