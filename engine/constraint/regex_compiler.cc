#include "engine/constraint/regex_compiler.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "base/utf8.h"
#include "engine/constraint/utf8_ranges.h"

namespace surge {
namespace {

constexpr int32_t kMaxGroupDepth = 64;

class RegexParser {
 public:
  RegexParser(std::string_view pattern, const ConstraintLimits& limits, Grammar* g,
              JsonGrammarBuilder* json)
      : text_(pattern), limits_(limits), g_(g), json_(json) {}

  StatusOr<ExprId> Parse() {
    if (static_cast<int32_t>(text_.size()) > limits_.max_regex_bytes) {
      return InvalidArgumentError("regex: longer than " + std::to_string(limits_.max_regex_bytes) +
                                  " bytes");
    }
    if (!IsValidUtf8(text_)) return InvalidArgumentError("regex: not valid UTF-8");
    if (!text_.empty() && text_[0] == '^') pos_ = 1;
    size_t end = text_.size();
    if (end > pos_ && text_[end - 1] == '$' && !EscapedAt(end - 1)) text_ = text_.substr(0, end - 1);
    ExprId e = ParseAlternation(0);
    if (!error_.ok()) return error_;
    if (pos_ < text_.size()) return Fail("unmatched ')'");
    return e;
  }

 private:
  // True when the byte at `i` is preceded by an odd number of backslashes.
  bool EscapedAt(size_t i) const {
    size_t n = 0;
    while (i > n && text_[i - n - 1] == '\\') ++n;
    return n % 2 == 1;
  }

  Status Fail(const std::string& what) {
    if (error_.ok()) {
      error_ = InvalidArgumentError("regex: " + what + " at position " + std::to_string(pos_));
    }
    return error_;
  }
  ExprId Bad(const std::string& what) { (void)Fail(what); return -1; }
  bool BadBool(const std::string& what) { (void)Fail(what); return false; }
  bool AtEnd() const { return pos_ >= text_.size() || !error_.ok(); }
  char Peek() const { return text_[pos_]; }
  bool Consume(std::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  char32_t NextChar() { return NextCodePoint(text_, &pos_); }

  ExprId ParseAlternation(int32_t depth) {
    std::vector<ExprId> alts = {ParseSequence(depth)};
    while (!AtEnd() && Peek() == '|') {
      ++pos_;
      alts.push_back(ParseSequence(depth));
    }
    return g_->Alt(std::move(alts));
  }

  ExprId ParseSequence(int32_t depth) {
    std::vector<ExprId> items;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      ExprId atom = ParseAtom(depth);
      if (!error_.ok()) break;
      items.push_back(ParseQuantifiers(atom));
    }
    return g_->Seq(std::move(items));
  }

  ExprId ParseAtom(int32_t depth) {
    char c = Peek();
    if (c == '*' || c == '+' || c == '?') return Bad("nothing to repeat");
    if (c == '(') return ParseGroup(depth);
    if (c == '[') return ParseClass();
    if (c == '.') {
      ++pos_;
      return Chars(ComplementRanges({{'\n', '\n'}}));
    }
    if (c == '^' || c == '$') return Bad(std::string("anchor '") + c + "' inside the pattern is not supported");
    if (c == '\\') {
      CodePointRanges set;
      if (!ParseEscape(&set)) return -1;
      return Chars(set);
    }
    char32_t cp = NextChar();
    return Chars({{cp, cp}});
  }

  ExprId ParseGroup(int32_t depth) {
    if (depth >= kMaxGroupDepth) return Bad("groups nested too deeply");
    ++pos_;
    if (Consume("?")) {
      if (Consume(":")) {
      } else if (Consume("P<") || (text_.substr(pos_, 2) != "<=" && text_.substr(pos_, 2) != "<!" && Consume("<"))) {
        while (!AtEnd() && Peek() != '>') ++pos_;
        if (!Consume(">")) return Bad("unterminated group name");
      } else if (Consume("=") || Consume("!") || Consume("<=") || Consume("<!")) {
        return Bad("lookaround is not supported");
      } else {
        return Bad("group syntax '(?" + std::string(text_.substr(pos_, 1)) + "' is not supported");
      }
    }
    ExprId inner = ParseAlternation(depth + 1);
    if (!error_.ok()) return -1;
    if (!Consume(")")) return Bad("missing ')'");
    return inner;
  }

  // Returns false (with error_ set) on failure. Fills `set` with the escape's characters.
  bool ParseEscape(CodePointRanges* set) {
    ++pos_;  // the backslash
    if (AtEnd()) return BadBool("trailing backslash");
    char c = Peek();
    if (ClassEscape(c, set)) return ++pos_, true;
    if (c >= '1' && c <= '9') return BadBool("backreference '\\" + std::string(1, c) + "' is not supported");
    if (c == 'k') return BadBool("backreference '\\k' is not supported");
    if (c == 'b' || c == 'B') return BadBool("word boundary '\\" + std::string(1, c) + "' is not supported");
    if (c == 'A' || c == 'Z' || c == 'z' || c == 'G') return BadBool("anchor '\\" + std::string(1, c) + "' is not supported");
    if (c == 'p' || c == 'P') return BadBool("unicode property '\\" + std::string(1, c) + "' is not supported");
    char32_t cp = 0;
    if (!SimpleEscape(&cp)) return false;
    *set = {{cp, cp}};
    return true;
  }

  static bool ClassEscape(char c, CodePointRanges* set) {
    CodePointRanges digit = {{'0', '9'}};
    CodePointRanges word = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    CodePointRanges space = {{'\t', '\r'}, {' ', ' '}};
    switch (c) {
      case 'd': *set = digit; return true;
      case 'w': *set = word; return true;
      case 's': *set = space; return true;
      case 'D': *set = ComplementRanges(digit); return true;
      case 'W': *set = ComplementRanges(word); return true;
      case 'S': *set = ComplementRanges(space); return true;
      default: return false;
    }
  }

  bool Hex(size_t count, char32_t* cp) {
    *cp = 0;
    for (size_t i = 0; i < count; ++i) {
      if (AtEnd() || !std::isxdigit(static_cast<unsigned char>(Peek()))) return BadBool("bad hex escape");
      *cp = *cp * 16 + std::stoi(std::string(1, text_[pos_++]), nullptr, 16);
    }
    return true;
  }

  // One escaped character (pos_ at the character after the backslash).
  bool SimpleEscape(char32_t* cp) {
    char c = text_[pos_++];
    switch (c) {
      case 'n': *cp = '\n'; return true;
      case 't': *cp = '\t'; return true;
      case 'r': *cp = '\r'; return true;
      case 'f': *cp = '\f'; return true;
      case 'v': *cp = '\v'; return true;
      case '0': *cp = 0; return true;
      case 'x': return Hex(2, cp);
      case 'u':
        if (Consume("{")) {
          size_t start = pos_;
          while (!AtEnd() && std::isxdigit(static_cast<unsigned char>(Peek()))) ++pos_;
          size_t n = pos_ - start;
          pos_ = start;
          if (n == 0 || n > 6 || !Hex(n, cp) || !Consume("}")) return BadBool("bad \\u{...} escape");
          return *cp <= kMaxCodePoint || BadBool("code point out of range");
        }
        return Hex(4, cp);
      default:
        if (std::isalnum(static_cast<unsigned char>(c))) {
          --pos_;
          return BadBool("unknown escape '\\" + std::string(1, c) + "'");
        }
        --pos_;
        *cp = NextChar();
        return true;
    }
  }

  ExprId ParseClass() {
    ++pos_;  // '['
    if (Consume("[:")) return Bad("POSIX class is not supported");
    bool negate = Consume("^");
    CodePointRanges set;
    bool first = true;
    while (true) {
      if (AtEnd()) return Bad("missing ']'");
      if (Peek() == ']' && !first) break;
      first = false;
      CodePointRanges item;
      char32_t lo = 0;
      if (!ClassAtom(&item, &lo)) return -1;
      if (item.empty() && pos_ + 1 < text_.size() && Peek() == '-' && text_[pos_ + 1] != ']') {
        ++pos_;
        CodePointRanges hi_item;
        char32_t hi = 0;
        if (!ClassAtom(&hi_item, &hi)) return -1;
        if (!hi_item.empty() || hi < lo) return Bad("bad class range");
        set.push_back({lo, hi});
      } else if (item.empty()) {
        set.push_back({lo, lo});
      } else {
        set.insert(set.end(), item.begin(), item.end());
      }
    }
    ++pos_;  // ']'
    set = NormalizeRanges(set);
    return Chars(negate ? ComplementRanges(set) : set);
  }

  // A class escape (\d...) fills `set`; a single character is returned in `cp`.
  bool ClassAtom(CodePointRanges* set, char32_t* cp) {
    if (Peek() != '\\') {
      *cp = NextChar();
      return true;
    }
    ++pos_;
    if (AtEnd()) return BadBool("trailing backslash");
    if (ClassEscape(Peek(), set)) return ++pos_, true;
    if (Peek() == 'b') return ++pos_, *cp = '\b', true;
    if (Peek() == 'p' || Peek() == 'P') return BadBool("unicode property is not supported");
    return SimpleEscape(cp);
  }

  ExprId ParseQuantifiers(ExprId atom) {
    while (!AtEnd()) {
      int32_t min = 0, max = 0;
      size_t save = pos_;
      char c = Peek();
      if (c == '*') { ++pos_; min = 0; max = kUnbounded; }
      else if (c == '+') { ++pos_; min = 1; max = kUnbounded; }
      else if (c == '?') { ++pos_; min = 0; max = 1; }
      else if (c == '{' && ParseCounts(&min, &max)) {}
      else { pos_ = save; break; }
      if (!error_.ok()) return atom;
      if (!AtEnd() && Peek() == '+') return (void)Fail("possessive quantifier is not supported"), atom;
      Consume("?");  // lazy: the same set of whole matches
      atom = g_->Repeat(atom, min, max);
    }
    return atom;
  }

  // {m} {m,} {m,n}; false (pos_ unchanged) when '{' does not start one: a literal then.
  bool ParseCounts(int32_t* min, int32_t* max) {
    size_t save = pos_++;
    auto number = [&](int32_t* out) {
      size_t start = pos_;
      int64_t v = 0;
      while (!AtEnd() && std::isdigit(static_cast<unsigned char>(Peek()))) v = std::min<int64_t>(v * 10 + (text_[pos_++] - '0'), int64_t{1} << 40);
      *out = static_cast<int32_t>(std::min<int64_t>(v, limits_.max_repeat + 1));
      return pos_ > start;
    };
    if (!number(min)) return pos_ = save, false;
    *max = *min;
    if (Consume(",")) { if (!number(max)) *max = kUnbounded; }
    if (!Consume("}")) return pos_ = save, false;
    if (*min > limits_.max_repeat || *max > limits_.max_repeat) (void)Fail("repeat count above " + std::to_string(limits_.max_repeat));
    else if (*max != kUnbounded && *max < *min) (void)Fail("bad repeat range {m,n} with n < m");
    return true;
  }

  ExprId Chars(const CodePointRanges& set) {
    if (json_ != nullptr) return json_->EscapedChar(set);
    return Utf8Expr(g_, set);
  }

  std::string_view text_;
  const ConstraintLimits& limits_;
  Grammar* g_;
  JsonGrammarBuilder* json_;
  size_t pos_ = 0;
  Status error_;
};

}  // namespace

StatusOr<ExprId> CompileRegex(std::string_view pattern, const ConstraintLimits& limits,
                              Grammar* grammar, JsonGrammarBuilder* json) {
  return RegexParser(pattern, limits, grammar, json).Parse();
}

StatusOr<Grammar> RegexToGrammar(std::string_view pattern, const ConstraintLimits& limits) {
  Grammar grammar;
  ASSIGN_OR_RETURN(ExprId body, CompileRegex(pattern, limits, &grammar));
  RuleId root = grammar.AddRule("root");
  grammar.SetBody(root, body);
  grammar.set_root(root);
  return grammar;
}

}  // namespace surge
