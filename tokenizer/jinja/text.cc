#include "tokenizer/jinja/text.h"

#include "base/utf8.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace surge::jinja::text {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Latin Extended-A alternates upper/lower case in pairs; `even_upper` tells which half.
bool InPairRange(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

char32_t PairUpper(char32_t cp, bool even_upper) {
  bool is_upper = ((cp & 1) == 0) == even_upper;
  return is_upper ? cp : cp - 1;
}

char32_t PairLower(char32_t cp, bool even_upper) {
  bool is_upper = ((cp & 1) == 0) == even_upper;
  return is_upper ? cp + 1 : cp;
}

// Latin Extended-A pair ranges: [lo, hi] where upper case sits on even (or odd) code points.
struct PairRange {
  char32_t lo, hi;
  bool even_upper;
};
constexpr PairRange kPairRanges[] = {
    {0x100, 0x12F, true}, {0x132, 0x137, true}, {0x139, 0x148, false},
    {0x14A, 0x177, true}, {0x179, 0x17E, false},
};

void AppendHexEscape(std::string* out, char32_t cp) {
  char buf[16];
  if (cp < 0x100) {
    std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(cp));
  } else if (cp < 0x10000) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
  } else {
    std::snprintf(buf, sizeof(buf), "\\U%08x", static_cast<unsigned>(cp));
  }
  out->append(buf);
}

// Code points Python's repr() escapes: controls, non-ASCII spaces, line separators and the
// common invisible format characters.
bool IsNonPrintable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return true;
  if (cp == 0xA0 || cp == 0xAD || cp == 0x1680 || cp == 0x202F || cp == 0x205F || cp == 0x3000) {
    return true;
  }
  if ((cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E)) return true;
  if ((cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF) return true;
  return cp >= 0xD800 && cp <= 0xDFFF;
}

}  // namespace

char32_t NextCodePoint(std::string_view s, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t i = *pos;
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    *pos = i + 1;
    return b0;
  }
  int extra = -1;
  if (b0 >= 0xC2 && b0 < 0xE0) {
    extra = 1;
  } else if (b0 >= 0xE0 && b0 < 0xF0) {
    extra = 2;
  } else if (b0 >= 0xF0 && b0 < 0xF5) {
    extra = 3;
  }
  if (extra < 0 || i + extra >= s.size()) {
    *pos = i + 1;
    return kReplacement;
  }
  char32_t cp = b0 & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      *pos = i + 1;
      return kReplacement;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *pos = i + 1;
    return kReplacement;
  }
  *pos = i + 1 + extra;
  return cp;
}

void AppendUtf8(std::string* out, char32_t cp) { surge::AppendUtf8(cp, out); }

std::vector<size_t> CodePointOffsets(std::string_view s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  size_t pos = 0;
  while (pos < s.size()) {
    offsets.push_back(pos);
    NextCodePoint(s, &pos);
  }
  offsets.push_back(s.size());
  return offsets;
}

size_t CodePointCount(std::string_view s) {
  size_t count = 0;
  for (size_t pos = 0; pos < s.size(); ++count) NextCodePoint(s, &pos);
  return count;
}

bool IsSpace(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

char32_t ToUpper(char32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') ? cp - 32 : cp;
  if ((cp >= 0xE0 && cp <= 0xFE && cp != 0xF7)) return cp - 0x20;
  if (cp == 0xFF) return 0x178;
  if (cp == 0xB5) return 0x39C;
  if (cp == 0x131) return 'I';
  if (cp == 0x17F) return 'S';
  for (const PairRange& r : kPairRanges) {
    if (InPairRange(cp, r.lo, r.hi)) return PairUpper(cp, r.even_upper);
  }
  if ((cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2)) return cp - 0x20;
  if (cp == 0x3C2) return 0x3A3;
  if (cp == 0x3AC) return 0x386;
  if (cp >= 0x3AD && cp <= 0x3AF) return cp - 0x25;
  if (cp == 0x3CC) return 0x38C;
  if (cp == 0x3CD || cp == 0x3CE) return cp - 0x3F;
  if (cp >= 0x430 && cp <= 0x44F) return cp - 0x20;
  if (cp >= 0x450 && cp <= 0x45F) return cp - 0x50;
  if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 0x20;
  return cp;
}

char32_t ToLower(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7)) return cp + 0x20;
  if (cp == 0x178) return 0xFF;
  for (const PairRange& r : kPairRanges) {
    if (InPairRange(cp, r.lo, r.hi)) return PairLower(cp, r.even_upper);
  }
  if ((cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2)) return cp + 0x20;
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 0x25;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 0x3F;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  if (cp >= 0xFF21 && cp <= 0xFF3A) return cp + 0x20;
  return cp;
}

bool IsCased(char32_t cp) { return ToUpper(cp) != cp || ToLower(cp) != cp; }

namespace {
template <typename Fn>
std::string MapCodePoints(std::string_view s, Fn fn) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  size_t index = 0;
  while (pos < s.size()) {
    size_t start = pos;
    char32_t cp = NextCodePoint(s, &pos);
    if (cp == kReplacement && pos == start + 1 && static_cast<unsigned char>(s[start]) >= 0x80) {
      out.push_back(s[start]);  // keep malformed bytes as they are
    } else {
      AppendUtf8(&out, fn(cp, index));
    }
    ++index;
  }
  return out;
}
}  // namespace

std::string Upper(std::string_view s) {
  std::string out = MapCodePoints(s, [](char32_t cp, size_t) { return ToUpper(cp); });
  // U+00DF (sharp s) upper-cases to "SS", the one common one-to-two mapping.
  for (size_t p = out.find("\xC3\x9F"); p != std::string::npos; p = out.find("\xC3\x9F", p + 2)) {
    out.replace(p, 2, "SS");
  }
  return out;
}

std::string Lower(std::string_view s) {
  return MapCodePoints(s, [](char32_t cp, size_t) { return ToLower(cp); });
}

std::string Capitalize(std::string_view s) {
  return MapCodePoints(s, [](char32_t cp, size_t i) { return i == 0 ? ToUpper(cp) : ToLower(cp); });
}

std::string PyTitle(std::string_view s) {
  bool previous_is_cased = false;
  return MapCodePoints(s, [&](char32_t cp, size_t) {
    char32_t mapped = previous_is_cased ? ToLower(cp) : ToUpper(cp);
    previous_is_cased = IsCased(cp);
    return mapped;
  });
}

std::string JinjaTitle(std::string_view s) {
  // Jinja splits on runs of [-\s({\[<] and capitalizes every other piece.
  bool word_start = true;
  return MapCodePoints(s, [&](char32_t cp, size_t) {
    bool delimiter = IsSpace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    char32_t mapped = delimiter ? cp : (word_start ? ToUpper(cp) : ToLower(cp));
    word_start = delimiter;
    return mapped;
  });
}

std::string Strip(std::string_view s, const std::string* chars, bool left, bool right) {
  std::vector<char32_t> set;
  if (chars != nullptr) {
    for (size_t pos = 0; pos < chars->size();) set.push_back(NextCodePoint(*chars, &pos));
  }
  auto strippable = [&](char32_t cp) {
    if (chars == nullptr) return IsSpace(cp);
    for (char32_t c : set) {
      if (c == cp) return true;
    }
    return false;
  };
  size_t begin = 0;
  size_t end = s.size();
  while (left && begin < end) {
    size_t next = begin;
    if (!strippable(NextCodePoint(s, &next))) break;
    begin = next;
  }
  while (right && end > begin) {
    size_t start = end - 1;  // back up to the first byte of the last code point
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) --start;
    size_t next = start;
    char32_t cp = NextCodePoint(s, &next);
    if (next != end) {  // a malformed tail: treat its last byte alone
      start = end - 1;
      next = start;
      cp = NextCodePoint(s, &next);
    }
    if (!strippable(cp)) break;
    end = start;
  }
  return std::string(s.substr(begin, end - begin));
}

std::vector<std::string> Split(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep != nullptr) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      size_t found = s.find(*sep, start);
      if (found == std::string_view::npos) break;
      parts.emplace_back(s.substr(start, found - start));
      start = found + sep->size();
    }
    parts.emplace_back(s.substr(start));
    return parts;
  }
  size_t pos = 0;
  while (true) {
    // Skip whitespace, then take one word.
    size_t word_start = pos;
    while (word_start < s.size()) {
      size_t next = word_start;
      if (!IsSpace(NextCodePoint(s, &next))) break;
      word_start = next;
    }
    if (word_start >= s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit) {
      parts.emplace_back(s.substr(word_start));
      break;
    }
    size_t word_end = word_start;
    while (word_end < s.size()) {
      size_t next = word_end;
      if (IsSpace(NextCodePoint(s, &next))) break;
      word_end = next;
    }
    parts.emplace_back(s.substr(word_start, word_end - word_start));
    pos = word_end;
  }
  return parts;
}

std::string FormatFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string sci(buf, result.ptr);  // e.g. "-1.2345e+02": shortest round-trip digits
  std::string out;
  size_t i = 0;
  if (sci[0] == '-') {
    out.push_back('-');
    i = 1;
  }
  size_t e = sci.find('e');
  std::string digits;
  for (size_t k = i; k < e; ++k) {
    if (sci[k] != '.') digits.push_back(sci[k]);
  }
  int exponent = std::atoi(sci.c_str() + e + 1);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exponent >= -4 && exponent < 16) {  // Python uses fixed notation for 1e-4 <= |x| < 1e16
    if (exponent >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exponent + 1));
      int_part.append(exponent + 1 - int_part.size(), '0');
      std::string frac = digits.size() > static_cast<size_t>(exponent + 1) ? digits.substr(exponent + 1) : "0";
      return out + int_part + "." + frac;
    }
    return out + "0." + std::string(-exponent - 1, '0') + digits;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp_buf;
}

std::string QuoteString(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = NextCodePoint(s, &pos);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (IsNonPrintable(cp)) {
      AppendHexEscape(&out, cp);
    } else {
      AppendUtf8(&out, cp);
    }
  }
  out.push_back(quote);
  return out;
}

}  // namespace surge::jinja::text
