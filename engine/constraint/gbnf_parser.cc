#include "engine/constraint/gbnf_parser.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "base/utf8.h"
#include "engine/constraint/utf8_ranges.h"

namespace surge {
namespace {

constexpr int32_t kMaxNesting = 64;

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

class GbnfParser {
 public:
  GbnfParser(std::string_view text, const ConstraintLimits& limits) : text_(text), limits_(limits) {}

  StatusOr<Grammar> Parse() {
    if (static_cast<int32_t>(text_.size()) > limits_.max_text_bytes) {
      return InvalidArgumentError("gbnf: longer than " + std::to_string(limits_.max_text_bytes) + " bytes");
    }
    if (!IsValidUtf8(text_)) return InvalidArgumentError("gbnf: not valid UTF-8");
    SkipSpace(true);
    while (ok() && pos_ < text_.size()) {
      ParseRule();
      SkipSpace(true);
    }
    if (!ok()) return error_;
    for (const auto& [name, info] : rules_) {
      if (!info.defined) return ErrorAt(info.first_use, "undefined rule '" + name + "'");
    }
    auto root = rules_.find("root");
    if (root == rules_.end()) return InvalidArgumentError("gbnf: missing rule 'root'");
    g_.set_root(root->second.id);
    return std::move(g_);
  }

 private:
  struct RuleInfo {
    RuleId id = -1;
    bool defined = false;
    size_t first_use = 0;
  };

  bool ok() const { return error_.ok(); }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  Status ErrorAt(size_t at, const std::string& what) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') { ++line; column = 1; } else { ++column; }
    }
    return InvalidArgumentError("gbnf: line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " + what);
  }
  ExprId Fail(const std::string& what) {
    if (ok()) error_ = ErrorAt(pos_, what);
    return -1;
  }

  // Spaces, tabs and comments; newlines too when `newlines` (inside parentheses).
  void SkipSpace(bool newlines) {
    while (!AtEnd()) {
      char c = Peek();
      if (c == '#') {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines)) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string ParseName() {
    size_t start = pos_;
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  RuleInfo& Rule(const std::string& name, size_t at) {
    auto [it, inserted] = rules_.emplace(name, RuleInfo{});
    if (inserted) {
      it->second.id = g_.AddRule(name);
      it->second.first_use = at;
    }
    return it->second;
  }

  void ParseRule() {
    size_t start = pos_;
    std::string name = ParseName();
    if (name.empty()) { Fail("expected a rule name"); return; }
    RuleInfo& info = Rule(name, start);
    if (info.defined) { error_ = ErrorAt(start, "rule '" + name + "' is defined twice"); return; }
    info.defined = true;
    SkipSpace(false);
    if (text_.substr(pos_, 3) != "::=") { Fail("expected '::=' after the rule name"); return; }
    pos_ += 3;
    SkipSpace(true);
    ExprId body = ParseAlternation(0);
    if (!ok()) return;
    g_.SetBody(info.id, body);
    if (!AtEnd() && Peek() != '\n' && Peek() != '\r') Fail("expected the end of the line");
  }

  ExprId ParseAlternation(int32_t nesting) {
    std::vector<ExprId> alts = {ParseSequence(nesting)};
    while (ok() && Peek() == '|') {
      ++pos_;
      SkipSpace(true);
      alts.push_back(ParseSequence(nesting));
    }
    return g_.Alt(std::move(alts));
  }

  ExprId ParseSequence(int32_t nesting) {
    std::vector<ExprId> items;
    while (ok() && !AtEnd()) {
      char c = Peek();
      if (c == '|' || c == ')' || c == '\n' || c == '\r') break;
      ExprId item = ParseItem(nesting);
      if (!ok()) break;
      items.push_back(ParseQuantifiers(item));
      SkipSpace(nesting > 0);
    }
    return g_.Seq(std::move(items));
  }

  ExprId ParseItem(int32_t nesting) {
    char c = Peek();
    if (c == '"') return ParseLiteral();
    if (c == '[') return ParseClass();
    if (c == '.') { ++pos_; return Utf8Expr(&g_, ComplementRanges({})); }
    if (c == '(') {
      if (nesting >= kMaxNesting) return Fail("groups nested too deeply");
      ++pos_;
      SkipSpace(true);
      ExprId inner = ParseAlternation(nesting + 1);
      if (!ok()) return -1;
      if (Peek() != ')') return Fail("expected ')'");
      ++pos_;
      return inner;
    }
    if (IsNameChar(c)) {
      size_t start = pos_;
      std::string name = ParseName();
      SkipSpace(false);
      if (text_.substr(pos_, 3) == "::=") return Fail("expected the end of the line before rule '" + name + "'");
      pos_ = start + name.size();
      return g_.Ref(Rule(name, start).id);
    }
    return Fail(std::string("unexpected character '") + c + "'");
  }

  bool Hex(int count, char32_t* cp) {
    *cp = 0;
    for (int i = 0; i < count; ++i) {
      char c = Peek();
      if (!std::isxdigit(static_cast<unsigned char>(c))) return Fail("bad hex escape"), false;
      *cp = *cp * 16 + (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10));
      ++pos_;
    }
    return true;
  }

  // A character of a literal or class (escapes decoded); false on error.
  bool ParseChar(char32_t* cp) {
    if (Peek() != '\\') { *cp = NextCodePoint(text_, &pos_); return true; }
    ++pos_;
    char c = Peek();
    ++pos_;
    switch (c) {
      case 'n': *cp = '\n'; return true;
      case 'r': *cp = '\r'; return true;
      case 't': *cp = '\t'; return true;
      case '\\': case '"': case '[': case ']': case '-': case '^': *cp = c; return true;
      case 'x': return Hex(2, cp);
      case 'u': return Hex(4, cp);
      case 'U': return Hex(8, cp) && (*cp <= kMaxCodePoint || (Fail("code point out of range"), false));
      default: --pos_; return Fail(std::string("unknown escape '\\") + c + "'"), false;
    }
  }

  ExprId ParseLiteral() {
    ++pos_;
    std::string bytes;
    while (ok() && Peek() != '"') {
      if (AtEnd() || Peek() == '\n') return Fail("unterminated string literal");
      char32_t cp = 0;
      if (!ParseChar(&cp)) return -1;
      AppendUtf8(cp, &bytes);
    }
    ++pos_;
    return g_.Literal(bytes);
  }

  ExprId ParseClass() {
    ++pos_;
    bool negate = Peek() == '^';
    if (negate) ++pos_;
    CodePointRanges set;
    while (ok() && Peek() != ']') {
      if (AtEnd() || Peek() == '\n') return Fail("unterminated character class");
      char32_t lo = 0, hi = 0;
      if (!ParseChar(&lo)) return -1;
      hi = lo;
      if (Peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        if (AtEnd() || Peek() == '\n') return Fail("unterminated character class");
        if (!ParseChar(&hi)) return -1;
        if (hi < lo) return Fail("bad character range");
      }
      set.push_back({lo, hi});
    }
    ++pos_;
    set = NormalizeRanges(set);
    return Utf8Expr(&g_, negate ? ComplementRanges(set) : set);
  }

  ExprId ParseQuantifiers(ExprId item) {
    while (ok()) {
      char c = Peek();
      if (c == '*') { ++pos_; item = g_.Star(item); }
      else if (c == '+') { ++pos_; item = g_.Repeat(item, 1, kUnbounded); }
      else if (c == '?') { ++pos_; item = g_.Optional(item); }
      else if (c == '{') { item = ParseCounts(item); }
      else break;
    }
    return item;
  }

  ExprId ParseCounts(ExprId item) {
    ++pos_;
    auto number = [&](int64_t* v) {
      size_t start = pos_;
      *v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) *v = std::min<int64_t>(*v * 10 + (text_[pos_++] - '0'), int64_t{1} << 40);
      return pos_ > start;
    };
    int64_t min = 0, max = 0;
    SkipSpace(false);
    if (!number(&min)) return Fail("expected a number in '{}'");
    SkipSpace(false);
    max = min;
    if (Peek() == ',') {
      ++pos_;
      SkipSpace(false);
      if (!number(&max)) max = kUnbounded;
      SkipSpace(false);
    }
    if (Peek() != '}') return Fail("expected '}'");
    ++pos_;
    if (min > limits_.max_repeat || max > limits_.max_repeat) return Fail("repeat count above " + std::to_string(limits_.max_repeat));
    if (max != kUnbounded && max < min) return Fail("bad repeat range");
    return g_.Repeat(item, static_cast<int32_t>(min), static_cast<int32_t>(max));
  }

  std::string_view text_;
  const ConstraintLimits& limits_;
  size_t pos_ = 0;
  Grammar g_;
  std::map<std::string, RuleInfo> rules_;
  Status error_;
};

}  // namespace

StatusOr<Grammar> GbnfToGrammar(std::string_view text, const ConstraintLimits& limits) {
  return GbnfParser(text, limits).Parse();
}

}  // namespace surge
