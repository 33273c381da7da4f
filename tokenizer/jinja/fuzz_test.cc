// Random edits of real templates: parsing and rendering may fail, but never crash or hang.
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "tokenizer/jinja/template.h"

namespace surge::jinja {
namespace {

constexpr const char* kSeeds[] = {
    "{% set ns = namespace(x=0, s='') %}{% for m in messages if m.role != 'x' %}{% set ns.x = ns.x + 1 %}"
    "{{ loop.index }}:{{ m.role | upper }}={{ m.content | trim | tojson }}{% if not loop.last %},{% endif %}"
    "{% else %}none{% endfor %}{{ ns.x * 2 ** 3 // 5 % 7 }}{{ messages[::-1][0]['content'][1:3] }}",
    "{% macro f(a, b=2) %}{{ a ~ b ~ varargs | length }}{% if a < 3 %}{{ f(a + 1) }}{% endif %}{% endmacro %}"
    "{{ f(0) }}{% call(x) f(1) %}[{{ x }}]{% endcall %}{% filter upper %}{{ 'x' if true else 'y' }}{% endfilter %}",
    "{{ (messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | list | join(', ')) }}"
    "{{ {'a': [1, 2.5, none, true], 'b': 'c'} | tojson(indent=2) }}{{ 'a,b'.split(',') | sort | unique | list }}"
    "{% raw %}{{ raw }}{% endraw %}{# comment #}{{- ' x ' -}}{{ range(3) | sum }}{{ '%s-%d' % ('a', 1) }}",
};

std::string ReadLlama2() {
  std::ifstream in("tests/data/jinja/llama2_chat_template.jinja");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Deletes, duplicates or inserts a random piece; pieces are template syntax fragments.
std::string Mutate(std::string s, std::mt19937& rng) {
  static constexpr const char* kPieces[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "(", ")", "[", "]", "'",
                                            "\"", "|", ".", ",", "if ", "for ", "endfor", "endif", " in ", "~",
                                            "*", "**", "not ", "\\", "{", "}", "loop.", "é", "\xff"};
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % s.size();
    size_t len = 1 + rng() % 8;
    switch (rng() % 3) {
      case 0: s.erase(pos, len); break;
      case 1: s.insert(pos, s.substr(pos, len)); break;
      default: s.insert(pos, kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))]); break;
    }
  }
  return s;
}

TEST(JinjaFuzzTest, MutatedTemplatesNeverCrash) {
  std::vector<std::string> seeds(std::begin(kSeeds), std::end(kSeeds));
  seeds.push_back(ReadLlama2());
  nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": " sys "}, {"role": "user", "content": "héllo"},
                 {"role": "assistant", "content": "hi"}, {"role": "user", "content": "bye"}],
    "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true})");
  Limits limits;
  limits.max_steps = 20000;
  limits.max_string_bytes = 1 << 20;
  std::mt19937 rng(20240611);
  int parsed = 0;
  int rendered = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string source = Mutate(seeds[i % seeds.size()], rng);
    auto t = Template::Parse(source, limits);
    if (!t.ok()) {
      EXPECT_FALSE(t.status().message().empty());
      continue;
    }
    ++parsed;
    auto out = t->Render(context);
    rendered += out.ok();
  }
  // Some mutations must survive, or the test would only exercise the parser's errors.
  EXPECT_GT(parsed, 300);
  EXPECT_GT(rendered, 100);
}

}  // namespace
}  // namespace surge::jinja
