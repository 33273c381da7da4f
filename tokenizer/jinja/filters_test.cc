// Filters and tests (`x | f`, `x is t`).
#include <gtest/gtest.h>

#include "tokenizer/jinja/jinja_test_util.h"

namespace surge::jinja {
namespace {

using testing::Render;

TEST(JinjaFilterTest, Strings) {
  EXPECT_EQ(Render("[{{ '  x \\n' | trim }}][{{ 'xx-a-xx' | trim('x') }}][{{ 'ab' | upper }}][{{ 'AB' | lower }}]"),
            "[x][-a-][AB][ab]");
  EXPECT_EQ(Render("{{ 'hello wORLD-foo(bar' | title }} {{ 'hELLO' | capitalize }}"), "Hello World-Foo(Bar Hello");
  EXPECT_EQ(Render("{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 1) }}"), "a+b+c baa");
  EXPECT_EQ(Render("{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent('> ', blank=true) }}"),
            "a\n    b\n\n    c|  a\n  b|a\n> \n> b");
  EXPECT_EQ(Render("{{ '<a href=\"x\">&</a>' | escape }} {{ 'x' | safe }} {{ 'one two  three' | wordcount }}"),
            "&lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt; x 3");
  EXPECT_EQ(Render("{{ 5 | string }}{{ [1] | string }} {{ '%s-%05.1f-%x' | format('a', 2.25, 255) }}"),
            "5[1] a-002.2-ff");
}

TEST(JinjaFilterTest, Numbers) {
  EXPECT_EQ(Render("{{ '42' | int }} {{ ' 7 ' | int }} {{ '3.9' | int }} {{ 'x' | int }} {{ 'x' | int(-1) }} "
                   "{{ -3.9 | int }} {{ 'ff' | int(base=16) }}"),
            "42 7 3 0 -1 -3 255");
  EXPECT_EQ(Render("{{ '2.5' | float }} {{ 3 | float }} {{ 'bad' | float }} {{ -4 | abs }} {{ -2.5 | abs }}"),
            "2.5 3.0 0.0 4 2.5");
  EXPECT_EQ(Render("{{ 2.5 | round }} {{ 3.14159 | round(2) }} {{ 2.1 | round(method='ceil') }} {{ 7 | round }}"),
            "2.0 3.14 3.0 7");
}

TEST(JinjaFilterTest, Sequences) {
  EXPECT_EQ(Render("{{ [3, 1, 2] | length }} {{ 'héllo' | length }} {{ {'a': 1} | count }} {{ missing | length }}"),
            "3 5 1 0");
  EXPECT_EQ(Render("{{ [3, 1, 2] | first }} {{ [3, 1, 2] | last }} {{ [] | first is undefined }} {{ 'abc' | last }}"),
            "3 2 True c");
  EXPECT_EQ(Render("{{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }} "
                   "{{ ['b', 'A', 'c'] | sort(case_sensitive=true) }}"),
            "[1, 2, 3] [3, 2, 1] ['A', 'b', 'c'] ['A', 'b', 'c']");
  EXPECT_EQ(Render("{{ [1, 2, 3] | reverse | list }} {{ 'abc' | reverse }} {{ 'ab' | list }} {{ [1, 1, 2, 1] | unique | list }}"),
            "[3, 2, 1] cba ['a', 'b'] [1, 2]");
  EXPECT_EQ(Render("{{ [1, 2, 3] | join }} {{ ['a', 'b'] | join(', ') }} {{ [1, 2, 3] | sum }} {{ [1, 5, 3] | max }} "
                   "{{ [4, 2, 8] | min }}"),
            "123 a, b 6 5 2");
}

TEST(JinjaFilterTest, MapSelectAndAttributes) {
  const char* ctx = R"({"users": [{"name": "ann", "age": 30, "admin": true},
                                  {"name": "bob", "age": 20, "admin": false},
                                  {"name": "cy", "age": 25}]})";
  EXPECT_EQ(Render("{{ users | map(attribute='name') | join(',') }}", ctx), "ann,bob,cy");
  EXPECT_EQ(Render("{{ users | map(attribute='admin', default='?') | list }}", ctx), "[True, False, '?']");
  EXPECT_EQ(Render("{{ ['a', 'b'] | map('upper') | list }}"), "['A', 'B']");
  EXPECT_EQ(Render("{{ users | selectattr('admin') | map(attribute='name') | list }}", ctx), "['ann']");
  EXPECT_EQ(Render("{{ users | rejectattr('admin') | map(attribute='name') | list }}", ctx), "['bob', 'cy']");
  EXPECT_EQ(Render("{{ users | selectattr('name', 'equalto', 'bob') | list | length }}", ctx), "1");
  EXPECT_EQ(Render("{{ users | selectattr('admin', 'undefined') | map(attribute='name') | first }}", ctx), "cy");
  EXPECT_EQ(Render("{{ users | sort(attribute='age') | map(attribute='name') | join(' ') }}", ctx), "bob cy ann");
  EXPECT_EQ(Render("{{ range(10) | select('odd') | list }} {{ [0, 1, '', 'a'] | reject | list }}"),
            "[1, 3, 5, 7, 9] [0, '']");
  EXPECT_EQ(Render("{{ users | map(attribute='name') | join(', ', attribute='0') }}", ctx), "a, b, c");
}

TEST(JinjaFilterTest, DictsAndDefault) {
  const char* ctx = R"({"d": {"b": 1, "A": 2, "c": 0}})";
  EXPECT_EQ(Render("{{ d | items | list }}", ctx), "[('b', 1), ('A', 2), ('c', 0)]");
  EXPECT_EQ(Render("{{ d | dictsort }} {{ d | dictsort(by='value', reverse=true) }}", ctx),
            "[('A', 2), ('b', 1), ('c', 0)] [('A', 2), ('b', 1), ('c', 0)]");
  EXPECT_EQ(Render("{{ d | keys | list }} {{ d | values | list }}", ctx), "['b', 'A', 'c'] [1, 2, 0]");
  EXPECT_EQ(Render("{{ missing | default('dflt') }} {{ '' | default('dflt') }} {{ '' | d('dflt', true) }} "
                   "{{ none | default('x') }}"),
            "dflt  dflt None");
}

TEST(JinjaFilterTest, ToJson) {
  const char* ctx = R"({"t": {"name": "f", "params": {"z": [1, 2.5, true, null], "a": "é\"\n"}, "e": {}, "l": []}})";
  EXPECT_EQ(Render("{{ t | tojson }}", ctx),
            R"({"name": "f", "params": {"z": [1, 2.5, true, null], "a": "é\"\n"}, "e": {}, "l": []})");
  EXPECT_EQ(Render("{{ t.params | tojson(indent=2) }}", ctx),
            "{\n  \"z\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"a\": \"é\\\"\\n\"\n}");
  EXPECT_EQ(Render("{{ t.params | tojson(sort_keys=true, separators=(',', ':')) }}", ctx),
            R"({"a":"é\"\n","z":[1,2.5,true,null]})");
  EXPECT_EQ(Render("{{ 'é😀' | tojson(ensure_ascii=true) }} {{ 1.0 | tojson }} {{ missing | tojson }}"),
            R"("\u00e9\ud83d\ude00" 1.0 null)");
}

TEST(JinjaTestsTest, Tests) {
  EXPECT_EQ(Render("{{ x is defined }}{{ y is undefined }}{{ n is none }}{{ n is not none }}",
                   R"({"x": 1, "n": null})"),
            "TrueTrueTrueFalse");
  EXPECT_EQ(Render("{{ 'a' is string }}{{ 1 is number }}{{ 1.5 is number }}{{ 1 is integer }}{{ 1.5 is integer }}"
                   "{{ 1.5 is float }}"),
            "TrueTrueTrueTrueFalseTrue");
  EXPECT_EQ(Render("{{ {} is mapping }}{{ [] is mapping }}{{ [] is iterable }}{{ 'a' is iterable }}"
                   "{{ 1 is iterable }}{{ [] is sequence }}"),
            "TrueFalseTrueTrueFalseTrue");
  EXPECT_EQ(Render("{{ true is boolean }}{{ true is true }}{{ 1 is true }}{{ false is false }}{{ 0 is false }}"),
            "TrueTrueFalseTrueFalse");
  EXPECT_EQ(Render("{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(2) }}"),
            "TrueTrueTrueFalse");
  EXPECT_EQ(Render("{{ 2 is equalto 2 }}{{ 2 is eq(3) }}{{ 'a' is in 'abc' }}{{ 3 is gt 2 }}{{ 'abc' is lower }}"
                   "{{ 'ABC' is upper }}"),
            "TrueFalseTrueTrueTrueTrue");
  EXPECT_EQ(Render("{{ range is callable }}{{ 'trim' is filter }}{{ 'odd' is test }}"), "TrueTrueTrue");
}

}  // namespace
}  // namespace surge::jinja
