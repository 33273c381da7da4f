// UTF-8 helpers (tokenizer, chat templates, API): lossy decoding as WHATWG's TextDecoder does it, code
// point iteration, and the JavaScript whitespace set that tokenizers.js trims with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace surge {

inline constexpr char32_t kReplacementChar = 0xFFFD;
inline constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

// Appends the UTF-8 encoding of `cp` (which must be a scalar value) to `out`.
void AppendUtf8(char32_t cp, std::string* out);

// Length in bytes of the UTF-8 sequence that starts with `lead`; 1 for invalid lead bytes.
inline int Utf8SequenceLength(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return lead < 0xF8 ? 4 : 1;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// Decodes the code point of valid UTF-8 at text[*pos] and advances *pos past it.
// Precondition: `text` is valid UTF-8 (see IsValidUtf8).
char32_t NextCodePoint(std::string_view text, size_t* pos);

// True when `bytes` is well-formed UTF-8 (no overlongs, surrogates or values > U+10FFFF).
bool IsValidUtf8(std::string_view bytes);

// Decodes arbitrary bytes as UTF-8, replacing each maximal ill-formed subsequence with
// U+FFFD exactly as the WHATWG Encoding Standard's decoder (TextDecoder, fatal=false).
// An incomplete sequence at the end of `bytes` becomes one U+FFFD, and then the function
// returns true (more bytes could still complete that character).
bool AppendUtf8Lossy(std::string_view bytes, std::string* out);
std::string Utf8Lossy(std::string_view bytes);

// The characters JavaScript's String.prototype.trim removes: WhiteSpace (incl. U+FEFF and
// every Zs) and LineTerminator. Unlike Unicode White_Space it excludes U+0085.
bool IsJsWhitespace(char32_t cp);
std::string_view TrimJsWhitespaceStart(std::string_view text);
std::string_view TrimJsWhitespaceEnd(std::string_view text);

// Replaces every occurrence of `from` (non-empty) with `to`.
std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to);

}  // namespace surge
