#include "tokenizer/jinja/lexer.h"

#include <algorithm>
#include <cstdint>

#include "tokenizer/jinja/preprocess.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

struct Operator {
  std::string_view text;
  TokenKind kind;
};

// Order matters: longer operators before their prefixes.
constexpr Operator kOperators[] = {
    {"{%", TokenKind::kOpenStatement}, {"%}", TokenKind::kCloseStatement},
    {"{{", TokenKind::kOpenExpression}, {"}}", TokenKind::kCloseExpression},
    {"(", TokenKind::kOpenParen},      {")", TokenKind::kCloseParen},
    {"{", TokenKind::kOpenBrace},      {"}", TokenKind::kCloseBrace},
    {"[", TokenKind::kOpenBracket},    {"]", TokenKind::kCloseBracket},
    {",", TokenKind::kComma},          {".", TokenKind::kDot},
    {":", TokenKind::kColon},          {"|", TokenKind::kPipe},
    {"<=", TokenKind::kComparison},    {">=", TokenKind::kComparison},
    {"==", TokenKind::kComparison},    {"!=", TokenKind::kComparison},
    {"<", TokenKind::kComparison},     {">", TokenKind::kComparison},
    {"+", TokenKind::kAdditive},       {"-", TokenKind::kAdditive},
    {"~", TokenKind::kAdditive},       {"**", TokenKind::kPower},
    {"*", TokenKind::kMultiplicative}, {"//", TokenKind::kMultiplicative},
    {"/", TokenKind::kMultiplicative}, {"%", TokenKind::kMultiplicative},
    {"=", TokenKind::kEquals},
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string_view source, Mapped mapped) : source_(source), m_(std::move(mapped)), s_(m_.text) {}

  StatusOr<std::vector<Token>> Run() {
    while (pos_ < s_.size()) {
      if (AcceptsText() && LexText()) continue;
      if (At("{#")) {
        RETURN_IF_ERROR(LexComment());
      } else if (At("{%-") || At("{{-")) {
        StripTrailingWhitespace();
        bool statement = s_[pos_ + 1] == '%';
        Push(statement ? TokenKind::kOpenStatement : TokenKind::kOpenExpression, s_.substr(pos_, 2), pos_);
        pos_ += 3;
        curly_depth_ = 0;
        if (statement) RETURN_IF_ERROR(MaybeLexRaw());
      } else {
        RETURN_IF_ERROR(LexInsideTag());
      }
    }
    return std::move(tokens_);
  }

 private:
  Status Error(size_t pos, const std::string& message) const {
    size_t offset = m_.origin[std::min(pos, m_.origin.size() - 1)];
    return InvalidArgumentError("template syntax error at " + DescribePosition(source_, offset) + ": " +
                                message);
  }
  void Push(TokenKind kind, std::string_view value, size_t pos) {
    tokens_.push_back(Token{kind, std::string(value), m_.origin[pos]});
  }
  bool At(std::string_view literal) const { return s_.compare(pos_, literal.size(), literal) == 0; }
  bool AtTagStart(size_t p) const {
    return s_[p] == '{' && p + 1 < s_.size() && (s_[p + 1] == '%' || s_[p + 1] == '{' || s_[p + 1] == '#');
  }
  bool AcceptsText() const {
    if (tokens_.empty()) return true;
    TokenKind last = tokens_.back().kind;
    return last == TokenKind::kCloseStatement || last == TokenKind::kCloseExpression ||
           last == TokenKind::kComment || last == TokenKind::kText;
  }

  bool LexText() {
    size_t start = pos_;
    while (pos_ < s_.size() && !AtTagStart(pos_)) ++pos_;
    if (pos_ == start) return false;
    Push(TokenKind::kText, std::string_view(s_).substr(start, pos_ - start), start);
    return true;
  }

  // `{%-`, `{{-`, `{#-`: drop whitespace at the end of the text before the tag.
  void StripTrailingWhitespace() {
    if (tokens_.empty() || tokens_.back().kind != TokenKind::kText) return;
    std::string& value = tokens_.back().value;
    value.resize(TrimmedLength(value, 0));
    if (value.empty()) tokens_.pop_back();
  }
  void SkipLeadingWhitespace() { pos_ = SkipSpaces(s_, pos_); }

  Status LexComment() {
    size_t start = pos_;
    pos_ += 2;
    bool strip_before = pos_ < s_.size() && s_[pos_] == '-';
    if (strip_before) ++pos_;
    size_t end = s_.find("#}", pos_);
    if (end == std::string::npos) return Error(start, "missing end of comment tag '#}'");
    bool strip_after = end > pos_ && s_[end - 1] == '-';
    if (strip_before) StripTrailingWhitespace();
    Push(TokenKind::kComment, "", start);
    pos_ = end + 2;
    if (strip_after) SkipLeadingWhitespace();
    return OkStatus();
  }

  // {% raw %}...{% endraw %}: the body is text, not template.
  Status MaybeLexRaw() {
    size_t p = SkipSpaces(s_, pos_);
    if (s_.compare(p, 3, "raw") != 0 || (p + 3 < s_.size() && IsWordChar(s_[p + 3]))) return OkStatus();
    p = SkipSpaces(s_, p + 3);
    bool strip_inner_start = p < s_.size() && s_[p] == '-';
    if (strip_inner_start) ++p;
    if (s_.compare(p, 2, "%}") != 0) return OkStatus();
    size_t body = p + 2;
    for (size_t search = body;;) {
      size_t open = s_.find("{%", search);
      if (open == std::string::npos) return Error(pos_, "unclosed 'raw' block: missing {% endraw %}");
      size_t q = open + 2;
      bool strip_before = q < s_.size() && s_[q] == '-';
      if (strip_before) ++q;
      q = SkipSpaces(s_, q);
      if (s_.compare(q, 6, "endraw") == 0) {
        q = SkipSpaces(s_, q + 6);
        bool strip_after = q < s_.size() && s_[q] == '-';
        if (strip_after) ++q;
        if (s_.compare(q, 2, "%}") == 0) {
          tokens_.pop_back();  // the {% of {% raw %}
          size_t begin = strip_inner_start ? SkipSpaces(s_, body) : body;
          std::string_view content = std::string_view(s_).substr(begin, open - std::min(begin, open));
          if (strip_before) content = content.substr(0, TrimmedLength(content, 0));
          if (!content.empty()) Push(TokenKind::kText, content, begin);
          pos_ = q + 2;
          if (strip_after) SkipLeadingWhitespace();
          return OkStatus();
        }
      }
      search = open + 2;
    }
  }

  Status LexInsideTag() {
    SkipLeadingWhitespace();
    if (pos_ >= s_.size()) return OkStatus();
    if (At("-%}") || At("-}}")) {
      Push(s_[pos_ + 1] == '%' ? TokenKind::kCloseStatement : TokenKind::kCloseExpression,
           std::string_view(s_).substr(pos_ + 1, 2), pos_);
      pos_ += 3;
      SkipLeadingWhitespace();
      return OkStatus();
    }
    char c = s_[pos_];
    if ((c == '-' || c == '+') && UnaryPosition()) return LexUnary();
    for (const Operator& op : kOperators) {
      if (op.kind == TokenKind::kCloseExpression && curly_depth_ > 0) continue;  // `}}` closing a dict
      if (!At(op.text)) continue;
      Push(op.kind, op.text, pos_);
      pos_ += op.text.size();
      if (op.kind == TokenKind::kOpenExpression) curly_depth_ = 0;
      if (op.kind == TokenKind::kOpenBrace) ++curly_depth_;
      if (op.kind == TokenKind::kCloseBrace) --curly_depth_;
      if (op.kind == TokenKind::kOpenStatement) return MaybeLexRaw();
      return OkStatus();
    }
    if (c == '\'' || c == '"') return LexString(c);
    if (IsDigit(c)) {
      size_t start = pos_;
      Push(TokenKind::kNumber, ReadNumber(), start);
      return OkStatus();
    }
    if (IsWordChar(c)) {
      size_t start = pos_;
      while (pos_ < s_.size() && IsWordChar(s_[pos_])) ++pos_;
      Push(TokenKind::kIdentifier, std::string_view(s_).substr(start, pos_ - start), start);
      return OkStatus();
    }
    size_t next = pos_;
    std::string shown;
    text::AppendUtf8(&shown, text::NextCodePoint(s_, &next));
    return Error(pos_, "unexpected character '" + shown + "'");
  }

  // A sign is unary unless it follows something that ends an operand: `a - 1`, `(x) - 1`.
  bool UnaryPosition() const {
    if (tokens_.empty()) return true;
    switch (tokens_.back().kind) {
      case TokenKind::kIdentifier:
      case TokenKind::kNumber:
      case TokenKind::kString:
      case TokenKind::kCloseParen:
      case TokenKind::kCloseBracket: return false;
      default: return true;
    }
  }

  Status LexUnary() {
    size_t start = pos_;
    char sign = s_[pos_++];
    if (tokens_.empty() || tokens_.back().kind == TokenKind::kText) {
      return Error(start, std::string("unexpected character '") + sign + "'");
    }
    if (pos_ < s_.size() && IsDigit(s_[pos_])) {
      Push(TokenKind::kNumber, std::string(1, sign) + ReadNumber(), start);
    } else {
      Push(TokenKind::kUnary, std::string(1, sign), start);
    }
    return OkStatus();
  }

  std::string ReadNumber() {
    size_t start = pos_;
    while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    bool after_dot = !tokens_.empty() && tokens_.back().kind == TokenKind::kDot;  // `x.0.1`
    if (!after_dot && pos_ + 1 < s_.size() && s_[pos_] == '.' && IsDigit(s_[pos_ + 1])) {
      ++pos_;
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    // An exponent, as Jinja (not @huggingface/jinja) reads it: 1e20, 2.5E-3.
    if (!after_dot && pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && IsDigit(s_[p])) {
        pos_ = p;
        while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
      }
    }
    return s_.substr(start, pos_ - start);
  }

  Status LexString(char quote) {
    size_t start = pos_++;
    std::string value;
    while (true) {
      if (pos_ >= s_.size()) return Error(start, "unterminated string literal");
      char c = s_[pos_];
      if (c == quote) break;
      if (c == '\\') {
        RETURN_IF_ERROR(ReadEscape(&value));
        continue;
      }
      value.push_back(c);
      ++pos_;
    }
    ++pos_;
    Push(TokenKind::kString, value, start);
    return OkStatus();
  }

  // Python string-literal escapes; an unknown escape keeps its backslash, as Python does.
  Status ReadEscape(std::string* value) {
    size_t start = pos_++;
    if (pos_ >= s_.size()) return Error(start, "unterminated string literal");
    char e = s_[pos_++];
    switch (e) {
      case 'n': value->push_back('\n'); return OkStatus();
      case 't': value->push_back('\t'); return OkStatus();
      case 'r': value->push_back('\r'); return OkStatus();
      case 'b': value->push_back('\b'); return OkStatus();
      case 'f': value->push_back('\f'); return OkStatus();
      case 'v': value->push_back('\v'); return OkStatus();
      case 'a': value->push_back('\a'); return OkStatus();
      case '0': value->push_back('\0'); return OkStatus();
      case '\'': case '"': case '\\': value->push_back(e); return OkStatus();
      case '\n': return OkStatus();  // line continuation
      case 'x': case 'u': case 'U': return ReadHexEscape(e, start, value);
      default:
        value->push_back('\\');
        value->push_back(e);
        return OkStatus();
    }
  }

  Status ReadHexEscape(char kind, size_t start, std::string* value) {
    size_t digits = kind == 'x' ? 2 : (kind == 'u' ? 4 : 8);
    char32_t cp = 0;
    for (size_t i = 0; i < digits; ++i) {
      int h = pos_ < s_.size() ? HexValue(s_[pos_]) : -1;
      if (h < 0) return Error(start, std::string("invalid \\") + kind + " escape in string literal");
      cp = cp * 16 + static_cast<char32_t>(h);
      ++pos_;
    }
    // A UTF-16 surrogate pair written as two \u escapes becomes one code point.
    if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
      char32_t low = 0;
      bool ok = pos_ + 6 <= s_.size();
      for (size_t i = 2; ok && i < 6; ++i) {
        int h = HexValue(s_[pos_ + i]);
        ok = h >= 0;
        low = low * 16 + static_cast<char32_t>(h);
      }
      if (ok && low >= 0xDC00 && low < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        pos_ += 6;
      }
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) cp = 0xFFFD;
    text::AppendUtf8(value, cp);
    return OkStatus();
  }

  std::string_view source_;
  Mapped m_;
  const std::string& s_;
  size_t pos_ = 0;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

StatusOr<std::vector<Token>> Tokenize(std::string_view source) {
  return Lexer(source, Preprocess(source)).Run();
}

std::string DescribePosition(std::string_view source, size_t offset) {
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

}  // namespace surge::jinja
