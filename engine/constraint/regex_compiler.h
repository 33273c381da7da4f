// Regex -> Grammar (vLLM guided_regex, JSON schema "pattern"). The whole output must match
// (anchors are implicit; a leading '^' and trailing '$' are accepted and ignored).
// Supported: literals and escapes (\n \t \r \f \v \0 \xHH \uHHHH \u{H..} and escaped
// punctuation), '.', classes [a-z] [^...] with \d \w \s \D \W \S inside or outside, groups
// ( ) (?: ) (?<name> ) (?P<name> ), '|', and * + ? {m} {m,} {m,n} (lazy forms too).
// Matching is over UTF-8: '.', negated classes and \D \W \S match whole characters.
// Anything else (backreferences, lookaround, \b, inline flags, possessive quantifiers,
// \p{..}, POSIX classes) is an InvalidArgument naming it and its position.
#pragma once

#include <string_view>

#include "base/status.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/json_grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

// Adds `pattern` to `grammar`. With `json` set, the expression matches the pattern's
// strings as they appear inside a JSON string literal (escaped), for schema patterns.
StatusOr<ExprId> CompileRegex(std::string_view pattern, const ConstraintLimits& limits,
                              Grammar* grammar, JsonGrammarBuilder* json = nullptr);

StatusOr<Grammar> RegexToGrammar(std::string_view pattern, const ConstraintLimits& limits);

}  // namespace surge
