// Regex: the patterns of tokenizer.json (Oniguruma syntax, as the Rust `tokenizers` crate
// reads them), translated to PCRE2 and compiled with UTF, UCP and JIT.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace surge {

// [begin, end) byte offsets of one match.
using MatchSpan = std::pair<size_t, size_t>;

// Rewrites an Oniguruma pattern into PCRE2 syntax with the same character semantics as
// tokenizers.js's Oniguruma translation: \s = \p{White_Space}, \d = \p{Nd},
// \w = Alphabetic|M|Nd|Pc (+ ²³¹¼½¾ outside classes), \h = hex digit, `.` excludes only
// \n, ^/$ are line anchors on \n only, (?i:...) folds ASCII letters only (so `s` never
// matches U+017F), `{,n}` means `{0,n}`, `X{n}+` is a stacked quantifier, nested classes
// are unions and `&&` intersections. Possessive quantifiers and atomic groups keep their
// Oniguruma meaning (tokenizers.js, unable to express them, treats them as plain ones).
StatusOr<std::string> TranslateOnigurumaToPcre2(std::string_view pattern);

class Regex {
 public:
  // `pattern` in Oniguruma syntax (see TranslateOnigurumaToPcre2).
  static StatusOr<std::unique_ptr<Regex>> FromOniguruma(std::string_view pattern);
  // `pattern` already in PCRE2 syntax.
  static StatusOr<std::unique_ptr<Regex>> FromPcre2(std::string_view pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // All matches in `text` (valid UTF-8), left to right, as JavaScript's matchAll with the
  // `gu` flags finds them: after an empty match the search resumes one code point later.
  // Empty matches are included. Thread-safe.
  void FindAll(std::string_view text, std::vector<MatchSpan>* matches) const;
  // True when the whole of `text` matches.
  bool FullMatch(std::string_view text) const;

 private:
  explicit Regex(void* code) : code_(code) {}
  // Returns false when there is no match at or after `start`.
  bool Find(std::string_view text, size_t start, MatchSpan* match) const;

  void* code_;  // pcre2_code_8*
};

// A tokenizer.json pattern: {"String": "..."} (a literal) or {"Regex": "..."}.
class Pattern {
 public:
  static Pattern Literal(std::string text) { return Pattern(std::move(text), nullptr); }
  static Pattern FromRegex(std::unique_ptr<Regex> regex) { return Pattern("", std::move(regex)); }

  // Non-overlapping matches, left to right. An empty literal matches nothing.
  void FindAll(std::string_view text, std::vector<MatchSpan>* matches) const;
  // Replaces every match with `content` (taken literally).
  std::string ReplaceAll(std::string_view text, std::string_view content) const;

 private:
  Pattern(std::string literal, std::unique_ptr<Regex> regex)
      : literal_(std::move(literal)), regex_(std::move(regex)) {}

  std::string literal_;
  std::unique_ptr<Regex> regex_;  // null for a literal
};

}  // namespace surge
