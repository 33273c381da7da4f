// JSON Schema -> Grammar, for OpenAI structured outputs (response_format json_schema) and
// vLLM guided_json; and the "any JSON object" grammar (response_format json_object).
// README.md lists the supported keywords; any other keyword is an InvalidArgument naming it,
// never silently dropped. Properties come out in schema order, optional ones may be
// absent; whitespace follows json_grammar.h's rule.
#pragma once

#include <string_view>

#include "base/status.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/json_grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

StatusOr<Grammar> JsonSchemaToGrammar(
    std::string_view schema_json, const ConstraintLimits& limits,
    JsonWhitespace whitespace = JsonWhitespace::kSpaceAfterSeparators);

// Any JSON object, containers nested at most limits.max_json_nesting deep (itself included).
Grammar JsonObjectGrammar(const ConstraintLimits& limits,
                          JsonWhitespace whitespace = JsonWhitespace::kSpaceAfterSeparators);

}  // namespace surge
