// BoundedRegex: a regex from outside the process (an alarm selector's =~ and !~, from a rules
// file) compiled by PCRE2 with every cost bounded, so that no pattern can overflow a stack,
// overflow a counter or run for ever: the pattern's length and parenthesis nesting are
// capped when it compiles (`a{99999999999999999999}` and 50k nested '(' are errors there),
// each match's backtracking steps, nesting depth and heap when it runs. Use it rather than
// std::regex for any user pattern (std::regex recurses per character and per group).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace surge {

struct RegexLimits {
  size_t max_pattern_bytes = 4096;
  uint32_t max_paren_nesting = 64;
  uint32_t match_limit = 100'000;  // backtracking steps of one match
  uint32_t depth_limit = 1'000;    // nested backtracking points of one match
  uint32_t heap_limit_kib = 4096;  // the interpreter's backtracking memory of one match
};

class BoundedRegex {
 public:
  // `pattern` in PCRE2 syntax (close to RE2's, which PromQL uses), UTF-8, matched against
  // the whole text. INVALID_ARGUMENT naming what and where otherwise.
  static StatusOr<std::unique_ptr<BoundedRegex>> Compile(std::string_view pattern, const RegexLimits& limits = {});
  ~BoundedRegex();
  BoundedRegex(const BoundedRegex&) = delete;
  BoundedRegex& operator=(const BoundedRegex&) = delete;

  // Whether the whole of `text` (any bytes: invalid UTF-8 never matches a character)
  // matches; RESOURCE_EXHAUSTED when the match passed a limit. Thread-safe.
  StatusOr<bool> FullMatch(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  BoundedRegex(void* code, std::string pattern, const RegexLimits& limits)
      : code_(code), pattern_(std::move(pattern)), limits_(limits) {}

  void* code_;  // pcre2_code_8*
  std::string pattern_;
  RegexLimits limits_;
};

}  // namespace surge
