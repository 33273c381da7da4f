#include "tokenizer/jinja/template.h"

#include <gtest/gtest.h>

#include "tokenizer/jinja/jinja_test_util.h"

namespace surge::jinja {
namespace {

using testing::Render;

TEST(JinjaTemplateTest, TextAndExpressions) {
  EXPECT_EQ(Render("hello"), "hello");
  EXPECT_EQ(Render("{{ name }}!", R"({"name": "world"})"), "world!");
  EXPECT_EQ(Render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}"),
            "7 9 3 -4 2 1024");
  EXPECT_EQ(Render("{{ 7 / 2 }} {{ 4 / 2 }} {{ 1.5 + 1 }} {{ 0.1 + 0.2 }} {{ 1e20 if false else 3.0 }}"),
            "3.5 2.0 2.5 0.30000000000000004 3.0");
  EXPECT_EQ(Render("{{ 'a' ~ 1 ~ none ~ true ~ undefined_name }}"), "a1NoneTrue");
  EXPECT_EQ(Render("{{ 'ab' * 3 }} {{ [1] * 2 }}"), "ababab [1, 1]");
  EXPECT_EQ(Render("{{ 'x' if c else 'y' }}{{ 'z' if not c }}", R"({"c": false})"), "yz");
  EXPECT_EQ(Render("{{ a or 'default' }} {{ a and 'yes' }} {{ 0 or [] or 'last' }}", R"({"a": ""})"),
            "default  last");
}

TEST(JinjaTemplateTest, PythonStyleStr) {
  EXPECT_EQ(Render("{{ true }} {{ none }} {{ [1, 'a', none, 2.5] }} {{ {'k': \"it's\"} }} {{ (1,) }}"),
            "True None [1, 'a', None, 2.5] {'k': \"it's\"} (1,)");
  EXPECT_EQ(Render("[{{ missing }}] [{{ missing.attr.deeper }}] [{{ missing['x'] }}]"), "[] [] []");
}

TEST(JinjaTemplateTest, LiteralsAndAccess) {
  const char* ctx = R"({"m": [{"role": "user", "content": "hi"}, {"role": "assistant"}], "d": {"a": 1, "b": 2}})";
  EXPECT_EQ(Render("{{ m[0].role }} {{ m[0]['content'] }} {{ m[-1].role }} {{ m[5] is undefined }}", ctx),
            "user hi assistant True");
  EXPECT_EQ(Render("{{ m[1].content is defined }} {{ d.a + d['b'] }} {{ m.0.role }}", ctx), "False 3 user");
  EXPECT_EQ(Render("{{ [1, 2, 3][1:] }} {{ [1, 2, 3][::-1] }} {{ 'hello'[1:3] }} {{ 'héllo'[::-1] }}"),
            "[2, 3] [3, 2, 1] el olléh");
  EXPECT_EQ(Render("{{ [1, 2, 3, 4, 5][-2:] }} {{ [1, 2, 3, 4, 5][::2] }} {{ [1, 2, 3][5:] }}"),
            "[4, 5] [1, 3, 5] []");
  EXPECT_EQ(Render("{{ {'a': {'b': [1, {'c': 'deep'}]}}['a'].b[1].c }}"), "deep");
  EXPECT_EQ(Render("{{ 'a' 'b' }} {{ \"\\u00e9\\n\\t\" | tojson }} {{ '\\x41' }}"), "ab \"é\\n\\t\" A");
}

TEST(JinjaTemplateTest, Comparisons) {
  EXPECT_EQ(Render("{{ 1 == 1.0 }} {{ 1 == true }} {{ 'a' == 'a' }} {{ [1, 2] == [1, 2] }} {{ 'a' != 'b' }}"),
            "True True True True True");
  EXPECT_EQ(Render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'abc' < 'abd' }} {{ [1, 2] < [1, 3] }}"),
            "True False True True");
  EXPECT_EQ(Render("{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 'x' in u }}"),
            "True True True True False");
  EXPECT_EQ(Render("{{ not 1 == 2 }} {{ not not true }}"), "True True");
}

TEST(JinjaTemplateTest, IfElifElse) {
  const char* tpl = "{% if x > 2 %}big{% elif x > 0 %}small{% else %}none{% endif %}";
  EXPECT_EQ(Render(tpl, R"({"x": 5})"), "big");
  EXPECT_EQ(Render(tpl, R"({"x": 1})"), "small");
  EXPECT_EQ(Render(tpl, R"({"x": 0})"), "none");
  EXPECT_EQ(Render("{% if [] %}a{% endif %}{% if {} %}b{% endif %}{% if ' ' %}c{% endif %}"), "c");
}

TEST(JinjaTemplateTest, ForLoopVariables) {
  EXPECT_EQ(Render("{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                   "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}"),
            "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;");
  EXPECT_EQ(Render("{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }},{% endfor %}"),
            "-2,1-3,2-,");
  EXPECT_EQ(Render("{% for x in [1, 2, 3] %}{{ loop.cycle('odd', 'even') }} {% endfor %}"), "odd even odd ");
  EXPECT_EQ(Render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(Render("{% for x in missing %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(Render("{% for c in 'héé' %}[{{ c }}]{% endfor %}"), "[h][é][é]");
  EXPECT_EQ(Render("{% for x in [1, 2] %}{% for y in [3, 4] %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}"
                   "{{ loop.index }}|{% endfor %}"),
            "113 214 1|123 224 2|");
}

TEST(JinjaTemplateTest, ForLoopUnpackingFilterAndControl) {
  const char* ctx = R"({"d": {"b": 1, "a": 2}})";
  EXPECT_EQ(Render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", ctx), "b=1;a=2;");
  EXPECT_EQ(Render("{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}", ctx), "b=1;a=2;");
  EXPECT_EQ(Render("{% for k in d %}{{ k }}{% endfor %}", ctx), "ba");
  EXPECT_EQ(Render("{% for (a, b) in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}"), "3 7 ");
  EXPECT_EQ(Render("{% for x in range(10) if x is odd %}{{ x }}{{ loop.length }} {% endfor %}"),
            "15 35 55 75 95 ");
  EXPECT_EQ(Render("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}"
                   "{% endif %}{{ x }}{% endfor %}"),
            "013");
}

TEST(JinjaTemplateTest, SetScopingAndNamespace) {
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}"), "21");
  EXPECT_EQ(Render("{% set ns = namespace(x=1, items=[]) %}{% for i in [1, 2, 3] %}{% set ns.x = ns.x + i %}"
                   "{% endfor %}{{ ns.x }} {{ ns.items }}"),
            "7 []");
  EXPECT_EQ(Render("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (3, 4) %}{% set c, d = t %}{{ c }}{{ d }}"),
            "1234");
  EXPECT_EQ(Render("{% set block %}line {{ 1 + 1 }}{% endset %}[{{ block }}]"), "[line 2]");
  EXPECT_EQ(Render("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.c is defined }}"),
            "12False");
  EXPECT_EQ(Render("{% if true %}{% set y = 5 %}{% endif %}{{ y }}"), "5");  // if does not scope
}

TEST(JinjaTemplateTest, Macros) {
  EXPECT_EQ(Render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('Ann') }} {{ greet('Bob', '?') }} {{ greet(punct='.', name='Cy') }}"),
            "Hi Ann! Hi Bob? Hi Cy.");
  EXPECT_EQ(Render("{% macro f() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ f(1, 2, k=3) }}"), "(1, 2){'k': 3}");
  EXPECT_EQ(Render("{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}"
                   "{% endmacro %}{{ fact(5) }}"),
            "120");
  EXPECT_EQ(Render("{% set g = 'global' %}{% macro m() %}{{ g }}{% endmacro %}{% for i in [1] %}{{ m() }}{% endfor %}"),
            "global");
  EXPECT_EQ(Render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                   "{% call wrap('b') %}bold{% endcall %}"),
            "<b>bold</b>");
  EXPECT_EQ(Render("{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}"
                   "{% call(x) each([1, 2]) %}[{{ x }}]{% endcall %}"),
            "[1][2]");
}

TEST(JinjaTemplateTest, FilterBlockAndRaw) {
  EXPECT_EQ(Render("{% filter upper %}shout {{ 'this' }}{% endfilter %}"), "SHOUT THIS");
  EXPECT_EQ(Render("{% filter trim | upper %}  padded  {% endfilter %}."), "PADDED.");
  EXPECT_EQ(Render("{% raw %}{{ not rendered }}{% endraw %}"), "{{ not rendered }}");
}

TEST(JinjaTemplateTest, StringMethods) {
  EXPECT_EQ(Render("[{{ '  a b  '.strip() }}][{{ 'xxaxx'.strip('x') }}][{{ '\\n\\na\\n'.lstrip('\\n') }}]"
                   "[{{ ' a '.rstrip() }}]"),
            "[a b][a][a\n][ a]");
  EXPECT_EQ(Render("{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }}"),
            "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c']");
  EXPECT_EQ(Render("{{ 'x</think>y'.split('</think>')[-1] }} {{ 'abc'.startswith('ab') }} "
                   "{{ 'abc'.endswith(('x', 'c')) }}"),
            "y True True");
  EXPECT_EQ(Render("{{ 'Hello World'.upper() }} {{ 'ÀÉÎ'.lower() }} {{ 'hello world'.title() }} "
                   "{{ 'hELLO'.capitalize() }}"),
            "HELLO WORLD àéî Hello World Hello");
  EXPECT_EQ(Render("{{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.replace('', '-') }} {{ ', '.join(['a', 'b']) }}"),
            "bba -a-b- a, b");
  EXPECT_EQ(Render("{{ '{} and {name}'.format(1, name='x') }} {{ 'hello'.find('l') }} {{ 'héllo'.count('l') }}"),
            "1 and x 2 2");
  EXPECT_EQ(Render("{{ '%s has %d items' % ('list', 3) }} {{ '%.2f' | format(3.14159) }}"),
            "list has 3 items 3.14");
}

TEST(JinjaTemplateTest, DictMethods) {
  const char* ctx = R"({"d": {"z": 1, "a": 2}})";
  EXPECT_EQ(Render("{{ d.get('z') }} {{ d.get('q') }} {{ d.get('q', 5) }} {{ d.keys() }} {{ d.values() }}", ctx),
            "1 None 5 ['z', 'a'] [1, 2]");
  EXPECT_EQ(Render("{{ d.items() | list }}", ctx), "[('z', 1), ('a', 2)]");
  // A key named like a dict method: attribute syntax finds the method, item syntax the key.
  EXPECT_EQ(Render("{{ s['items'] }} {{ s.items is callable }}", R"({"s": {"items": "data"}})"), "data True");
}

TEST(JinjaTemplateTest, Globals) {
  EXPECT_EQ(Render("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}"),
            "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
  EXPECT_EQ(Render("{{ dict(a=1) }} {{ True }} {{ False }} {{ None }}"), "{'a': 1} True False None");
  std::string year = Render("{{ strftime_now('%Y') }}");
  EXPECT_EQ(year.size(), 4u);
}

TEST(JinjaTemplateTest, WhitespaceControl) {
  EXPECT_EQ(Render("a  {{- 'b' -}}  c"), "abc");
  EXPECT_EQ(Render("a\n  {%- if true -%}\n  b\n  {%- endif -%}\n  c"), "abc");
  EXPECT_EQ(Render("a {#- comment -#} b"), "ab");
  // trim_blocks: the newline after a block tag goes; lstrip_blocks: indentation before it.
  EXPECT_EQ(Render("{% if true %}\n    x\n    {% endif %}\ny"), "    x\ny");
  EXPECT_EQ(Render("line\n  {% set a = 1 %}\n{{ a }}\n"), "line\n1");  // one trailing newline dropped
  EXPECT_EQ(Render("{{ 'x' }}\n{{ 'y' }}"), "x\ny");                     // not after {{ }}
  EXPECT_EQ(Render("a{% generation %}b{% endgeneration %}c"), "abc");
}

}  // namespace
}  // namespace surge::jinja
