#include "tokenizer/jinja/preprocess.h"

#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

bool IsSpaceAt(std::string_view s, size_t pos, size_t* next) {
  if (pos >= s.size()) return false;
  size_t p = pos;
  if (!text::IsSpace(text::NextCodePoint(s, &p))) return false;
  *next = p;
  return true;
}

}  // namespace

size_t SkipSpaces(std::string_view s, size_t pos) {
  size_t next;
  while (IsSpaceAt(s, pos, &next)) pos = next;
  return pos;
}

size_t TrimmedLength(std::string_view s, size_t floor) {
  size_t end = s.size();
  while (end > floor) {
    size_t start = end - 1;
    while (start > floor && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t p = start;
    char32_t cp = text::NextCodePoint(s, &p);
    if (p != end || !text::IsSpace(cp)) break;
    end = start;
  }
  return end;
}

namespace {

bool IsLineStart(const std::string& s, size_t i) {
  if (i == 0) return true;
  char c = s[i - 1];
  if (c == '\n' || c == '\r') return true;
  // U+2028 and U+2029 end lines for JavaScript's multiline `^`.
  return i >= 3 && s.compare(i - 3, 2, "\xE2\x80") == 0 && (s[i - 1] == '\xA8' || s[i - 1] == '\xA9');
}

// lstrip_blocks: spaces and tabs from a line start up to `{%`, `{#` (or `{-`).
Mapped LstripBlocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  for (size_t i = 0; i < s.size();) {
    if (IsLineStart(s, i)) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' && (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
        i = j;
      }
    }
    out.Keep(in, i++);
  }
  out.Finish(in);
  return out;
}

// trim_blocks: the first newline after `%}`, `#}` (or `-}`).
Mapped TrimBlocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  for (size_t i = 0; i < s.size(); ++i) {
    bool after_tag = i >= 2 && s[i - 1] == '}' && (s[i - 2] == '#' || s[i - 2] == '%' || s[i - 2] == '-');
    if (s[i] == '\n' && after_tag) continue;
    out.Keep(in, i);
  }
  out.Finish(in);
  return out;
}

// Matches `{%-? (end)?generation -?%}` at i; returns the end offset or 0.
size_t MatchGenerationTag(const std::string& s, size_t i, bool* lstrip, bool* rstrip) {
  if (s.compare(i, 2, "{%") != 0) return 0;
  size_t p = i + 2;
  *lstrip = p < s.size() && s[p] == '-';
  if (*lstrip) ++p;
  p = SkipSpaces(s, p);
  if (s.compare(p, 3, "end") == 0 && s.compare(p + 3, 10, "generation") == 0) p += 3;
  if (s.compare(p, 10, "generation") != 0) return 0;
  p = SkipSpaces(s, p + 10);
  *rstrip = p < s.size() && s[p] == '-';
  if (*rstrip) ++p;
  if (s.compare(p, 2, "%}") != 0) return 0;
  return p + 2;
}

// transformers' {% generation %} / {% endgeneration %} markers render as nothing.
Mapped RemoveGenerationTags(const Mapped& in) {
  if (in.text.find("generation") == std::string::npos) return in;
  Mapped out;
  const std::string& s = in.text;
  size_t kept_end = 0;  // output before this was produced by earlier matches; never re-stripped
  for (size_t i = 0; i < s.size();) {
    bool lstrip = false;
    bool rstrip = false;
    size_t end = s[i] == '{' ? MatchGenerationTag(s, i, &lstrip, &rstrip) : 0;
    if (end == 0) {
      out.Keep(in, i++);
      continue;
    }
    if (lstrip) {
      size_t length = TrimmedLength(out.text, kept_end);
      out.text.resize(length);
      out.origin.resize(length);
    }
    i = rstrip ? SkipSpaces(s, end) : end;
    kept_end = out.text.size();
  }
  out.Finish(in);
  return out;
}

}  // namespace

Mapped Preprocess(std::string_view source) {
  Mapped m;
  m.text.assign(source);
  m.origin.resize(source.size() + 1);
  for (size_t i = 0; i <= source.size(); ++i) m.origin[i] = i;
  if (!m.text.empty() && m.text.back() == '\n') {  // keep_trailing_newline=False
    m.text.pop_back();
    m.origin.pop_back();
  }
  return RemoveGenerationTags(TrimBlocks(LstripBlocks(m)));
}

}  // namespace surge::jinja
