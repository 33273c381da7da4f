// Helpers for constraint_test: compiling, matching whole strings, brute-force masks, the
// test vocabularies, a small JSON Schema validator and a random schema generator.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/constraint/constraint.h"
#include "engine/constraint/matcher.h"
#include "engine/constraint/token_vocabulary.h"

namespace surge::testing {

using Json = nlohmann::ordered_json;

std::shared_ptr<const CompiledGrammar> MustCompile(const ConstraintSpec& spec);
std::shared_ptr<const CompiledGrammar> MustCompileSchema(const std::string& schema);
// Status message of a failed compile ("" when it compiled).
std::string CompileError(const ConstraintSpec& spec);

// The whole of `text` is a complete match.
bool Matches(const std::shared_ptr<const CompiledGrammar>& grammar, const std::string& text);

// Every token, tried byte by byte from `matcher` (EOS by CanEnd).
std::vector<uint64_t> BruteForceMask(const Matcher& matcher, const TokenVocabulary& vocabulary);

// "tiny" (handmade), "stories" (models/stories260K), "llama3", "qwen3" (tests/node); each
// loaded once. Null when the file is missing.
const TokenVocabulary* TestVocabulary(const std::string& name);

// The subset of JSON Schema that the compiler supports; `root` resolves $ref.
bool ValidateJson(const Json& root, const Json& schema, const Json& value, std::string* why);

// A random schema of the supported subset, nesting at most `depth` levels.
Json RandomSchema(std::mt19937_64& rng, int depth);

// Picks allowed tokens at random (biased towards closing structure) until EOS is chosen
// or `max_tokens` pass. Returns the bytes; *ended tells which.
std::string RandomWalk(const std::shared_ptr<const CompiledGrammar>& grammar,
                       const TokenVocabulary& vocabulary, std::mt19937_64& rng,
                       int max_tokens, bool* ended, std::vector<Matcher>* states = nullptr);

}  // namespace surge::testing
