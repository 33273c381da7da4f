// JSON building blocks for constraint grammars: strings (escapes done right, no raw control
// characters, lone surrogates refused), numbers, literals, and "any JSON value" with
// bounded nesting.
//
// Whitespace rule (kept short on purpose, so that a model cannot pad its output): no
// whitespace anywhere except at most one space after ':' and ',' (JsonWhitespace::
// kSpaceAfterSeparators, the default) or none at all (kNone).
#pragma once

#include <map>

#include "engine/constraint/grammar.h"
#include "engine/constraint/limits.h"
#include "engine/constraint/utf8_ranges.h"

namespace surge {

enum class JsonWhitespace { kNone, kSpaceAfterSeparators };

// Number bounds (see README): integer parts of at most 19 digits, fractions of at most 16,
// exponents of at most 2 (so that every number fits a double), so that a number always ends.
inline constexpr int32_t kMaxIntegerDigits = 19;
inline constexpr int32_t kMaxFractionDigits = 16;
inline constexpr int32_t kMaxExponentDigits = 2;

class JsonGrammarBuilder {
 public:
  JsonGrammarBuilder(Grammar* grammar, const ConstraintLimits& limits,
                     JsonWhitespace whitespace = JsonWhitespace::kSpaceAfterSeparators)
      : g_(grammar), limits_(limits), whitespace_(whitespace) {}

  Grammar* grammar() { return g_; }
  ExprId Ws();                 // what may follow ':' and ','
  ExprId Colon();              // ':' Ws
  ExprId Comma();              // ',' Ws
  ExprId StringChar();         // one character inside a string, raw or escaped
  // A string of min..max characters (max kUnbounded for none).
  ExprId String(int32_t min_chars = 0, int32_t max_chars = kUnbounded);
  ExprId Integer();            // -?(0|[1-9][0-9]*)
  ExprId NonNegativeNumber();  // (0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  ExprId Number();             // -? NonNegativeNumber
  ExprId Boolean();
  ExprId Null();
  // One character of `ranges` as it must appear inside a JSON string: '"', '\\' and
  // control characters by their shortest escape, everything else raw.
  ExprId EscapedChar(const CodePointRanges& ranges);
  // Any JSON value whose containers nest at most `nesting` levels.
  ExprId AnyValue(int32_t nesting);
  // Any JSON object (itself one of the `nesting` levels).
  ExprId AnyObject(int32_t nesting);

 private:
  ExprId Digits(int32_t min, int32_t max);
  RuleId ValueRule(int32_t nesting);
  ExprId Members(ExprId value);   // "{" (string ":" value),* "}"
  ExprId Elements(ExprId value);  // "[" value,* "]"

  Grammar* g_;
  const ConstraintLimits& limits_;
  JsonWhitespace whitespace_;
  ExprId string_char_ = -1;
  ExprId hex_ = -1;
  std::map<int32_t, RuleId> value_rules_;  // by nesting
};

}  // namespace surge
