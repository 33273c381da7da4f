// Pieces of the Oniguruma -> PCRE2 translation (regex_translate.cc, regex_class.cc)
// that both the pattern and the character-class translators use. Internal to tokenizer/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace surge::regex_syntax {

// Oniguruma's word characters as tokenizers.js spells them: inside a class, and (with
// ²³¹¼½¾ added, as Oniguruma's Latin-1 table has them) as a class of its own.
inline constexpr std::string_view kWordCharsInClass = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}";
inline constexpr std::string_view kWordClass =
    "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}]";
inline constexpr std::string_view kNonWordClass =
    "[^\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}]";
inline constexpr std::string_view kHexChars = "0-9A-Fa-f";

// The UTF-8 of the code point starting at text[i].
std::string_view CodePointAt(std::string_view text, size_t i);

// `\p{...}`, `\P{...}`, `\x{...}` or `\u{...}` at the start of `rest`.
struct BracedEscape {
  char kind;              // p, P, x or u
  std::string_view body;  // between the braces
  size_t length;          // of the whole escape
};
std::optional<BracedEscape> ParseBracedEscape(std::string_view rest);

// `\xHH` or `\uHHHH` at the start of `rest`: the hex digits and the escape's length.
std::optional<std::pair<std::string_view, size_t>> ParseHexEscape(std::string_view rest);

bool AllHex(std::string_view text);
bool IsAsciiLetter(char32_t c);
// "[aA]" for an ASCII letter.
std::string FoldedLetter(char c);

// Translates the character class that starts at source[start] ('['). `fold` is true
// inside (?i:...): ASCII letters then match both cases.
struct ClassResult {
  std::string atom;  // a PCRE2 atom that matches one character
  size_t end;        // index just past the class's ']'
};
StatusOr<ClassResult> TranslateClass(std::string_view source, size_t start, bool fold);

}  // namespace surge::regex_syntax
