// Text helpers for the Jinja interpreter: UTF-8 code points, Python's notion of whitespace,
// simple case mapping and number formatting, so that string semantics follow Python.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace surge::jinja::text {

// Decodes the code point at s[*pos] and advances *pos past it. A malformed byte decodes
// as U+FFFD and advances by one, so every byte belongs to exactly one "code point".
char32_t NextCodePoint(std::string_view s, size_t* pos);
void AppendUtf8(std::string* out, char32_t cp);

// Byte offset of every code point start, plus s.size() at the end.
std::vector<size_t> CodePointOffsets(std::string_view s);
size_t CodePointCount(std::string_view s);

// Python's str.isspace(): ASCII whitespace, U+001C..U+001F, U+0085 and the Unicode spaces.
bool IsSpace(char32_t cp);

// Simple one-to-one case mapping for ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic and
// fullwidth Latin; other code points map to themselves.
char32_t ToUpper(char32_t cp);
char32_t ToLower(char32_t cp);
bool IsCased(char32_t cp);
std::string Upper(std::string_view s);
std::string Lower(std::string_view s);
std::string Capitalize(std::string_view s);    // Python str.capitalize()
std::string PyTitle(std::string_view s);       // Python str.title()
std::string JinjaTitle(std::string_view s);    // Jinja's |title filter

// Python str.strip/lstrip/rstrip; `chars` null means whitespace.
std::string Strip(std::string_view s, const std::string* chars, bool left, bool right);

// Python str.split(sep, maxsplit); sep null splits on runs of whitespace.
std::vector<std::string> Split(std::string_view s, const std::string* sep, int64_t maxsplit);

// Python repr(float): shortest round-trip digits, "1.0", "1e-05", "inf", "nan".
std::string FormatFloat(double value);
// Python repr(str): quoted and escaped.
std::string QuoteString(std::string_view s);

}  // namespace surge::jinja::text
