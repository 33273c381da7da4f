// Structured output by constrained decoding: the one entry point that turns a request's
// constraint (JSON schema, json_object, regex, choice, GBNF grammar) into a CompiledGrammar.
//
// Use from the engine (see README.md):
//   compiled = CompileConstraint(spec, limits)       // once per distinct spec; cache it by
//                                                    // ConstraintCacheKey(spec), share it
//   vocabulary = TokenVocabulary(...)                // once per model
//   Matcher matcher(compiled)                        // per sequence
//   each step: MaskCache::ComputeMask(matcher, bits) -> mask logits -> sample
//              AcceptToken(&matcher, vocabulary, token)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/constraint/compile_budget.h"
#include "engine/constraint/compiled_grammar.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/json_grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

enum class ConstraintKind { kJsonSchema, kJsonObject, kRegex, kChoice, kGrammar };

struct ConstraintSpec {
  ConstraintKind kind = ConstraintKind::kJsonObject;
  std::string text;                  // the schema, regex or GBNF text
  std::vector<std::string> choices;  // kChoice: the output is exactly one of these
  JsonWhitespace whitespace = JsonWhitespace::kSpaceAfterSeparators;  // JSON kinds
};

// Exactly one of `choices` (InvalidArgument when empty or too many).
StatusOr<Grammar> ChoiceGrammar(const std::vector<std::string>& choices,
                                const ConstraintLimits& limits);

StatusOr<Grammar> BuildConstraintGrammar(const ConstraintSpec& spec, const ConstraintLimits& limits);

// `budget` (null: limits.max_compile_steps alone) may add a deadline and a cancel flag.
StatusOr<std::shared_ptr<const CompiledGrammar>> CompileConstraint(const ConstraintSpec& spec,
                                                                  const ConstraintLimits& limits,
                                                                  CompileBudget* budget = nullptr);

// A string that identifies `spec` (equal keys, equal grammars), for the caller's cache.
std::string ConstraintCacheKey(const ConstraintSpec& spec);

}  // namespace surge
