// Code point sets as grammar expressions over UTF-8 bytes: a set of code point ranges
// becomes alternatives of byte-range sequences, each matching whole characters only.
#pragma once

#include <utility>
#include <vector>

#include "engine/constraint/grammar.h"

namespace surge {

inline constexpr char32_t kMaxCodePoint = 0x10FFFF;

// Inclusive ranges; Normalize sorts, merges and removes surrogates (D800..DFFF).
using CodePointRanges = std::vector<std::pair<char32_t, char32_t>>;

CodePointRanges NormalizeRanges(CodePointRanges ranges);
// All scalar values not in `ranges` (which must be normalized).
CodePointRanges ComplementRanges(const CodePointRanges& ranges);
// One character of `ranges` (normalized) in UTF-8.
ExprId Utf8Expr(Grammar* grammar, const CodePointRanges& ranges);

}  // namespace surge
