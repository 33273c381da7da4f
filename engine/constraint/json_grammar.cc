#include "engine/constraint/json_grammar.h"

#include <algorithm>
#include <string>

namespace surge {
namespace {

// The escape JSON writers use for `cp` (one of '"', '\\', U+0000..U+001F).
std::string ShortestEscape(char32_t cp) {
  switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("\\u00") + kHex[cp >> 4] + kHex[cp & 15];
}

}  // namespace

ExprId JsonGrammarBuilder::Ws() {
  if (whitespace_ == JsonWhitespace::kNone) return g_->Empty();
  return g_->Optional(g_->Byte(' '));
}

ExprId JsonGrammarBuilder::Colon() { return g_->Seq({g_->Byte(':'), Ws()}); }
ExprId JsonGrammarBuilder::Comma() { return g_->Seq({g_->Byte(','), Ws()}); }

ExprId JsonGrammarBuilder::StringChar() {
  if (string_char_ >= 0) return string_char_;
  Grammar& g = *g_;
  ByteSet hex;
  hex.AddRange('0', '9');
  hex.AddRange('a', 'f');
  hex.AddRange('A', 'F');
  hex_ = g.Bytes(hex);
  ExprId raw = Utf8Expr(g_, ComplementRanges({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}));
  ByteSet simple;
  for (char c : std::string("\"\\/bfnrt")) simple.Add(static_cast<uint8_t>(c));
  ByteSet d_or_D = ByteSet::Single('d');
  d_or_D.Add('D');
  ByteSet not_d = hex;  // hex digits other than d/D: the first digit of a non-surrogate
  ByteSet high, low, zero_to_seven;
  for (uint8_t c : {'8', '9', 'a', 'b', 'A', 'B'}) high.Add(c);
  for (uint8_t c : {'c', 'd', 'e', 'f', 'C', 'D', 'E', 'F'}) low.Add(c);
  zero_to_seven.AddRange('0', '7');
  ByteSet non_surrogate_lead;
  for (int b = 0; b < 256; ++b) {
    if (not_d.Contains(static_cast<uint8_t>(b)) && !d_or_D.Contains(static_cast<uint8_t>(b))) {
      non_surrogate_lead.Add(static_cast<uint8_t>(b));
    }
  }
  ExprId u = g.Byte('u');
  ExprId bmp = g.Alt({g.Seq({g.Bytes(non_surrogate_lead), hex_, hex_, hex_}),
                      g.Seq({g.Bytes(d_or_D), g.Bytes(zero_to_seven), hex_, hex_})});
  ExprId pair = g.Seq({g.Bytes(d_or_D), g.Bytes(high), hex_, hex_, g.Literal("\\u"),
                       g.Bytes(d_or_D), g.Bytes(low), hex_, hex_});
  ExprId escape = g.Seq({g.Byte('\\'), g.Alt({g.Bytes(simple), g.Seq({u, g.Alt({bmp, pair})})})});
  string_char_ = g.Alt({raw, escape});
  return string_char_;
}

ExprId JsonGrammarBuilder::String(int32_t min_chars, int32_t max_chars) {
  ExprId quote = g_->Byte('"');
  return g_->Seq({quote, g_->Repeat(StringChar(), min_chars, max_chars), quote});
}

ExprId JsonGrammarBuilder::Digits(int32_t min, int32_t max) {
  return g_->Repeat(g_->Bytes(ByteSet::Range('0', '9')), min, max);
}

ExprId JsonGrammarBuilder::Integer() {
  Grammar& g = *g_;
  ExprId magnitude = g.Alt({g.Byte('0'), g.Seq({g.Bytes(ByteSet::Range('1', '9')),
                                                 Digits(0, kMaxIntegerDigits - 1)})});
  return g.Seq({g.Optional(g.Byte('-')), magnitude});
}

ExprId JsonGrammarBuilder::NonNegativeNumber() {
  Grammar& g = *g_;
  ExprId magnitude = g.Alt({g.Byte('0'), g.Seq({g.Bytes(ByteSet::Range('1', '9')),
                                                 Digits(0, kMaxIntegerDigits - 1)})});
  ExprId fraction = g.Seq({g.Byte('.'), Digits(1, kMaxFractionDigits)});
  ByteSet e = ByteSet::Single('e');
  e.Add('E');
  ByteSet sign = ByteSet::Single('+');
  sign.Add('-');
  ExprId exponent = g.Seq({g.Bytes(e), g.Optional(g.Bytes(sign)), Digits(1, kMaxExponentDigits)});
  return g.Seq({magnitude, g.Optional(fraction), g.Optional(exponent)});
}

ExprId JsonGrammarBuilder::Number() {
  return g_->Seq({g_->Optional(g_->Byte('-')), NonNegativeNumber()});
}

ExprId JsonGrammarBuilder::Boolean() { return g_->Alt({g_->Literal("true"), g_->Literal("false")}); }
ExprId JsonGrammarBuilder::Null() { return g_->Literal("null"); }

ExprId JsonGrammarBuilder::EscapedChar(const CodePointRanges& ranges) {
  static constexpr std::pair<char32_t, char32_t> kSpecial[] = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  CodePointRanges plain;
  std::vector<ExprId> alts;
  for (auto [lo, hi] : ranges) {
    char32_t a = lo;
    for (auto [s, e] : kSpecial) {
      for (char32_t cp = std::max(s, lo); cp <= std::min(e, hi); ++cp) {
        alts.push_back(g_->Literal(ShortestEscape(cp)));
      }
      if (e < a) continue;
      if (s > hi) break;
      if (s > a) plain.push_back({a, s - 1});
      a = e + 1;
    }
    if (a <= hi) plain.push_back({a, hi});
  }
  if (!plain.empty()) alts.push_back(Utf8Expr(g_, NormalizeRanges(plain)));
  return g_->Alt(std::move(alts));
}

ExprId JsonGrammarBuilder::Members(ExprId value) {
  Grammar& g = *g_;
  ExprId member = g.Seq({String(), Colon(), value});
  return g.Seq({g.Byte('{'), g.SepRepeat(member, Comma(), 0, kUnbounded), g.Byte('}')});
}

ExprId JsonGrammarBuilder::Elements(ExprId value) {
  Grammar& g = *g_;
  return g.Seq({g.Byte('['), g.SepRepeat(value, Comma(), 0, kUnbounded), g.Byte(']')});
}

// value_n: scalars, plus containers of value_{n-1} while n > 0. Called rules, so that the
// levels share one automaton each instead of being copied at every use.
RuleId JsonGrammarBuilder::ValueRule(int32_t nesting) {
  auto it = value_rules_.find(nesting);
  if (it != value_rules_.end()) return it->second;
  Grammar& g = *g_;
  RuleId rule = g.AddRule("json_value_" + std::to_string(nesting), /*call=*/true);
  value_rules_[nesting] = rule;
  std::vector<ExprId> alts = {String(), Number(), Boolean(), Null()};
  if (nesting > 0) {
    ExprId inner = g.Ref(ValueRule(nesting - 1));
    alts.push_back(Members(inner));
    alts.push_back(Elements(inner));
  }
  g.SetBody(rule, g.Alt(std::move(alts)));
  return rule;
}

ExprId JsonGrammarBuilder::AnyValue(int32_t nesting) { return g_->Ref(ValueRule(nesting)); }

ExprId JsonGrammarBuilder::AnyObject(int32_t nesting) {
  return Members(AnyValue(nesting - 1));
}

}  // namespace surge
